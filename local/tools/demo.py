"""The flash-sale demo (``make demo``): the whole system on this machine, end to end.

Brings the stack up (``make up``) unless it is already, creates a coupon of 200 copies through
the API Gateway URL, lets 1,000 users send 2,000 requests (each clicks twice, the two clicks
from different clients at the same moment; a sell-out five times over) from 8 concurrent
clients that behave as the API asks (a 503 is retried after its Retry-After; a lost answer is
checked on the status route),
waits until the pipeline (Kafka, the worker, the DLQ handler) has drained; then two holders use
their copy, two cancel theirs, an operator tops up two copies, and ten late users take the four
free copies; it drains again, runs a reconcile and the relay, counts the coupon's events on
``coupon.events.v1``, and prints a report with invariants I1 to I5 each marked held or broken,
and what the sale's requests asked of Redis (round trips and commands per request, MONITOR's
count: the intake's memory of refusals answers most of a sale without a round trip), and its
arrival order (``coupon_client.fairness``, from the intake's lines in its log group), beside
two small openings' run on intake environments started cold and on warmed ones (``openings.py``).
Then it calls the same intake handler in-process against the same servers
(``local/tools/handler_probe.py``), to separate what a request costs the system from what the local
stand-ins (LocalStack's gateway and Lambda service, the host executor) add, and says where the
demo's wall time went. Exits 1 if any invariant broke. Stops what it started.

The default run takes about two and a half minutes here, the stack's start included; a large
sale is ``make demo DEMO_ARGS="--quantity 1000 --users 10000"`` (about twelve minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from sqlalchemy import Engine, text

from coupon_client.api_client import ApiClient
from coupon_client.fairness import Line, read_lines
from coupon_client.retry import Claim
from coupon_core.adapters.postgres.engine import engine_for_url
from local.stack import control as stack
from local.stack.processes import ServiceError
from local.testkit.intake_lines import sale_lines, span_since
from local.testkit.kafka_topics import read_all
from local.testkit.redis_monitor import Seen, issue_requests_load, monitored
from local.tools import openings
from local.tools.handler_probe import handler_latencies, percentiles_ms
from local.tools.invariants import (
    Observed,
    bad_input_changes_nothing,
    check,
    held_counts,
    observe,
    sent_through,
    stored_state,
    successes_of,
)
from local.tools.sale_report import Convergence, Observation, SaleTimeline, conclude, fairness_rows
from lua_redis.client import connect

DRAIN_TIMEOUT_S = 300
LATE_USERS = 10
PROBE_REQUESTS = 400  # half of them SUCCESS: the probe's coupon has half as many copies


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quantity", type=int, default=200)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (an even number)")
    return parser.parse_args(argv)


class DemoSale:
    """Every user clicks twice: clients 2k and 2k+1 walk the same users in the same order."""

    def __init__(self, api: ApiClient, coupon_id: int, users: int, clients: int) -> None:
        self.api, self.coupon_id, self.users, self.clients = api, coupon_id, users, clients
        self.answers: list[tuple[int, Claim]] = []
        self.observations: list[Observation] = []  # each answer, when it came (for the report's charts)
        self.began_ms = 0  # when the sale began (epoch ms)
        self.done = 0
        self.started = time.perf_counter()
        self._lock = threading.Lock()

    def run(self, on_tick: Callable[[], object]) -> float:
        """The sale, calling ``on_tick`` about twice a second while it runs (the convergence
        chart's samples: Redis ahead of PostgreSQL during the sale)."""
        lanes = self.clients // 2
        threads = [threading.Thread(target=self._client, args=(index % lanes, lanes)) for index in range(self.clients)]
        self.started, self.began_ms = time.perf_counter(), time.time_ns() // 1_000_000
        for thread in threads:
            thread.start()
        total = self.users * 2
        while any(thread.is_alive() for thread in threads):
            self._progress(total, self.started)
            on_tick()
            time.sleep(0.5)
        self._progress(total, self.started)
        print(file=sys.stderr)
        return time.perf_counter() - self.started

    def _client(self, lane: int, lanes: int) -> None:
        mine, seen = [], []
        for user in range(1 + lane, self.users + 1, lanes):
            answer = self.api.request_coupon(self.coupon_id, user)
            mine.append((user, answer))
            seen.append(Observation(time.perf_counter() - self.started, answer.status, answer.seconds * 1000))
            with self._lock:
                self.done += 1
        with self._lock:
            self.answers.extend(mine)
            self.observations.extend(seen)

    def _progress(self, total: int, started: float) -> None:
        filled = int(30 * self.done / total)
        rate = self.done / max(time.perf_counter() - started, 1e-9)
        print(f"\r  [{'#' * filled}{'.' * (30 - filled)}] {self.done:,}/{total:,} requests, {rate:,.0f}/s",
              end="", file=sys.stderr, flush=True)  # fmt: skip


def wait_for_drain(
    engine: Engine,
    sqs: Any,
    dlq_url: str,
    coupon_id: int,
    successes: int,
    *,
    on_poll: Callable[[], None] = lambda: None,
) -> float:
    """Until every SUCCESS is an issue or a recorded failure and the DLQ is empty; ``on_poll``
    runs at every look (the report samples the stores then)."""
    started = time.monotonic()
    while time.monotonic() - started < DRAIN_TIMEOUT_S:
        on_poll()
        with engine.connect() as connection:
            settled = connection.execute(
                text(
                    "SELECT (SELECT count(*) FROM coupon_issues WHERE coupon_id = :c)"
                    " + (SELECT count(*) FROM coupon_issue_failures WHERE coupon_id = :c)"
                ),
                {"c": coupon_id},
            ).scalar_one()
        attributes = sqs.get_queue_attributes(
            QueueUrl=dlq_url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        waiting = sum(int(value) for value in attributes.values())
        if settled >= successes and waiting == 0:
            return time.monotonic() - started
        time.sleep(1)
    raise TimeoutError(f"the pipeline did not drain in {DRAIN_TIMEOUT_S} s")


def after_the_sale(api: ApiClient, coupon_id: int, observed: Observed, users: int) -> tuple[dict[str, int], Counter]:
    """Two holders use their copy, two cancel theirs, an operator tops up two copies, and late
    users (who never clicked) take what is free again: the SUCCESS answers of the late users,
    and every answer counted."""
    holders = sorted(observed.issued_users)[:4]
    answers: Counter = Counter()
    for user in holders[:2]:
        answers[f"use: {api.request('POST', f'/coupons/{coupon_id}/issues/{user}/use').status}"] += 1
    for user in holders[2:]:
        answers[f"cancel: {api.request('POST', f'/coupons/{coupon_id}/issues/{user}/cancel').status}"] += 1
    answers[f"top-up: {api.request('POST', f'/coupons/{coupon_id}/top-up', {'copies': 2}).status}"] += 1
    late = [(user, api.request_coupon(coupon_id, user)) for user in range(users + 1, users + 1 + LATE_USERS)]
    answers.update(f"late user: {answer.status}" for _, answer in late)
    return successes_of(late), answers


def wait_for_relay(engine: Engine, coupon_id: int) -> None:
    """Until the coupon has no unpublished event (the relay runs one at a time: ours, or the schedule's)."""
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            waiting = connection.execute(
                text("SELECT count(*) FROM outbox WHERE coupon_id = :c AND published_at IS NULL"), {"c": coupon_id}
            ).scalar_one()
        if not waiting:
            return
        time.sleep(1)
    raise TimeoutError(f"the relay did not publish coupon {coupon_id}'s events in {DRAIN_TIMEOUT_S} s")


def event_counts(bootstrap_servers: str, coupon_id: int) -> Counter:
    """The coupon's events on the event stream, by type."""
    key = str(coupon_id).encode()
    return Counter(
        json.loads(record.value)["type"]
        for record in read_all(bootstrap_servers, stack.EVENTS_TOPIC)
        if record.key == key
    )


class Phases:
    """Wall time per phase of the demo, printed at the end; the installs ``make demo`` ran first
    are the first phase (``DEMO_STARTED``, the epoch seconds when make began them)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._started = time.monotonic()
        began = os.environ.get("DEMO_STARTED")
        if began:
            self.seconds["installs (make venv, npm)"] = max(time.time() - float(began), 0.0)

    def done(self, name: str) -> None:
        now = time.monotonic()
        self.seconds[name] = now - self._started
        self._started = now

    def report(self) -> None:
        total = sum(self.seconds.values())
        print(f"\nWall time: {total:.0f} s")
        for name, seconds in self.seconds.items():
            print(f"  {name:<38} {seconds:>6.1f} s")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    phases = Phases()
    started_here = not stack.is_up()
    try:
        env = stack.up()
    except ServiceError as exc:
        print(f"make demo: the local stack did not start, so no sale ran.\n{exc}", file=sys.stderr)
        return 1
    phases.done("stack up" if started_here else "stack (already up)")
    try:
        return run(args, env, phases)
    finally:
        if started_here:
            stack.down()
            phases.done("stack down")
        phases.report()


def run(args: argparse.Namespace, env: dict[str, str], phases: Phases) -> int:
    aws = {"endpoint_url": env["AWS_ENDPOINT_URL"], "region_name": "us-east-1",
           "aws_access_key_id": "test", "aws_secret_access_key": "test"}  # fmt: skip
    api = ApiClient(env["API_URL"], connections=args.clients)
    engine = engine_for_url(env["DATABASE_URL"])
    client = connect(env["REDIS_URL"])
    now = datetime.now(UTC)
    window = {
        "issueStartsAt": (now - timedelta(minutes=1)).isoformat(),
        "issueEndsAt": (now + timedelta(hours=1)).isoformat(),
    }
    created = api.request("POST", "/coupons", {"name": "flash sale", "totalQuantity": args.quantity, **window})
    coupon_id = int(created.body["couponId"])
    print(f"Coupon {coupon_id}: {args.quantity:,} copies; {args.users:,} users click twice, {args.clients} clients")

    sale = DemoSale(api, coupon_id, args.users, args.clients)
    sample = Convergence(lambda: held_counts(engine, client, coupon_id), lambda: time.perf_counter() - sale.started)
    ran: list[float] = []
    seen = monitored(client, lambda: ran.append(sale.run(on_tick=sample)))
    elapsed = ran[0]
    phases.done("the sale, through API Gateway")
    outcomes = Counter(answer.status for _, answer in sale.answers)
    successes = successes_of(sale.answers)
    latencies = [answer.seconds for _, answer in sale.answers]
    sqs, lambda_ = boto3.client("sqs", **aws), boto3.client("lambda", **aws)
    drained = wait_for_drain(engine, sqs, env["DLQ_URL"], coupon_id, len(successes), on_poll=sample)
    sample()
    phases.done("pipeline drain")
    late, lifecycle = after_the_sale(api, coupon_id, observe(engine, client, coupon_id), args.users)
    successes |= late
    wait_for_drain(engine, sqs, env["DLQ_URL"], coupon_id, len(successes), on_poll=sample)
    reconcile = lambda_.invoke(
        FunctionName=env["REBUILD_FUNCTION"], Payload=json.dumps({"couponId": coupon_id}).encode()
    )
    reconcile_report = json.loads(reconcile["Payload"].read())
    lambda_.invoke(FunctionName=env["RELAY_FUNCTION"], Payload=b"{}")  # the schedule's run, now
    wait_for_relay(engine, coupon_id)
    events = event_counts(env["KAFKA_BOOTSTRAP_SERVERS"], coupon_id)
    sample()
    observed = observe(engine, client, coupon_id)
    invariants = check(observed, successes)
    invariants["I5 bad input: 4xx with a JSON error, and no change anywhere"] = bad_input_changes_nothing(
        sent_through(api), lambda: stored_state(engine, client, coupon_id), coupon_id, settle_s=2
    )
    changes = {"COUPON_ISSUED": len(observed.issued_requests), "COUPON_USED": lifecycle["use: USED"],
               "COUPON_CANCELED": lifecycle["cancel: CANCELED"]}  # fmt: skip
    invariants["Events: each change once on coupon.events.v1 " + str(changes)] = dict(events) == changes
    phases.done("after the sale, reconcile, relay, checks")
    sale_ms = percentiles_ms(latencies)
    local_costs = stand_in_costs(api, lambda_, env, sale_ms)
    phases.done("in-process handler probe")
    lines, order = arrival_rows(sale, LATE_USERS, boto3.client("logs", **aws), lambda_, env, phases=phases)

    summary = [
        redis_per_request(seen, coupon_id, len(latencies)),
        ("latency", f"p50 {sale_ms['p50']:.1f} ms, p95 {sale_ms['p95']:.1f} ms, p99 {sale_ms['p99']:.1f} ms"),
        ("pipeline drained", f"in {drained:.1f} s after the last request"),
        ("persisted", f"{len(observed.issued_users):,} issues; {len(observed.failed_requests):,} "
                      "recorded failures (dead letters), reservations released"),
        ("after the sale", ", ".join(f"{name} x{count}" for name, count in sorted(lifecycle.items()))),
        ("events", ", ".join(f"{name} {count:,}" for name, count in sorted(events.items())) + " on coupon.events.v1"),
        ("reconcile", str(reconcile_report.get("reconciled") or reconcile_report)),
        *order,
    ]  # fmt: skip
    print(f"\nFlash sale through API Gateway on LocalStack: {len(latencies):,} requests in {elapsed:.1f} s "
          f"= {len(latencies) / elapsed:,.0f} requests/s")  # fmt: skip
    for outcome, count in outcomes.most_common():
        print(f"  {outcome!s:<18} {count:>7,}")
    for label, value in summary:
        print(f"  {label:<18} {value}")
    print(local_costs)
    print(operator_commands(coupon_id, args.quantity, window))
    title = f"make demo: coupon {coupon_id}, {args.quantity:,} copies, {args.users:,} users"
    timeline = SaleTimeline(
        title,
        args.quantity,
        sale.observations,
        sample.samples,
        [
            ("requests", f"{len(latencies):,} in {elapsed:.1f} s, {len(latencies) / elapsed:,.0f}/s"),
            ("answers", ", ".join(f"{outcome} {count:,}" for outcome, count in outcomes.most_common())),
            *summary,
        ],
        invariants,
        lines,
    )
    return conclude(timeline, "demo")


def arrival_rows(
    sale: DemoSale, late_clicks: int, logs: Any, lambda_: Any, env: dict[str, str], *, phases: Phases
) -> tuple[list[Line], list[tuple[str, str]]]:
    """The sale's arrival order from its lines in the intake's log group (one per request its
    clicks and ``late_clicks`` more sent), and two openings' side by side, cold and warmed
    (``openings.py``): the lines and the report's rows."""
    group, requests = env["INTAKE_LOG_GROUP"], sum(claim.attempts for _, claim in sale.answers) + late_clicks
    span = span_since(sale.began_ms)
    lines = sale_lines(lambda: read_lines(logs, group, span), sale.coupon_id, requests)
    rows = fairness_rows(lines, f" in {group}") + openings.compare(env["API_URL"], lambda_, logs, env, sale.clients)
    phases.done("two openings, cold and warmed")
    return lines, rows


def redis_per_request(seen: list[Seen], coupon_id: int, requests: int) -> tuple[str, str]:
    """The report's line of what the sale's requests asked of Redis, as MONITOR saw it."""
    trips, commands = issue_requests_load(seen, coupon_id)
    return (
        "Redis per request",
        f"{trips / requests:.3f} round trips, {commands / requests:.2f} commands (reserve.lua's own calls "
        "counted; without the memory of refusals, every request is 1 round trip: docs/benchmarks.md)",
    )


def operator_commands(coupon_id: int, quantity: int, window: dict[str, str]) -> str:
    """What an operator types for what the demo did, with the ``coupons`` command
    (docs/operations.md, The coupons command): on the local stack while it is up, or on AWS with
    ``--env dev`` and their own profile."""
    commands = [
        "export COUPONS_ENV=local  # the stack make up runs: its endpoint and identity are in .local/stack.env",
        f'coupons create "flash sale" --copies {quantity} --starts {window["issueStartsAt"]} '
        f"--ends {window['issueEndsAt']} --yes",
        f"coupons watch {coupon_id}        # the sale live; c closes it, Ctrl-C leaves",
        f"coupons top-up {coupon_id} 2",
        f"coupons reconcile {coupon_id}",
        f"coupons export {coupon_id} --file coupon-{coupon_id}.csv",
        f"coupons close {coupon_id}",
    ]
    lines = ["\nThe same as an operator types it (make up first; on AWS: --env dev --profile YOURS):"]
    return "\n".join([*lines, *(f"  {command}" for command in commands)])


def stand_in_costs(api: ApiClient, lambda_: Any, env: dict[str, str], sale_ms: dict[str, float]) -> str:
    """The same handler in-process on a coupon of its own, beside the sale's end-to-end latency
    percentiles (``sale_ms``)."""
    now = datetime.now(UTC)
    window = {"issueStartsAt": now.isoformat(), "issueEndsAt": (now + timedelta(hours=1)).isoformat()}
    probe = api.request("POST", "/coupons", {"name": "handler probe", "totalQuantity": PROBE_REQUESTS // 2, **window})
    function = lambda_.get_function_configuration(FunctionName=env["INTAKE_FUNCTION"])
    users = range(2, PROBE_REQUESTS + 2)
    rows = {
        "end to end, through the local stand-ins": sale_ms,
        "the intake handler in-process, same servers": percentiles_ms(
            handler_latencies(function["Environment"]["Variables"], int(probe.body["couponId"]), users)
        ),
    }
    lines = [f"\n{'Where a request goes (ms)':<46}{'p50':>9}{'p95':>9}{'p99':>9}"]
    lines += [f"  {name:<44}" + "".join(f"{value:>9.1f}" for value in cuts.values()) for name, cuts in rows.items()]
    end_to_end, in_process = (cuts["p50"] for cuts in rows.values())
    lines.append(
        f"  LocalStack's gateway and Lambda service and the executor: {1 - in_process / end_to_end:.0%} of the median"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
