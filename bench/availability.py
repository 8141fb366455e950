"""Benchmark: many pages polling one sale's availability (``python -m bench.availability``).

Two parts, in one run, on the local stack (``make up``; started if it is down):

1. **Through the API** (LocalStack's API Gateway and the deployed coupons function, which caches
   nothing at the gateway: the pages poll the function itself, as if there were no edge):
   ``--pages`` threads poll ``GET /coupons/{id}/availability`` every ``--poll`` s while a claimer
   takes the coupon's ``--copies`` at a steady pace. Measured: Redis round trips and database
   transactions per availability answer (Valkey's command counts, PostgreSQL's transaction
   counts, over ``--quiet`` s of polling alone beside as long without pages: what the stack's
   scheduled functions do either way), the lag of the first answer that reads sold
   out behind the sell-out in Redis, and that no answer ever showed more copies than Redis held
   at its ``asOf`` (each SUCCESS's ``reservedAt`` says when Redis took its copy).
2. **The container's read, side by side** (in this process, on the same Valkey): the availability
   service as deployed (a read a second per coupon) against one without it (``ms=0``: a read per
   request), asked as fast as one thread can, as a Lambda container answers one request at a
   time: Redis reads per answer. Then the coupons function's handler itself, in this process on
   the stack's stores, new containers and warm ones: the SQL statements it sends (SQLAlchemy's
   events; PostgreSQL's transaction counts in the first part include the stack's scheduled
   functions, and its statistics lag).
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from sqlalchemy import Engine, event, text

from coupon_client.api_client import ApiClient
from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.domain.availability import AVAILABILITY_MS, AvailabilityService
from local.stack import control as stack
from lua_redis.availability import RedisSaleReader
from lua_redis.client import connect

SCRIPT_COMMANDS = ("evalsha", "time", "hmget", "zscore", "zcard")  # one availability read


def millis(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def redis_calls(client: redis.Redis) -> dict[str, int]:
    return {name.removeprefix("cmdstat_"): int(stat["calls"]) for name, stat in client.info("commandstats").items()}


def transactions(engine: Any) -> int:
    with engine.connect() as connection:
        query = "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
        return int(connection.execute(text(query)).scalar_one())


@dataclass
class Polls:
    """Every answer the pages read: (when it arrived, epoch ms) and its body."""

    answers: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def poll(self, api: ApiClient, coupon: int, every_s: float, stop: threading.Event) -> None:
        while not stop.is_set():
            reply = api.request("GET", f"/coupons/{coupon}/availability")
            if reply.status_code == 200 and isinstance(reply.body, dict):
                with self.lock:
                    self.answers.append((time.time_ns() // 1_000_000, reply.body))
            stop.wait(every_s)


def polled(pages: int, work: Callable[[threading.Event], None]) -> tuple[threading.Event, list[threading.Thread]]:
    stop = threading.Event()
    threads = [threading.Thread(target=work, args=(stop,), daemon=True) for _ in range(pages)]
    for thread in threads:
        thread.start()
    return stop, threads


def _window(valkey: redis.Redis, engine: Any, seconds: float) -> tuple[int, int, int]:
    """EVALSHA calls, Redis commands and PostgreSQL transactions over ``seconds``."""
    before_redis, before_db = redis_calls(valkey), transactions(engine)
    time.sleep(seconds)
    after_redis, after_db = redis_calls(valkey), transactions(engine)
    evalsha = after_redis.get("evalsha", 0) - before_redis.get("evalsha", 0)
    return evalsha, sum(after_redis.values()) - sum(before_redis.values()), after_db - before_db


def through_the_api(env: dict[str, str], pages: int, poll_s: float, copies: int, quiet_s: float) -> None:
    api = ApiClient(env["API_URL"], connections=pages + 4)
    valkey = connect(env["REDIS_URL"])
    engine = engine_for_url(env["DATABASE_URL"])
    starts = datetime.now(UTC) - timedelta(minutes=1)
    created = api.request("POST", "/coupons", {"name": "availability bench", "totalQuantity": copies,
                                               "issueStartsAt": starts.isoformat(),
                                               "issueEndsAt": (starts + timedelta(hours=1)).isoformat()})  # fmt: skip
    coupon = int(created.body["couponId"])
    without = _window(valkey, engine, quiet_s)
    polls = Polls()
    stop, threads = polled(pages, lambda stop: polls.poll(api, coupon, poll_s, stop))
    warm_by = time.monotonic() + 90  # every page polling, the function's containers started
    while len(polls.answers) < 4 * pages and time.monotonic() < warm_by:
        time.sleep(0.5)
    asked = len(polls.answers)
    polling = _window(valkey, engine, quiet_s)
    answered = len(polls.answers) - asked
    print(f"{pages} pages polling every {poll_s:g} s for {quiet_s:g} s: {answered} answers")
    print("| window | EVALSHA | Redis commands | PostgreSQL transactions |\n|---|---:|---:|---:|")
    for name, (evalsha, commands, xacts) in (("without pages", without), ("with them", polling)):
        print(f"| {name} | {evalsha} | {commands} | {xacts} |")
    print(f"  per answer, polling less quiet: {(polling[0] - without[0]) / max(answered, 1):.3f} EVALSHA, "
          f"{(polling[2] - without[2]) / max(answered, 1):.3f} transactions")  # fmt: skip

    taken: list[int] = []
    for user in range(1, copies + 1):  # a claim every 50 ms: the copies go while the pages poll
        claim = api.request("POST", "/coupon-issues", {"couponId": coupon, "userId": user})
        if claim.status_code == 202:
            taken.append(millis(claim.body["reservedAt"]))
        time.sleep(0.05)
    sold_out_at = max(taken)
    time.sleep(3)
    stop.set()
    for thread in threads:
        thread.join()

    over = [body for _, body in polls.answers
            if body["left"] > copies - sum(1 for at in taken if at < millis(body["asOf"]))]  # fmt: skip
    late = [(arrived, body) for arrived, body in polls.answers if arrived >= sold_out_at]
    first = next(((arrived, body) for arrived, body in sorted(late, key=lambda answer: answer[0])
                  if body["status"] == "SOLD_OUT"), None)  # fmt: skip
    stale = [arrived - sold_out_at for arrived, body in late if body["status"] != "SOLD_OUT"]
    ages = sorted(arrived - millis(body["asOf"]) for arrived, body in polls.answers)
    print(
        f"  sell-out: {len(taken)} copies taken, the last at Redis' {sold_out_at}; {len(polls.answers)} answers in all"
    )
    if first is not None:
        print(f"  first SOLD_OUT answer arrived {first[0] - sold_out_at} ms after the sell-out; "
              f"the last answer still showing copies, {max(stale, default=0)} ms after it")  # fmt: skip
    print(f"  an answer's age at arrival (arrival - asOf): p50 {ages[len(ages) // 2]} ms, max {ages[-1]} ms")
    print(f"  answers showing more copies than Redis held at their asOf: {len(over)}")
    engine.dispose()


def side_by_side(env: dict[str, str], seconds: float) -> None:
    valkey = connect(env["REDIS_URL"])
    coupon = max(int(key) for key in valkey.hkeys("coupons:{registry}") if key.isdigit())
    print(f"\nthe container's read, asked for {seconds:g} s by one thread (coupon {coupon}):")
    print("| the container | answers | Redis reads | reads an answer |\n|---|---:|---:|---:|")
    for name, ms in (("as deployed", AVAILABILITY_MS), ("a read per request (ms=0)", 0)):
        service = AvailabilityService(RedisSaleReader(connect(env["REDIS_URL"])), ms=ms)
        before, asked, until = redis_calls(valkey).get("evalsha", 0), 0, time.monotonic() + seconds
        while time.monotonic() < until:
            service.availability(coupon)
            asked += 1
        reads = redis_calls(valkey).get("evalsha", 0) - before
        print(f"| {name} | {asked:,} | {reads:,} | {reads / max(asked, 1):.5f} |")


def the_handler_in_process(env: dict[str, str], coupon: int, answers: int) -> None:
    os.environ.update({name: env[name] for name in ("REDIS_URL", "DATABASE_URL")})
    os.environ.update(POWERTOOLS_SERVICE_NAME="coupon-coupons", POWERTOOLS_METRICS_NAMESPACE="CouponBench")
    from functions.coupons import app, dependencies  # noqa: PLC0415 - after the environment it reads
    from local.testkit.lambda_events import InProcessContext, api_event  # noqa: PLC0415

    statements: list[str] = []

    def executed(*args: Any) -> None:
        statements.append(args[2])  # the statement's text: any engine of this process

    event.listen(Engine, "before_cursor_execute", executed)
    control = engine_for_url(env["DATABASE_URL"])
    with control.connect() as connection:
        connection.execute(text("SELECT 1"))
    control.dispose()
    assert "SELECT 1" in statements, statements  # the count sees what an engine sends
    for cold in (True, False):
        statements.clear()
        for _ in range(answers):
            if cold:
                dependencies.reset()  # a new container's wiring
            answered = app.handler(api_event("GET", f"/coupons/{coupon}/availability"), InProcessContext())
            assert answered["statusCode"] == 200
        kind = "new" if cold else "warm"
        print(f"| the handler, {kind} containers | {answers} answers | {len(statements)} SQL statements |")
    event.remove(Engine, "before_cursor_execute", executed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=32)
    parser.add_argument("--poll", type=float, default=0.25, help="seconds between a page's polls")
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--quiet", type=float, default=10, help="seconds of polling alone, measured")
    args = parser.parse_args()
    env = stack.up()
    through_the_api(env, args.pages, args.poll, args.copies, args.quiet)
    side_by_side(env, 3)
    valkey = connect(env["REDIS_URL"])
    the_handler_in_process(env, max(int(key) for key in valkey.hkeys("coupons:{registry}") if key.isdigit()), 50)


if __name__ == "__main__":
    main()
