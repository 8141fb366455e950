"""A flash sale under random faults, in-process against the real servers: ``make chaos``.

The functions run in this process as Lambda would run them (the handlers, wired through their
environment), against real Valkey, PostgreSQL and a Kafka broker, each behind a fault proxy;
SQS is moto. While users click (twice each, at the same moment), a chaos thread injects, at
random: a Redis reply lost after the command ran (a failover, a reset), a Redis flush with
records still in flight, a produce acknowledgement held back past the timeout, a worker that
crashes before its offsets are committed (the batch comes again), and a replay of records
already processed. Clients behave as the API asks (one Idempotency-Key per request, sent again
after a 503 or a lost answer). When the sale is over the pipeline drains, reconcile runs once
the stray reservations are older than the production skew, and the I1-I5 report is printed;
the exit status says whether every invariant held.

    python -m local.tools.chaos --users 300 --quantity 100 --seed 7
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import redis
from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from moto import mock_aws
from sqlalchemy import Engine

from coupon_client.fairness import lines_of
from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.adapters.postgres.migrate import upgrade
from local.stack.postgres import start_postgres
from local.stack.processes import Service, url_port, with_port
from local.stack.tansu import proxied_broker
from local.stack.tls import proxy_ends
from local.stack.valkey import start_valkey
from local.testkit.fault_proxy import FaultProxy
from local.testkit.http_functions import answer
from local.testkit.intake_lines import PrintedLines
from local.testkit.kafka_topics import client_options, create_topic
from local.testkit.lambda_events import InProcessContext, api_event, msk_event, sqs_event
from local.testkit.lambda_service import LambdaService
from local.tools.invariants import bad_input_changes_nothing, check, held_counts, observe, stored_state
from local.tools.sale_report import Convergence, Observation, SaleTimeline, conclude, fairness_rows
from lua_redis.client import connect

GATE_RUNS = 10  # reconciles a second apart, past twice the produce timeout of the gate's wait
SKEW_S = 15  # the production default of RECONCILE_SKEW_MS: strays younger than this are left alone
ATTEMPTS = 5
FAULTS = ("lose a Redis reply", "flush Redis", "hold a produce ack", "crash the worker", "replay records")


@dataclass
class Tally:
    answers: Counter[str] = field(default_factory=Counter)
    successes: dict[str, int] = field(default_factory=dict)  # request id -> user
    faults: Counter[str] = field(default_factory=Counter)
    observations: list[Observation] = field(default_factory=list)  # each click's last answer, for the charts
    started: float = field(default_factory=time.perf_counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Stack:
    redis_url: str
    database_url: str
    bootstrap: str  # through the broker's proxy
    redis_proxy: FaultProxy
    broker_proxy: FaultProxy
    engine: Engine
    client: redis.Redis  # straight to Valkey, for the faults themselves


def _call(
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    raw_body: str | None = None,
) -> tuple[int, Any]:
    """A request answered by the HTTP functions in-process."""
    event = api_event(method, path, body, headers=headers, raw_body=raw_body)
    response = answer(event, InProcessContext())  # imports the function once the environment is set
    return response["statusCode"], json.loads(response["body"])


def _request(coupon_id: int, user_id: int, tally: Tally) -> None:
    """One click, as a well-behaved client: one key, sent again after a 503 or a lost answer."""
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    began = time.perf_counter()
    for _ in range(ATTEMPTS):
        try:
            status_code, body = _call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user_id}, headers)
        except Exception:  # the function itself failed (as a 502 would say): the answer is lost
            status_code, body = 502, {"status": "NO_ANSWER"}
        if status_code != 503 and status_code < 500:
            break
        time.sleep(0.2)
    done = time.perf_counter()
    with tally.lock:
        tally.observations.append(Observation(done - tally.started, body["status"], (done - began) * 1000))
        tally.answers[body["status"]] += 1
        if body["status"] == "SUCCESS":
            tally.successes[body["requestId"]] = user_id


class Pipeline:
    """The MSK mapping and the SQS mapping, in threads: the worker and the DLQ handler as AWS runs them."""

    def __init__(self, bootstrap: str, topic: str, group: str, sqs: Any, dlq_url: str) -> None:
        self._consumer = KafkaConsumer(
            **client_options(bootstrap), group_id=group, enable_auto_commit=False, auto_offset_reset="earliest"
        )
        self._partitions = [TopicPartition(topic, p) for p in sorted(self._consumer.partitions_for_topic(topic))]
        self._consumer.assign(self._partitions)
        self._sqs, self._dlq_url = sqs, dlq_url
        self.crash_next = threading.Event()
        self.replay_next = threading.Event()

    def step(self) -> int:
        """One batch through the worker, and whatever is on the DLQ through its handler."""
        from functions.worker import app as worker_app  # noqa: PLC0415
        from functions.worker import dlq as dlq_app  # noqa: PLC0415

        polled = self._consumer.poll(timeout_ms=200, max_records=200)
        records = [r for batch in polled.values() for r in batch]
        if records:
            response = worker_app.handler(
                msk_event([(r.topic, r.partition, r.offset, r.value) for r in records]), InProcessContext()
            )
            first_failed = {
                int(item["itemIdentifier"]["partition"].rsplit("-", 1)[1]): int(item["itemIdentifier"]["offset"])
                for item in response["batchItemFailures"]
            }
            if self.crash_next.is_set():  # the worker's container died before the mapping committed
                self.crash_next.clear()
                self._rewind({tp: min(r.offset for r in polled[tp]) for tp in polled})
            else:
                self._commit(polled, first_failed)
        if self.replay_next.is_set():  # an operator resets the group's offsets: records come again
            self.replay_next.clear()
            self._rewind({tp: max(0, self._consumer.position(tp) - 20) for tp in self._partitions})
        messages = self._sqs.receive_message(QueueUrl=self._dlq_url, MaxNumberOfMessages=10).get("Messages", [])
        if messages:
            answer = dlq_app.handler(sqs_event([m["Body"] for m in messages]), InProcessContext())
            failed = {item["itemIdentifier"] for item in answer["batchItemFailures"]}
            for i, message in enumerate(messages):
                if f"m{i}" not in failed:
                    self._sqs.delete_message(QueueUrl=self._dlq_url, ReceiptHandle=message["ReceiptHandle"])
        return len(records) + len(messages)

    def _commit(self, polled: dict[TopicPartition, list[Any]], first_failed: dict[int, int]) -> None:
        offsets = {}
        for tp, batch in polled.items():
            retry_from = first_failed.get(tp.partition)
            next_offset = retry_from if retry_from is not None else max(r.offset for r in batch) + 1
            offsets[tp] = OffsetAndMetadata(next_offset, "", -1)
            self._consumer.seek(tp, next_offset)
        self._consumer.commit(offsets)

    def _rewind(self, positions: dict[TopicPartition, int]) -> None:
        for tp, offset in positions.items():
            self._consumer.seek(tp, offset)
        self._consumer.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in positions.items()})

    def close(self) -> None:
        self._consumer.close()


def _chaos(stack: Stack, pipeline: Pipeline, rng: random.Random, stop: threading.Event, tally: Tally) -> None:
    while not stop.wait(rng.uniform(0.05, 0.3)):
        fault = rng.choice(FAULTS)
        tally.faults[fault] += 1
        if fault == "lose a Redis reply":
            stack.redis_proxy.lose_reply_to(b"EVALSHA")
        elif fault == "flush Redis":
            stack.client.flushall()
        elif fault == "hold a produce ack":
            stack.broker_proxy.delay_reply_to(b'"requestId"', 1.5)
        elif fault == "crash the worker":
            pipeline.crash_next.set()
        else:
            pipeline.replay_next.set()


def _drain(pipeline: Pipeline, sample: Convergence) -> None:
    quiet = 0
    while quiet < 5:
        quiet = quiet + 1 if pipeline.step() == 0 else 0
        sample()


def _wait_out_the_skew(stack: Stack, coupon_id: int, sample: Convergence) -> None:
    """The skew, if a stray is left: a reservation Redis holds that the drained pipeline did not
    persist (never in Kafka) is released only once older than it. Nothing runs meanwhile, so a
    stray is there at the end of the wait if it was at its start: one look tells."""
    observed = observe(stack.engine, stack.client, coupon_id)
    if observed.reserved_users - observed.issued_users:
        for _ in range(SKEW_S + 1):
            time.sleep(1)
            sample()


@contextlib.contextmanager
def _stack(scratch: Path) -> Iterator[Stack]:
    with contextlib.ExitStack() as stack:
        services: list[Service] = []
        valkey = start_valkey(scratch)
        services.append(valkey)
        postgres = start_postgres(scratch)
        services.append(postgres)
        for service in services:
            stack.callback(service.stop)
            os.environ.update(service.client_environment)
        broker_proxy, broker = stack.enter_context(proxied_broker(scratch))
        os.environ.update(broker.client_environment)
        redis_proxy = stack.enter_context(FaultProxy("127.0.0.1", url_port(valkey.url), tls=proxy_ends()))
        engine = engine_for_url(postgres.url)
        upgrade(engine)
        stack.callback(engine.dispose)
        yield Stack(
            redis_url=with_port(valkey.url, redis_proxy.port),
            database_url=postgres.url,
            bootstrap=f"127.0.0.1:{broker_proxy.port}",
            redis_proxy=redis_proxy,
            broker_proxy=broker_proxy,
            engine=engine,
            client=connect(valkey.url),
        )


def run(users: int, quantity: int, seed: int) -> SaleTimeline:
    """The sale, the faults, the drain and the reconcile: the answers over time, the stores
    converging, and each invariant with whether it held."""
    rng = random.Random(seed)
    with (
        tempfile.TemporaryDirectory(prefix="chaos-") as scratch,
        _stack(Path(scratch)) as stack,
        mock_aws(),
        PrintedLines() as printed,  # the functions' metrics lines, kept off the console
    ):
        topic = create_topic(stack.bootstrap)
        group = f"coupon-worker-{topic}"
        sqs = boto3.client("sqs", region_name="eu-west-1")
        dlq_url = sqs.create_queue(QueueName="coupon-dlq")["QueueUrl"]
        os.environ.update(
            {
                "REDIS_URL": stack.redis_url,
                "DATABASE_URL": stack.database_url,
                "KAFKA_BOOTSTRAP_SERVERS": stack.bootstrap,
                "KAFKA_TOPIC": topic,
                "KAFKA_CONSUMER_GROUP": group,
                "DLQ_URL": dlq_url,
                "AWS_DEFAULT_REGION": "eu-west-1",
                "KAFKA_PRODUCE_TIMEOUT_MS": "1000",
                "POWERTOOLS_SERVICE_NAME": "coupon-chaos",
                "POWERTOOLS_METRICS_NAMESPACE": "CouponChaos",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "LOG_LEVEL": "critical",
            }
        )
        from functions.rebuild import app as rebuild_app  # noqa: PLC0415 - imported once the environment is set
        from functions.rebuild import build as builder_app  # noqa: PLC0415

        # the intake has a lost state built by the builder function, through Lambda's API
        lambda_service = LambdaService({"rebuild": rebuild_app.handler, "builder": builder_app.handler})
        os.environ.update({"BUILDER_FUNCTION": "builder", "AWS_ENDPOINT_URL_LAMBDA": lambda_service.url})
        now = datetime.now(UTC)
        status_code, coupon = _call(
            "POST",
            "/coupons",
            {
                "name": "chaos",
                "totalQuantity": quantity,
                "issueStartsAt": (now - timedelta(minutes=1)).isoformat(),
                "issueEndsAt": (now + timedelta(hours=1)).isoformat(),
            },
        )
        assert status_code == 201, coupon
        coupon_id = int(coupon["couponId"])
        tally = Tally()
        sample = Convergence(lambda: held_counts(stack.engine, stack.client, coupon_id),
                             lambda: time.perf_counter() - tally.started)  # fmt: skip
        pipeline = Pipeline(stack.bootstrap, topic, group, sqs, dlq_url)
        stop = threading.Event()
        workers = [threading.Thread(target=_chaos, args=(stack, pipeline, rng, stop, tally))]
        workers.append(threading.Thread(target=lambda: [pipeline.step() for _ in iter(stop.is_set, True)]))
        for thread in workers:
            thread.start()
        clicks = [user for user in range(1, users + 1) for _ in range(2)]
        rng.shuffle(clicks)
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda user: _request(coupon_id, user, tally), clicks))
        stop.set()
        for thread in workers:
            thread.join()
        # the faults are the sale's: one armed in its last instant and not yet met would fall on the
        # recovery (a reconcile's lost reply fails that run; the schedule's next one would heal it)
        stack.redis_proxy.disarm()
        stack.broker_proxy.disarm()
        _drain(pipeline, sample)
        _wait_out_the_skew(stack, coupon_id, sample)
        _drain(pipeline, sample)
        # A flush in the sale's last instant that no request met is seen first by this reconcile:
        # it starts the rebuild gate's wait and fails, as a scheduled run would, and the next run
        # (here, a second later) rebuilds the state once the wait is over.
        for _ in range(GATE_RUNS):
            report = rebuild_app.handler({"couponId": coupon_id}, InProcessContext())
            sample()
            if not any("StateLostError" in failure["error"] for failure in report["failed"]):
                break
            time.sleep(1)
        pipeline.close()
        lambda_service.close()
        results = check(observe(stack.engine, stack.client, coupon_id), tally.successes)
        results["I5 bad input: 4xx and nothing changed"] = bad_input_changes_nothing(
            lambda bad: _call(bad.method, bad.path, bad.body, raw_body=bad.raw),
            lambda: stored_state(stack.engine, stack.client, coupon_id),
            coupon_id,
            settle_s=0,  # in-process: a request's effects have landed when its answer returns
        )
        summary = [
            ("faults injected", ", ".join(f"{name} x{count}" for name, count in tally.faults.most_common())),
            ("answers", ", ".join(f"{name} {count:,}" for name, count in tally.answers.most_common())),
            ("copies", f"SUCCESS {len(tally.successes)} of {quantity}"),
            ("reconcile", str(report["reconciled"])),
        ]
        for label, value in summary:
            print(f"{label}: {value}")
        title = f"make chaos: {users} users clicking twice for {quantity} copies, seed {seed}"
        lines = lines_of(printed.lines, coupon_id)  # the intake's metrics lines, printed in-process
        summary.extend(fairness_rows(lines, " printed"))
        return SaleTimeline(title, quantity, tally.observations, sample.samples, summary, results, lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=300)
    parser.add_argument("--quantity", type=int, default=100)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    print(f"chaos: {args.users} users clicking twice for {args.quantity} copies, seed {args.seed}")
    return conclude(run(args.users, args.quantity, args.seed), "chaos")


if __name__ == "__main__":
    sys.exit(main())
