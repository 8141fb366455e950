"""Benchmark: the intake handler called in-process from N processes (``python -m bench.intake``).

Against embedded Valkey, Tansu and PostgreSQL (or the servers named by REDIS_URL,
KAFKA_BOOTSTRAP_SERVERS and DATABASE_URL). Each process is one warm Lambda container answering
one request at a time (Powertools' resolver holds the current event, so one per process).
For each process count, in one run: requests/s and p50/p95/p99 latency of POST /coupon-issues
on a warm coupon, for the intake and for the bare handler of ``bench/bare_intake.py`` (the
floor: the same Lua and produce, no framework), and the intake's requests/s over the bare one's.
Then, on a small run under MONITOR, the Redis commands each request sends and the Kafka records
per SUCCESS; and the import time of the handler module, with and without the X-Ray tracer the
other functions use, against a bare ``import boto3``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from typing import Any

from sqlalchemy import create_engine

from coupon_core.adapters.postgres.migrate import upgrade
from local.kafka_topics import create_topic, read_all
from local.lambda_events import InProcessContext, api_event
from local.redis_monitor import client_commands
from local.services import STARTERS, service_urls
from lua_redis import connect

# Powertools reads these when the handler module is imported, so they are set before that.
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "coupon-intake-bench")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "CouponBench")
os.environ.setdefault("LOG_LEVEL", "warning")
os.environ.setdefault("KAFKA_CONSUMER_GROUP", "coupon-worker-bench")  # whose offsets mark records in flight

from functions.intake import app as intake_app
from functions.intake.dependencies import reset

emit = functools.partial(print, file=sys.stdout, flush=True)  # the real stdout, bound before any redirect


HANDLERS = {"intake": "functions.intake.app", "bare": "bench.bare_intake"}


def call(method: str, path: str, body: object, handler: Any = None) -> tuple[int, dict]:
    response = (handler or intake_app.handler)(api_event(method, path, body), InProcessContext())
    return response["statusCode"], json.loads(response["body"])


def create_coupon(total: int) -> int:
    now = time.time()
    status, body = call(
        "POST",
        "/coupons",
        {
            "name": "bench",
            "totalQuantity": total,
            "issueStartsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60)),
            "issueEndsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 3600)),
        },
    )
    assert status == 201, body
    coupon_id = int(body["couponId"])
    call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": 2**62})  # warm: state initialised
    return coupon_id


def _load_process(module: str, coupon_id: int, users: list[int], barrier: Any, results: Any) -> None:
    """One process = one Lambda container: a warm handler, one request at a time."""
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        handler = importlib.import_module(module).handler
        call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": 2**62 - 1}, handler)  # warm this process
        latencies: list[float] = []
        outcomes: Counter[str] = Counter()
        barrier.wait()
        started = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process on Linux
        for user in users:
            began = time.perf_counter()
            _, body = call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user}, handler)
            latencies.append(time.perf_counter() - began)
            outcomes[body["status"]] += 1
        results.put((started, time.monotonic(), latencies, outcomes))


def load(module: str, coupon_id: int, users: int, processes: int) -> tuple[float, list[float], Counter[str]]:
    """Requests from ``processes`` concurrent handler processes, each walking its share of users."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes), context.Queue()
    workers = [
        context.Process(
            target=_load_process,
            args=(module, coupon_id, list(range(1 + p, users + 1, processes)), barrier, results),
        )
        for p in range(processes)
    ]
    for worker in workers:
        worker.start()
    reports = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join()
    elapsed = max(end for _, end, _, _ in reports) - min(start for start, _, _, _ in reports)
    return elapsed, [s for _, _, lat, _ in reports for s in lat], sum((o for *_, o in reports), Counter())


def import_seconds(modules: str, repeats: int = 5) -> float:
    """Median time to import ``modules`` (``import``'s comma-separated list) in a fresh interpreter."""
    probe = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=environment
            ).stdout
        )
        for _ in range(repeats)
    ]
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=4_000, help="requests per thread count")
    parser.add_argument("--processes", type=int, nargs="+", default=[8])
    args = parser.parse_args()

    with ExitStack() as stack:
        # The handler prints its metrics (CloudWatch EMF) as in Lambda: that cost stays, the text goes.
        stack.enter_context(contextlib.redirect_stdout(stack.enter_context(open(os.devnull, "w"))))
        os.environ.update(service_urls(stack, "bench-intake-", STARTERS))
        upgrade(create_engine(os.environ["DATABASE_URL"]))
        os.environ["KAFKA_TOPIC"] = create_topic(os.environ["KAFKA_BOOTSTRAP_SERVERS"])
        reset()
        stack.callback(reset)

        emit("| handler | processes | requests/s | p50 ms | p95 ms | p99 ms | vs bare | outcomes |")
        emit("|---|---:|---:|---:|---:|---:|---:|---|")
        for processes in args.processes:
            rates: dict[str, float] = {}
            for name in ("bare", "intake"):
                coupon_id = create_coupon(total=args.requests // 2)
                elapsed, latencies, outcomes = load(HANDLERS[name], coupon_id, args.requests, processes)
                rates[name] = len(latencies) / elapsed
                cuts = statistics.quantiles(latencies, n=100, method="inclusive")
                emit(
                    f"| {name} | {processes} | {rates[name]:,.0f} | {cuts[49] * 1000:.2f} | {cuts[94] * 1000:.2f} "
                    f"| {cuts[98] * 1000:.2f} | {rates[name] / rates['bare']:.2f}x | {dict(outcomes)} |"
                )

        coupon_id = create_coupon(total=100)
        outcomes = Counter()
        sent = client_commands(
            connect(os.environ["REDIS_URL"]),
            lambda: outcomes.update(
                call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": u})[1]["status"] for u in range(1, 201)
            ),
        )
        records = [
            record
            for record in read_all(os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["KAFKA_TOPIC"])
            if record.key == str(coupon_id).encode() and json.loads(record.value)["userId"] <= 200
        ]
        emit(f"\naccounting run: {dict(outcomes)}")
        emit(f"Redis commands per request: {len(sent) / 200:.2f} ({dict(Counter(sent))})")
        emit(f"Kafka records per SUCCESS: {len(records) / outcomes['SUCCESS']:.2f}")

    handler_s, boto3_s = import_seconds("functions.intake.app"), import_seconds("boto3")
    traced_s = import_seconds("functions.intake.app, coupon_core.tracing")  # the handler with the X-Ray tracer
    emit(
        f"\nimport functions.intake.app: {handler_s * 1000:.0f} ms; with the X-Ray tracer: {traced_s * 1000:.0f} ms "
        f"({traced_s / handler_s:.2f}x); import boto3: {boto3_s * 1000:.0f} ms (handler {handler_s / boto3_s:.2f}x)"
    )


if __name__ == "__main__":
    main()
