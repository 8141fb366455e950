"""Benchmark: what the measure of arrival order adds to each answer's metrics line
(``python -m bench.metrics_line``).

Side by side in one run, alternating: the intake's ``count_issue`` as it is (the counts, and the
coupon, outcome, arrival, decision, request id and repeated decision as the line's properties), and the same
counts without the properties. Each builds and serializes the line as Powertools' ``log_metrics``
does when the handler returns (``serialize_metric_set``, then ``json.dumps``), and clears it. What
it changes on AWS: the bytes CloudWatch Logs ingests per answer (billed per GB), and the
microseconds of the handler's CPU (Lambda bills whole milliseconds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import uuid
from collections.abc import Callable

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "coupon-intake")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "CouponSystem-bench")

from aws_lambda_powertools.metrics import MetricUnit

from coupon_core import observability
from coupon_core.domain.issuing import IssueResult
from coupon_core.domain.reservations import IssueOutcome
from coupon_core.observability import ISSUE_COUNT_OF, ISSUE_LATENCY, metrics

RESULT = IssueResult(  # an answer from the memory: the longest line but a 503's
    IssueOutcome.SOLD_OUT,
    remembered=True,
    replays=1_764_590_400_120,
    request_id=uuid.UUID("c5a8d0e4-3b8e-4b7f-9a55-2f4c8e1d7a60"),
)
ARRIVED_AT, COUPON_ID, DECIDED_AT = 1_764_590_400_123, 4_217, 1_764_590_400_131
GB_PRICE_USD = 0.50  # CloudWatch Logs' standard ingestion, per GB, us-east-1


def with_fields() -> None:
    observability.count_issue(RESULT, 1.234, COUPON_ID, ARRIVED_AT, DECIDED_AT)


def counts_only() -> None:
    metrics.add_metric(name=ISSUE_LATENCY, unit=MetricUnit.Milliseconds, value=1.234)
    metrics.add_metric(name=ISSUE_COUNT_OF[RESULT.outcome], unit=MetricUnit.Count, value=1)
    metrics.add_metric(name=observability.FROM_MEMORY, unit=MetricUnit.Count, value=1)


def line_of(count: Callable[[], None]) -> str:
    """One answer's line, as the handler's ``log_metrics`` prints it."""
    count()
    line = json.dumps(metrics.serialize_metric_set(), separators=(",", ":"))
    metrics.clear_metrics()
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--answers", type=int, default=20_000, help="lines per round, per variant")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    variants = {"with the arrival fields (as deployed)": with_fields, "the counts only": counts_only}
    micros: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, count in variants.items():
            started = time.perf_counter()
            for _ in range(args.answers):
                line_of(count)
            micros[name].append((time.perf_counter() - started) / args.answers * 1e6)
    sizes = {name: len(line_of(count).encode()) for name, count in variants.items()}
    median = {name: statistics.median(measured) for name, measured in micros.items()}
    print(f"{args.rounds} rounds of {args.answers:,} lines per variant, alternating; median per answer")
    for name in variants:
        cost = sizes[name] * 1_000_000 / 1e9 * GB_PRICE_USD
        print(f"{name:40} {median[name]:6.1f} µs  {sizes[name]:4} bytes  ${cost:.3f} per million answers ingested")
    deployed, base = variants
    print(
        f"added per answer: {median[deployed] - median[base]:.1f} µs of CPU ({median[deployed] / median[base]:.2f}x), "
        f"{sizes[deployed] - sizes[base]} bytes"
    )


if __name__ == "__main__":
    main()
