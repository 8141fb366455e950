"""Where the intake's fixed cost per answer goes: ``python -m bench.intake_fixed_cost``.

A sale is nearly all answers without a produce (SOLD_OUT, DUPLICATE), and for those the intake's
own work beside the one EVALSHA is what separates it from the bare handler of
``bench/bare_intake.py``. Here, in one process against embedded servers (or those named by
REDIS_URL, KAFKA_BOOTSTRAP_SERVERS and DATABASE_URL), the same SOLD_OUT request is answered by
the bare handler, by the intake, by the intake logging and counting through Powertools' decorators
(``inject_lambda_context`` with a JMESPath correlation id, ``Metrics``), and by the
intake with a part taken away (its Logger context, its metrics line, both), the variants taking
turns in rounds so that a drift of the machine falls on all. Prints each one's CPU per request
and its ratio to the bare handler's: what each part costs, measured side by side.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit

from bench.intake import ANSWERS, create_coupon, emit, quiet_intake_servers
from coupon_core import observability
from coupon_core.domain.issuing import IssueResult
from coupon_core.observability import logger, metrics
from functions.intake import app as intake_app
from local.testkit.lambda_events import InProcessContext, api_event

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def _powertools_count(result: IssueResult, latency_ms: float) -> None:
    """The issue metrics through Powertools' ``Metrics``."""
    metrics.add_metric(name=observability.ISSUE_LATENCY, unit=MetricUnit.Milliseconds, value=latency_ms)
    metrics.add_metric(name=observability.ISSUE_COUNT_OF[result.outcome], unit=MetricUnit.Count, value=1)
    if result.release_failed:
        metrics.add_metric(name=observability.RELEASE_FAILED, unit=MetricUnit.Count, value=1)


def _uncounted(result: IssueResult, latency_ms: float) -> None:
    """No metrics at all: what they cost."""


@contextlib.contextmanager
def _counting(count: Callable[..., None]) -> Iterator[None]:
    """Issue answers counted by ``count`` meanwhile."""
    original = observability.count_issue
    observability.count_issue = count
    try:
        yield
    finally:
        observability.count_issue = original


def variants() -> dict[str, tuple[Handler, Callable[..., None]]]:
    """The handlers measured, by name, each with the way issue answers are counted."""
    from bench import bare_intake  # noqa: PLC0415 - connects when imported: after the servers are up

    lanes = inspect.unwrap(intake_app.handler)  # the handler under its Logger context
    # Powertools' Lambda context, its correlation id found by JMESPath, and Metrics' decorator
    # flushing the answer's metrics: what the intake's own context and line stand in for.
    powertools_context = logger.inject_lambda_context(
        correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True
    )
    return {
        "bare": (bare_intake.handler, _uncounted),
        "the intake": (intake_app.handler, observability.count_issue),
        "the intake with Powertools' Metrics and JMESPath's correlation id": (
            powertools_context(metrics.log_metrics(lanes)),
            _powertools_count,
        ),
        "with Powertools' inject_lambda_context instead of its Logger context": (
            powertools_context(lanes),
            observability.count_issue,
        ),
        "without its Logger context": (lanes, observability.count_issue),
        "without metrics": (intake_app.handler, _uncounted),
        "without its Logger context or metrics": (lanes, _uncounted),
    }


def cpu_per_request(variant: tuple[Handler, Callable[..., None]], events: list[dict[str, Any]]) -> float:
    """CPU seconds per request of a variant answering ``events`` one after another."""
    handler, count = variant
    context = InProcessContext()
    with _counting(count):
        started = time.process_time()
        for event in events:
            handler(event, context)
        return (time.process_time() - started) / len(events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3_000, help="requests per variant per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with ExitStack() as stack:
        quiet_intake_servers(stack, "bench-fixed-cost-")
        coupon_id = create_coupon(total=ANSWERS["SOLD_OUT"].copies(args.requests) + 1)  # the warm-up takes it
        events = [
            api_event("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user})
            for user in range(1, args.requests + 1)
        ]
        handlers = variants()
        for handler in handlers.values():
            cpu_per_request(handler, events[:200])  # warm: connections, caches
        runs: dict[str, list[float]] = {name: [] for name in handlers}
        for round_ in range(args.rounds):
            names = list(handlers) if round_ % 2 == 0 else list(reversed(handlers))
            for name in names:
                runs[name].append(cpu_per_request(handlers[name], events))
    bare = statistics.median(runs["bare"])
    emit(f"\nSOLD_OUT, one process, {args.requests:,} requests per variant, {args.rounds} rounds\n")
    emit("| handler | CPU ms/request (median) | fastest round | slowest round | vs bare (median) |")
    emit("|---|---:|---:|---:|---:|")
    for name, seconds in runs.items():
        cpu = statistics.median(seconds)
        spread = f"{min(seconds) * 1000:.3f} | {max(seconds) * 1000:.3f}"
        emit(f"| {name} | {cpu * 1000:.3f} | {spread} | {cpu / bare:.2f}x |")


if __name__ == "__main__":
    main()
