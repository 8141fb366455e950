"""Benchmark: the intake handler called in-process from N processes (``python -m bench.intake``).

Against embedded Valkey, Tansu and PostgreSQL (or the servers named by REDIS_URL,
KAFKA_BOOTSTRAP_SERVERS and DATABASE_URL). Each process is one Lambda container answering
one request at a time (Powertools' resolver holds the current event, so one per process): its
import is its INIT, as in Lambda, and it stays warm from load to load. In one run, N containers
of each handler: requests/s, p50/p95/p99 latency and the containers' own CPU per request of
POST /coupon-issues on a warm coupon (the events made and the answers read outside the
measured CPU, as API Gateway makes and reads them), for the intake and for the bare handler of
``bench/bare_intake.py`` (the floor: the same Lua and produce, no framework), in rounds of
alternating order (bare first, then intake first, ...) so that a drift of this shared machine
falls on both; each row is compared with the bare row of its round. Two shapes
of load: SUCCESS-heavy (half the requests take a copy) and a sale's mix (every user clicks
twice, 1 request in 50 takes a copy: mostly SOLD_OUT and DUPLICATE answers). Then each answer
alone (SUCCESS, SOLD_OUT, DUPLICATE), whose CPU per request ``make plan`` uses.
Then, on a small run under MONITOR, the Redis commands each request sends and the Kafka records
per SUCCESS; the import time of the handler module, with and without the X-Ray tracer the
other functions use and the MSK IAM signer its INIT loads on AWS, against a bare
``import boto3``, and of our modules alone (every other module it loads imported first), all
with their bytecode compiled as the Lambda packages ship it; and cold starts against the live
servers (``bench/cold_start.py``): the first request after the import against the warm ones,
with the connections opened during the import as in Lambda and without.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import json
import logging
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, TextIO, cast

# Powertools reads these when coupon_core.observability is imported (the first project import
# below loads it), so they are set before any of them.
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "coupon-intake-bench")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "CouponBench")
os.environ.setdefault("LOG_LEVEL", "info")  # as deployed

from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.adapters.postgres.migrate import upgrade
from local.stack.services import STARTERS, service_urls
from local.testkit.http_functions import handler_for
from local.testkit.kafka_topics import create_topic, read_all
from local.testkit.lambda_events import InProcessContext, api_event
from local.testkit.redis_monitor import client_commands
from lua_redis.client import connect

os.environ.setdefault("KAFKA_CONSUMER_GROUP", "coupon-worker-bench")  # whose offsets mark records in flight

from coupon_core.observability import logger
from functions.intake.dependencies import reset

emit = functools.partial(print, file=sys.stdout, flush=True)  # the real stdout, bound before any redirect


HANDLERS = {"intake": "functions.intake.app", "bare": "bench.bare_intake"}
IMPORTS = {
    "`import boto3`": "boto3",
    "the intake handler": "functions.intake.app",
    "the libraries of its hot path alone": (
        "redis, kafka, pydantic, aws_lambda_powertools.logging, aws_lambda_powertools.metrics"
    ),
    "the intake handler with the X-Ray tracer of the other functions": "functions.intake.app, coupon_core.tracing",
    # On MSK (KAFKA_AUTH=iam) the INIT's connect also imports AWS's token signer, and with it boto3.
    "the intake handler with the MSK IAM signer its INIT loads on AWS": (
        "functions.intake.app, aws_msk_iam_sasl_signer.MSKAuthTokenProvider"
    ),
}


@contextlib.contextmanager
def printed_to(sink: TextIO) -> Iterator[None]:
    """The handler's metrics (EMF on stdout) and its logs (Logger's stream, taken when it was
    created) written to ``sink`` meanwhile: their cost stays, their text goes."""
    handler = cast("logging.StreamHandler[TextIO]", logger.registered_handler)
    stream = handler.setStream(sink)
    try:
        with contextlib.redirect_stdout(sink):
            yield
    finally:
        handler.setStream(stream or sys.stdout)


def quiet_intake_servers(stack: ExitStack, prefix: str) -> None:
    """:func:`intake_servers`, with the handlers' logs and metrics written to /dev/null until
    ``stack`` closes (their cost stays, their text goes)."""
    stack.enter_context(printed_to(stack.enter_context(open(os.devnull, "w"))))  # noqa: SIM115 - closed by stack
    intake_servers(stack, prefix)


def intake_servers(stack: ExitStack, prefix: str) -> None:
    """Embedded servers for the intake in this process, stopped with ``stack`` (or those the
    environment names): their URLs in the environment, the schema migrated, a new topic, and the
    wiring forgotten before they stop."""
    os.environ.update(service_urls(stack, prefix, STARTERS))
    upgrade(engine_for_url(os.environ["DATABASE_URL"]))
    os.environ["KAFKA_TOPIC"] = create_topic(os.environ["KAFKA_BOOTSTRAP_SERVERS"])
    reset()
    stack.callback(reset)


def call(method: str, path: str, body: object, handler: Any = None) -> tuple[int, dict]:
    """One request to ``handler``, by default the function API Gateway routes it to (imported
    here, not with this module: a load's processes import their handler themselves, after
    setting up their INIT)."""
    if handler is None:
        handler = handler_for(method, path)
    response = handler(api_event(method, path, body), InProcessContext())
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


def _container(module: str, jobs: Any, barrier: Any, results: Any) -> None:
    """One process = one Lambda container: initialised once, then warm, answering one request at
    a time, load after load (``jobs``: a coupon and this container's users, or None to stop)."""
    # As in Lambda, the import is the INIT, which opens the container's connections. Without it
    # a process that never published had no producer, and the first publish of one that did paid
    # the producer's start in the measured requests (its I/O thread's TLS handshakes and protocol
    # compilation, about 50 ms of CPU: 0.1 ms a request of the load).
    os.environ["AWS_LAMBDA_INITIALIZATION_TYPE"] = "on-demand"
    with open(os.devnull, "w") as sink, printed_to(sink):
        handler = importlib.import_module(module).handler
        context = InProcessContext()
        while (job := jobs.get()) is not None:
            coupon_id, users = job
            call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": 2**62 - 1}, handler)  # warm this coupon
            # The events are made, and the answers read, outside the measured CPU: API Gateway does
            # both, not the container (they cost about 20 µs a request, which flattered the ratio).
            events = [api_event("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user}) for user in users]
            latencies: list[float] = []
            answers: list[dict[str, Any]] = []
            barrier.wait()
            started, cpu_started = time.monotonic(), time.process_time()  # one monotonic clock for all on Linux
            for event in events:
                began = time.perf_counter()
                answers.append(handler(event, context))
                latencies.append(time.perf_counter() - began)
            cpu_s, ended = time.process_time() - cpu_started, time.monotonic()
            outcomes = Counter(json.loads(answer["body"])["status"] for answer in answers)
            results.put((started, ended, cpu_s, latencies, outcomes))


@dataclass(frozen=True)
class Load:
    elapsed_s: float
    cpu_s: float  # the handler processes' own CPU (threads included), not the servers'
    latencies: list[float]
    outcomes: Counter[str]

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.elapsed_s

    @property
    def cpu_ms(self) -> float:
        return self.cpu_s * 1000 / len(self.latencies)

    def summary(self) -> str:
        """requests/s | p50 | p95 | p99 | CPU ms/request, as table cells."""
        cuts = statistics.quantiles(self.latencies, n=100, method="inclusive")
        percentiles = " | ".join(f"{cuts[p - 1] * 1000:.2f}" for p in (50, 95, 99))
        return f"{self.rate:,.0f} | {percentiles} | {self.cpu_ms:.3f}"


@dataclass(frozen=True)
class Shape:
    """What a load asks: a coupon of ``copies(requests)``, and who asks, in order."""

    name: str
    copies: Callable[[int], int]
    users: Callable[[int], list[int]]


SHAPES = {
    # half the requests take a copy, the rest find it sold out: the first seconds of a sale
    "SUCCESS-heavy": Shape("SUCCESS-heavy", lambda n: n // 2, lambda n: list(range(1, n + 1))),
    # a whole sale: every user clicks twice in a row, and 1 request in 50 takes a copy
    "sale mix": Shape(
        "sale mix", lambda n: max(1, n // 50), lambda n: [u for u in range(1, n // 2 + 1) for _ in (1, 2)]
    ),
}
ANSWERS = {  # one answer only, for its CPU: a coupon big enough, one sold out, users who all hold a copy
    "SUCCESS": Shape("SUCCESS", lambda n: n, lambda n: list(range(1, n + 1))),
    "SOLD_OUT": Shape("SOLD_OUT", lambda n: 0, lambda n: list(range(1, n + 1))),
    "DUPLICATE": Shape("DUPLICATE", lambda n: n, lambda n: list(range(1, n + 1))),
}


class Containers:
    """``processes`` Lambda containers of one handler module, started (their INIT) once and kept
    warm between loads, as Lambda keeps them between requests: the rounds then alternate the two
    handlers every few seconds, so that a drift of this shared machine falls on both."""

    def __init__(self, module: str, processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._barrier, self._results = context.Barrier(processes), context.Queue()
        self._jobs = [context.Queue() for _ in range(processes)]
        self._processes = [
            context.Process(target=_container, args=(module, jobs, self._barrier, self._results)) for jobs in self._jobs
        ]
        for process in self._processes:
            process.start()

    def load(self, shape: Shape, requests: int) -> Load:
        """``shape``'s requests on a fresh coupon, from every container at once; a user's
        requests stay in one container, in order (a double click is one browser's)."""
        coupon_id = create_coupon(total=shape.copies(requests) + 2)  # the two warm-up users take one each
        users = shape.users(requests)
        if shape.name == "DUPLICATE":
            for user in users:
                call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user})
        containers = len(self._jobs)
        container_of = {user: n % containers for n, user in enumerate(dict.fromkeys(users))}
        for number, jobs in enumerate(self._jobs):
            jobs.put((coupon_id, [user for user in users if container_of[user] == number]))
        reports = [self._results.get(timeout=600) for _ in self._jobs]
        return Load(
            elapsed_s=max(report[1] for report in reports) - min(report[0] for report in reports),
            cpu_s=sum(report[2] for report in reports),
            latencies=[seconds for report in reports for seconds in report[3]],
            outcomes=sum((report[4] for report in reports), Counter()),
        )

    def close(self) -> None:
        for jobs in self._jobs:
            jobs.put(None)
        for process in self._processes:
            process.join()


def fresh_interpreter_environment(bytecode: str, *, compiled: bool = True) -> dict[str, str]:
    """A fresh interpreter's variables: this one's path, and bytecode written to and read from
    ``bytecode`` whatever this machine's PYTHONDONTWRITEBYTECODE says, as the Lambda packages ship
    it compiled (cdk/coupon_cdk/bytecode.py). ``compiled=False`` (``bytecode`` empty): none is read
    or written, so every module is compiled at import, as from a package shipped without it."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONPYCACHEPREFIX": bytecode}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    if not compiled:
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
    return environment


def import_seconds(imports: list[str], bytecode: str, *, compiled: bool = True, repeats: int = 21) -> dict[str, float]:
    """Median time to import each entry (``import``'s comma-separated list) in fresh interpreters,
    the entries taking turns so that a drift of the machine falls on all; one unmeasured run each
    first writes their bytecode."""
    environment = fresh_interpreter_environment(bytecode, compiled=compiled)

    def once(modules: str) -> float:
        return _printed_seconds(
            f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)", environment
        )

    for modules in imports:
        once(modules)
    runs: dict[str, list[float]] = {modules: [] for modules in imports}
    for _ in range(repeats):
        for modules in imports:
            runs[modules].append(once(modules))
    return {modules: statistics.median(seconds) for modules, seconds in runs.items()}


def our_modules_seconds(bytecode: str, repeats: int = 21) -> float:
    """Median time to import the handler in fresh interpreters that have already imported every
    other module it loads (the libraries, the standard library): our own modules' share alone,
    which the library rows' noise would hide."""
    environment = fresh_interpreter_environment(bytecode)
    ours = ("coupon_core", "functions", "lua_redis", "__main__")
    handler = IMPORTS["the intake handler"]
    listing = f"import sys; import {handler}; print(*(m for m in sys.modules if m.split('.')[0] not in {ours!r}))"
    others = subprocess.run(
        [sys.executable, "-c", listing], capture_output=True, text=True, check=True, env=environment
    ).stdout.split()
    probe = (
        f"import importlib, time\nfor name in {others!r}:\n    importlib.import_module(name)\n"
        f"t = time.perf_counter(); import {handler}; print(time.perf_counter() - t)"
    )

    _printed_seconds(probe, environment)  # writes the bytecode
    return statistics.median(_printed_seconds(probe, environment) for _ in range(repeats))


def _printed_seconds(probe: str, environment: dict[str, str]) -> float:
    """What ``probe`` prints, run in a fresh interpreter: a duration in seconds."""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=environment)
    return float(done.stdout)


def cold_starts(coupon_id: int, bytecode: str, repeats: int = 5) -> None:
    """Fresh interpreters against the live servers: import, first request, warm requests."""
    emit("\n| connections opened | import ms | first request ms | warm request ms (median of 50) | first / warm |")
    emit("|---|---:|---:|---:|---:|")
    for label, lambda_init in (("on the first request", False), ("during the import (Lambda INIT)", True)):
        environment = fresh_interpreter_environment(bytecode)
        environment.pop("AWS_LAMBDA_INITIALIZATION_TYPE", None)
        if lambda_init:
            environment["AWS_LAMBDA_INITIALIZATION_TYPE"] = "on-demand"
        runs = []
        for n in range(repeats):
            first_user = 10**12 * (2 + lambda_init) + 1_000 * n
            probe = [sys.executable, "-m", "bench.cold_start", str(coupon_id), str(first_user)]
            runs.append(
                json.loads(subprocess.run(probe, capture_output=True, text=True, check=True, env=environment).stdout)
            )
        assert all(run["status"] == 202 for run in runs), runs
        imported, first, warm = (
            statistics.median(run[key] * 1000 for run in runs) for key in ("import", "first", "warm")
        )
        emit(f"| {label} | {imported:.0f} | {first:.2f} | {warm:.2f} | {first / warm:.1f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=4_000, help="requests per thread count")
    parser.add_argument("--processes", type=int, default=8, help="containers of each handler")
    parser.add_argument("--rounds", type=int, default=16, help="rounds of both handlers, alternating who goes first")
    parser.add_argument("--imports-only", action="store_true", help="only the import times: no servers")
    parser.add_argument("--shapes", nargs="+", choices=list(SHAPES), default=list(SHAPES), help="loads of the rounds")
    parser.add_argument("--rounds-only", action="store_true", help="only the rounds of the shapes: nothing after")
    args = parser.parse_args()
    handler = IMPORTS["the intake handler"]
    with tempfile.TemporaryDirectory(prefix="bench-bytecode-") as bytecode, tempfile.TemporaryDirectory() as none:
        if not args.imports_only:
            against_live_servers(args, bytecode)
        if args.rounds_only:
            return
        imports = import_seconds(list(IMPORTS.values()), bytecode)  # the servers stopped: a quieter machine
        from_sources = import_seconds([handler], none, compiled=False, repeats=5)[handler]
        ours_s = our_modules_seconds(bytecode)
    emit("\n| import (fresh interpreter, bytecode compiled) | ms | vs boto3 |\n|---|---:|---:|")
    for label, modules in IMPORTS.items():
        emit(f"| {label} | {imports[modules] * 1000:.0f} | {imports[modules] / imports['boto3']:.2f}x |")
    boto3_s = imports["boto3"]
    emit(f"| the intake handler without any bytecode | {from_sources * 1000:.0f} | {from_sources / boto3_s:.2f}x |")
    emit(f"| our modules alone (every other module already imported) | {ours_s * 1000:.0f} | {ours_s / boto3_s:.2f}x |")


def rounds(shape: Shape, pools: dict[str, Containers], args: argparse.Namespace) -> None:
    """Both handlers on ``shape``, ``args.rounds`` times, alternating who goes first."""
    emit(f"\n{shape.name}, {args.processes} processes\n")
    emit("| round | handler | requests/s | p50 ms | p95 ms | p99 ms | CPU ms/request | vs bare: requests/s, CPU |")
    emit("|---:|---|---:|---:|---:|---:|---:|---|")
    ratios: list[tuple[float, float]] = []
    for round_ in range(1, args.rounds + 1):
        order = ("bare", "intake") if round_ % 2 else ("intake", "bare")
        runs = {name: pools[name].load(shape, args.requests) for name in order}
        for name, run in sorted(runs.items()):
            rate, cpu = run.rate / runs["bare"].rate, runs["bare"].cpu_ms / run.cpu_ms
            emit(f"| {round_} | {name} | {run.summary()} | {rate:.2f}x, {cpu:.2f}x |")
        ratios.append((runs["intake"].rate / runs["bare"].rate, runs["bare"].cpu_ms / runs["intake"].cpu_ms))
        emit(f"<!-- round {round_} outcomes: { {name: dict(run.outcomes) for name, run in runs.items()} } -->")
    emit(
        f"\n{shape.name}, {args.processes} processes, median of {args.rounds} rounds: the intake at "
        f"{statistics.median(r for r, _ in ratios):.2f}x the bare handler's requests/s and "
        f"{statistics.median(c for _, c in ratios):.2f}x its CPU per answer (the bare handler's CPU over the intake's)"
    )


def per_answer(pools: dict[str, Containers], args: argparse.Namespace) -> None:
    """The CPU of each answer alone (make plan's figures), for both handlers, one load each."""
    emit(f"\none answer per load, {args.processes} processes\n")
    emit("| answer | handler | requests/s | p50 ms | p95 ms | p99 ms | CPU ms/request | outcomes |")
    emit("|---|---|---:|---:|---:|---:|---:|---|")
    for shape in ANSWERS.values():
        for name in ("bare", "intake"):
            run = pools[name].load(shape, args.requests)
            emit(f"| {shape.name} | {name} | {run.summary()} | {dict(run.outcomes)} |")


def against_live_servers(args: argparse.Namespace, bytecode: str) -> None:
    """The rounds of both handlers, the accounting run and the cold starts, on embedded servers."""
    with ExitStack() as stack:
        quiet_intake_servers(stack, "bench-intake-")

        pools = {name: Containers(module, args.processes) for name, module in HANDLERS.items()}
        for pool in pools.values():
            stack.callback(pool.close)
        for name in args.shapes:
            rounds(SHAPES[name], pools, args)
        if args.rounds_only:
            return
        per_answer(pools, args)

        coupon_id = create_coupon(total=100)
        outcomes: Counter[str] = Counter()
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
        cold_starts(create_coupon(total=10_000), bytecode)


if __name__ == "__main__":
    main()
