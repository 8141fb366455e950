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

So Powertools' own EMF provider writes the line once per container and set of metric names (the
namespace, the ``service`` dimension, each metric's unit, exactly as the function's ``Metrics``
would write them), and an answer only puts in its timestamp and latency (the counts are 1) and
prints it, as Powertools does: compact JSON, one line on stdout. A test holds every line to
Powertools' document for the same metrics. ``POWERTOOLS_METRICS_DISABLED`` (and
``POWERTOOLS_DEV``) are read once, with the first line.
"""

from __future__ import annotations

import functools
import json
import time
from typing import Any, cast

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

from coupon_core.domain.issuing import IssueOutcome
from coupon_core.observability import metrics

LATENCY = "IssueLatency"
RELEASE_FAILED = "ReleaseFailed"
COUNT_OF = {outcome: f"Issue{outcome.value.title().replace('_', '')}" for outcome in IssueOutcome}

_encode = json.JSONEncoder(separators=(",", ":")).encode  # what Powertools prints with
_MARK = "\x00mark\x00"  # where a value goes in a document, found in its encoding


def count(outcome: IssueOutcome, latency_ms: float, *, release_failed: bool) -> None:
    """Print the EMF line of one answer: its latency, its outcome's count, a failed release."""
    line = _line((COUNT_OF[outcome], RELEASE_FAILED) if release_failed else (COUNT_OF[outcome],))
    if line is not None:  # None: metrics disabled
        before_timestamp, before_latency, after = line
        print(f"{before_timestamp}{int(time.time() * 1000)}{before_latency}{float(latency_ms)!r}{after}")


@functools.cache
def _line(counted: tuple[str, ...]) -> tuple[str, str, str] | None:
    """Powertools' line of ``IssueLatency`` and the ``counted`` metrics (one each), cut where its
    timestamp and its latency go; None when metrics are disabled."""
    if is_metrics_disabled():
        return None
    provider = AmazonCloudWatchEMFProvider(namespace=metrics.namespace, service=metrics.service)
    provider.add_metric(name=LATENCY, unit=MetricUnit.Milliseconds, value=0)
    for name in counted:
        provider.add_metric(name=name, unit=MetricUnit.Count, value=1)
    document = cast("dict[str, Any]", provider.serialize_metric_set())  # a TypedDict, written into
    document["_aws"]["Timestamp"] = _MARK
    document[LATENCY] = [_MARK]
    before_timestamp, rest = _encode(document).split(_encode(_MARK), 1)
    before_latency, after = rest.split(_encode(_MARK), 1)
    return before_timestamp, before_latency, after
