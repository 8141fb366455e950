"""The metrics of one issue answer: one CloudWatch EMF line, its constant part built once.

Every answer of ``POST /coupon-issues`` is counted by outcome (``IssueSuccess``,
``IssueSoldOut``, ...) and timed (``IssueLatency``, ms), and a reservation left held after a
failed publish is counted too (``ReleaseFailed``); alarms and dashboards read these, and
``make plan`` takes its round trips from ``IssueLatency``.

Through Powertools' ``Metrics`` those values cost about 28 µs an answer (``bench/
intake_fixed_cost.py``): each ``add_metric`` checks its name and unit against lists and formats a
debug message, and each flush builds the document afresh and reads two environment variables to
decide whether metrics are disabled. A sale answers mostly SOLD_OUT and DUPLICATE, each in about
0.1 ms of the handler's own CPU, so that was a quarter of the answer.

So the line is written here, by AWS's embedded metric format specification
(docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
one metric directive in the function's namespace (``POWERTOOLS_METRICS_NAMESPACE``) with the
``service`` dimension (``POWERTOOLS_SERVICE_NAME``), as the other functions' Metrics write it.
All of it but the timestamp and the latency is encoded once per container and set of metric
names; an answer fills those two in and prints the line, compact JSON on stdout. A test
validates every line against the specification. ``POWERTOOLS_METRICS_DISABLED`` and
``POWERTOOLS_DEV`` are honoured as Powertools documents them, read once, with the first line.
"""

from __future__ import annotations

import functools
import json
import os
import time
from dataclasses import dataclass

from coupon_core.domain.issuing import IssueOutcome
from coupon_core.observability import TRUE, metrics

LATENCY = "IssueLatency"
RELEASE_FAILED = "ReleaseFailed"
COUNT_OF = {outcome: f"Issue{outcome.value.title().replace('_', '')}" for outcome in IssueOutcome}
DIMENSION = "service"

_encode = json.JSONEncoder(separators=(",", ":")).encode


@dataclass(frozen=True)
class _Line:
    """One line's encoded parts, around its timestamp (epoch ms) and its latency (ms)."""

    head: str  # up to the timestamp
    middle: str  # from the timestamp to the latency
    tail: str  # after the latency


def count(outcome: IssueOutcome, latency_ms: float, *, release_failed: bool) -> None:
    """Print the EMF line of one answer: its latency, its outcome's count, a failed release."""
    line = _line((COUNT_OF[outcome], RELEASE_FAILED) if release_failed else (COUNT_OF[outcome],))
    if line is not None:  # None: metrics disabled
        print(f"{line.head}{int(time.time() * 1000)}{line.middle}{float(latency_ms)!r}{line.tail}")


@functools.cache
def _line(counted: tuple[str, ...]) -> _Line | None:
    """The parts of the line of ``IssueLatency`` and the ``counted`` metrics (one each); None when
    metrics are disabled."""
    if disabled():
        return None
    definitions = [{"Name": LATENCY, "Unit": "Milliseconds"}, *({"Name": name, "Unit": "Count"} for name in counted)]
    directive = {"Namespace": metrics.namespace, "Dimensions": [[DIMENSION]], "Metrics": definitions}
    members = "".join(f",{_encode(name)}:[1.0]" for name in counted)
    return _Line(
        head='{"_aws":{"Timestamp":',
        middle=f',"CloudWatchMetrics":[{_encode(directive)}]}},{_encode(DIMENSION)}:{_encode(metrics.service)},'
        f"{_encode(LATENCY)}:[",
        tail=f"]{members}}}",
    )


def disabled() -> bool:
    """Metrics are off with ``POWERTOOLS_METRICS_DISABLED`` true, or with ``POWERTOOLS_DEV`` true
    unless ``POWERTOOLS_METRICS_DISABLED`` is set to false (Powertools' documented rule)."""
    explicit = os.environ.get("POWERTOOLS_METRICS_DISABLED")
    setting = explicit if explicit is not None else os.environ.get("POWERTOOLS_DEV", "false")
    return setting.strip().lower() in TRUE
