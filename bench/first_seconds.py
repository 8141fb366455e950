"""Benchmark: a sale's first seconds when the broker takes new connections at a limited rate
(``python -m bench.first_seconds``).

On MSK a broker accepts a limited rate of new IAM connections (100/s on m5/m7g brokers, 4/s on
t3; 100/s per MSK Serverless cluster) and refuses the rest ("Too many connects"). At a cold
opening Lambda starts up to 1,000 intake containers at once, each of whose INIT opens two (the
bootstrap's and the producer's), all on the coupon's leader broker. Modelled here, scaled down:
``--containers`` intake processes, already imported, run their INIT at the same moment against
a broker behind a fault proxy that admits ``--rate`` new connections per second (the default,
20 containers at 10/s, asks for 4 s of the broker's rate, as 1,000 containers at 100/s ask for
20 s). ``--users`` users are already waiting; each asks once and, answered 429 or 503, asks
again after its ``Retry-After`` with up to 50 % jitter, with the same ``Idempotency-Key``, until
it has an answer (at most ``--attempts`` times).

Prints what users were answered, by half second, how long until every answer was a final one,
the connections admitted and refused, and then audits what a refused connection must never
cause: a reservation held in Redis without its record in Kafka, or a SUCCESS answered without
one. Each ``--timeout-ms`` (the intake's KAFKA_PRODUCE_TIMEOUT_MS, 3,000 in production) is run
in turn, on a fresh coupon and fresh containers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.adapters.postgres.migrate import upgrade
from local.stack.services import service_urls
from local.stack.tansu import proxied_broker
from local.testkit.fault_proxy import FaultProxy
from local.testkit.kafka_topics import create_topic, read_all
from local.testkit.lambda_events import InProcessContext, api_event
from lua_redis.client import connect
from lua_redis.keys import reserved_key

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "coupon-first-seconds")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "CouponBench")
os.environ.setdefault("LOG_LEVEL", "error")
os.environ.setdefault("KAFKA_CONSUMER_GROUP", "coupon-worker-bench")

FINAL = {"SUCCESS", "SOLD_OUT", "DUPLICATE"}
BUCKET_S = 0.5


@dataclass(frozen=True)
class Attempt:
    user: int
    attempt: int
    began: float  # seconds since the containers' INIT began
    done: float
    code: int
    status: str


@dataclass(frozen=True)
class Queues:
    todo: Any  # (user, due, attempt, Idempotency-Key, origin) to ask, or None: stop
    results: Any  # ("imported", None), ("init", seconds) or ("answer", Attempt)
    ready: Any  # set when every container may run its INIT


def _container(env: dict[str, str], coupon: int, queues: Queues, attempts: int) -> None:
    """One intake container: imported before the signal (its INIT's connections after it, at the
    same moment as every other's), then requests from the shared queue until it is told to stop."""
    os.environ.update(env)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        from functions.intake import app, dependencies  # noqa: PLC0415 - the container's import, timed apart

        queues.results.put(("imported", None))
        queues.ready.wait()
        opened = time.monotonic()
        dependencies.open_connections()  # what Lambda's INIT runs
        queues.results.put(("init", time.monotonic() - opened))
        while (item := queues.todo.get()) is not None:
            user, due, attempt, key, origin = item
            time.sleep(max(0.0, due - time.monotonic()))
            began = time.monotonic()
            event = api_event("POST", "/coupon-issues", {"couponId": coupon, "userId": user},
                              headers={"Idempotency-Key": key})  # fmt: skip
            answer = app.handler(event, InProcessContext())
            done = time.monotonic()
            status = json.loads(answer["body"])["status"]
            queues.results.put(
                ("answer", Attempt(user, attempt, began - origin, done - origin, answer["statusCode"], status))
            )
            if answer["statusCode"] in (429, 503) and attempt < attempts:
                wait_s = float(answer.get("headers", {}).get("Retry-After", "1")) * random.uniform(1.0, 1.5)
                queues.todo.put((user, done + wait_s, attempt + 1, key, origin))


def run(env: dict[str, str], proxy: FaultProxy, args: argparse.Namespace, timeout_ms: int) -> dict[str, Any]:
    """One cold opening with the intake's produce timeout at ``timeout_ms``."""
    from bench.intake import create_coupon  # noqa: PLC0415 - its module sets the bench's environment

    env = {**env, "KAFKA_PRODUCE_TIMEOUT_MS": str(timeout_ms)}
    os.environ.update(env)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        coupon = create_coupon(args.copies + 1)  # its warm-up request takes one
    context = multiprocessing.get_context("spawn")
    queues = Queues(context.Queue(), context.Queue(), context.Event())
    todo, results = queues.todo, queues.results
    workers = [
        context.Process(target=_container, args=(env, coupon, queues, args.attempts)) for _ in range(args.containers)
    ]
    for worker in workers:
        worker.start()
    for _ in workers:  # every container imported: what is measured is the INIT and after
        assert results.get(timeout=120)[0] == "imported"
    proxy.count_from_now()
    proxy.refused = 0
    proxy.limit_new_connections(args.rate)
    origin = time.monotonic()
    for user in range(1, args.users + 1):
        todo.put((user, origin, 1, str(uuid.uuid4()), origin))
    queues.ready.set()
    answers: list[Attempt] = []
    inits: list[float] = []
    final: set[int] = set()
    deadline = origin + args.deadline_s
    while len(final) < args.users and time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            kind, value = results.get(timeout=1)
            if kind == "init":
                inits.append(value)
            else:
                answers.append(value)
                if value.status in FINAL or value.attempt >= args.attempts:
                    final.add(value.user)
    for _ in workers:
        todo.put(None)
    stop_by = time.monotonic() + 30
    for worker in workers:
        worker.join(timeout=max(0.1, stop_by - time.monotonic()))
        if worker.is_alive():  # a producer's exit waiting on records the broker never took
            worker.terminate()
    proxy.limit_new_connections(0)
    return {"coupon": coupon, "answers": answers, "inits": inits, "admitted": proxy.connections,
            "refused": proxy.refused, "unanswered": args.users - len(final)}  # fmt: skip


def audit(coupon: int, answers: list[Attempt], bootstrap: str, topic: str, redis_url: str) -> dict[str, int]:
    """What must hold whatever the broker refused: every reservation and every SUCCESS has its
    record in the log (after the produce timeouts have passed, nothing is still in flight). The
    set's sentinel (score 0) holds no copy."""
    recorded = {
        json.loads(record.value)["userId"]
        for record in read_all(bootstrap, topic)
        if record.key == str(coupon).encode()
    }
    members: list[str] = connect(redis_url).zrangebyscore(reserved_key(coupon), 1, "+inf")  # type: ignore[assignment]
    reserved = {int(member) for member in members}
    succeeded = {answer.user for answer in answers if answer.status == "SUCCESS"}
    return {
        "reserved": len(reserved),
        "records": len(recorded),
        "reserved without a record": len(reserved - recorded),
        "SUCCESS without a record": len(succeeded - recorded),
    }


def report(timeout_ms: int, result: dict[str, Any], audited: dict[str, int], args: argparse.Namespace) -> None:
    answers: list[Attempt] = result["answers"]
    print(f"\nKAFKA_PRODUCE_TIMEOUT_MS={timeout_ms}: {args.containers} containers, {args.users} users, "
          f"{args.copies} copies, the broker admitting {args.rate:g} new connections/s")  # fmt: skip
    by_bucket: dict[int, Counter[str]] = defaultdict(Counter)
    for answer in answers:
        by_bucket[int(answer.done / BUCKET_S)][f"{answer.code} {answer.status}"] += 1
    kinds = sorted({kind for counts in by_bucket.values() for kind in counts})
    print("\n| answered at (s) | " + " | ".join(kinds) + " |")
    print("|---:|" + "---:|" * len(kinds))
    for bucket in sorted(by_bucket):
        row = " | ".join(str(by_bucket[bucket][kind]) for kind in kinds)
        print(f"| {bucket * BUCKET_S:.1f} | {row} |")
    unavailable = [a for a in answers if a.code in (429, 503)]
    clean = max((a.done for a in unavailable), default=0.0)
    latency = sorted(a.done - a.began for a in unavailable)
    finals = sorted(a.done for a in answers if a.status in FINAL)
    print(f"\nthe last 503 answered at {clean:.1f} s; every user had a final answer at "
          f"{finals[-1] if finals else float('nan'):.1f} s ({result['unanswered']} never did)")  # fmt: skip
    if latency:
        print(f"503 answers: {len(latency)}, each after {latency[len(latency) // 2]:.2f} s (median), "
              f"{latency[-1]:.2f} s (slowest)")  # fmt: skip
    inits = sorted(result["inits"])
    if inits:
        print(f"INITs: median {inits[len(inits) // 2]:.2f} s, slowest {inits[-1]:.2f} s")
    print(f"connections admitted {result['admitted']}, refused {result['refused']}")
    print("audit: " + ", ".join(f"{name} {count}" for name, count in audited.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--containers", type=int, default=20)
    parser.add_argument("--rate", type=float, default=10.0, help="new connections/s the broker admits")
    parser.add_argument("--users", type=int, default=400)
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--attempts", type=int, default=8, help="asks per user at most")
    parser.add_argument("--timeout-ms", type=int, nargs="+", default=[3000, 1000])
    parser.add_argument("--deadline-s", type=float, default=60)
    args = parser.parse_args()
    failed = False
    with ExitStack() as stack:
        urls = service_urls(stack, "bench-first-seconds-", ("REDIS_URL", "DATABASE_URL"))
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-first-seconds-")))
        proxy, broker = stack.enter_context(proxied_broker(scratch))
        os.environ.update(broker.client_environment)
        bootstrap = f"127.0.0.1:{proxy.port}"
        upgrade(engine_for_url(urls["DATABASE_URL"]))
        env = {**urls, **broker.client_environment, "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
               "KAFKA_TOPIC": create_topic(bootstrap)}  # fmt: skip
        for timeout_ms in args.timeout_ms:
            result = run(env, proxy, args, timeout_ms)
            time.sleep(2 * timeout_ms / 1000)  # a produce still in flight has finished either way
            audited = audit(result["coupon"], result["answers"], bootstrap, env["KAFKA_TOPIC"], urls["REDIS_URL"])
            report(timeout_ms, result, audited, args)
            failed |= audited["reserved without a record"] > 0 or audited["SUCCESS without a record"] > 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
