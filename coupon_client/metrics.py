"""What the live view reads beside the API: the intake's answers and latency, the worker's lag
and the dead letters waiting, from what the functions and the stack already publish.

- The intake writes one embedded-metric line per answer (``functions/intake/app.py``, ``count_issue``):
  a count per outcome (``IssueSuccess``, ``IssueSoldOut``, ...) and ``IssueLatency``, under the
  ``service`` dimension, in the stack's namespace (its ``MetricsNamespace`` output). Those are
  one-minute metrics of every coupon together: the view shows the last minute that has data, per
  second, and says so.
- The worker's lag is Lambda's ``OffsetLag`` of the MSK mapping; the dead letters are the DLQ's
  visible messages (SQS's attribute, read live).

A figure that cannot be read is an :class:`Unavailable` with the reason, never a 0: no
datapoints (no answers in five minutes, or an endpoint such as LocalStack that turns no
embedded-metric line into a metric), an output the stack lacks, an action the identity may not
call (AWS said AccessDenied: the reason names the IAM action), or a metric or statistic the
endpoint failed to compute (the reason names it, and what the endpoint answered). The counts and
the latency percentiles are asked apart, so that an endpoint that computes no percentile still
gives the counts. CloudWatch is asked at most every ``CLOUDWATCH_EVERY_S``: its figures change
once a minute, and each metric read is billed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import botocore.exceptions

from coupon_client.environment import DENIED_CODES, Target

INTAKE_SERVICE = "coupon-intake"  # the intake's POWERTOOLS_SERVICE_NAME, its metrics' dimension
OUTCOME_PREFIX, LATENCY = "Issue", "IssueLatency"
LOOK_BACK = timedelta(minutes=5)
MINUTE_S = 60
CLOUDWATCH_EVERY_S = 10.0
LIST_EVERY_S = 60.0  # how often the outcomes with a metric are listed anew


@dataclass(frozen=True)
class Unavailable:
    reason: str


NO_NAMESPACE = Unavailable("the stack's MetricsNamespace is unknown (give --env, not --api-url)")


@dataclass(frozen=True)
class Answers:
    per_second: dict[str, float]  # by outcome (SUCCESS, SOLD_OUT, ...), in the minute ``at``
    at: datetime


@dataclass(frozen=True)
class Latency:
    p50_ms: float | None
    p99_ms: float | None
    at: datetime


@dataclass(frozen=True)
class StackFigures:
    answers: Answers | Unavailable
    latency: Latency | Unavailable
    worker_lag: float | Unavailable  # records behind
    dead_letters: int | Unavailable  # visible in the DLQ


class StackMetrics:
    """Reads the figures of one deployment with the operator's session."""

    def __init__(self, session: boto3.Session, target: Target, *, clock: Callable[[], float] = time.time) -> None:
        self._target = target
        self._clock = clock
        self._cloudwatch = session.client("cloudwatch", endpoint_url=target.aws_endpoint)
        self._sqs = session.client("sqs", endpoint_url=target.aws_endpoint)
        self._outcomes: list[str] = []
        self._listed_at = -LIST_EVERY_S
        self._read_at = -CLOUDWATCH_EVERY_S
        self._cached: tuple[Answers | Unavailable, Latency | Unavailable, float | Unavailable] | None = None
        # no datapoints on AWS: nothing happened; through an emulator: nothing is measured
        self._where = f" (through {target.aws_endpoint}, which publishes no such metric)" if target.aws_endpoint else ""

    def read(self) -> StackFigures:
        now = self._clock()
        if self._cached is None or now - self._read_at >= CLOUDWATCH_EVERY_S:
            self._cached = (self._answers(now), self._latency(now), self._worker_lag(now))
            self._read_at = now
        return StackFigures(*self._cached, dead_letters=self._dead_letters())

    def _answers(self, now: float) -> Answers | Unavailable:
        namespace = self._target.metrics_namespace
        if namespace is None:
            return NO_NAMESPACE
        try:
            if now - self._listed_at >= LIST_EVERY_S or not self._outcomes:
                self._outcomes = self._listed(namespace)
                self._listed_at = now
            queries = [_query(f"o{i}", namespace, name, _SERVICE, "Sum") for i, name in enumerate(self._outcomes)]
            series = self._series(queries, now)
        except botocore.exceptions.ClientError as exc:
            return Unavailable(self._failed(exc, f"the Sum of the Issue* counts in {namespace}",
                                            "cloudwatch:ListMetrics, cloudwatch:GetMetricData"))  # fmt: skip
        counted = {key: points for key, points in series.items() if points}
        if not counted:
            return Unavailable(
                f"no answers counted in {namespace} in the last {_minutes(LOOK_BACK)} minutes{self._where}"
            )
        at = max(max(points) for points in counted.values())
        per_second = {
            _outcome(self._outcomes[int(key[1:])]): points.get(at, 0.0) / MINUTE_S for key, points in counted.items()
        }
        return Answers(per_second, at)

    def _latency(self, now: float) -> Latency | Unavailable:
        namespace = self._target.metrics_namespace
        if namespace is None:
            return NO_NAMESPACE
        queries = [_query(key, namespace, LATENCY, _SERVICE, key) for key in ("p50", "p99")]
        try:
            series = self._series(queries, now)
        except botocore.exceptions.ClientError as exc:
            statistics = f"the p50 and p99 statistics of {LATENCY}"
            return Unavailable(self._failed(exc, statistics, "cloudwatch:GetMetricData"))
        if not series["p50"] and not series["p99"]:
            return Unavailable(f"no {LATENCY} datapoints in the last {_minutes(LOOK_BACK)} minutes{self._where}")
        at = max([*series["p50"], *series["p99"]])
        return Latency(series["p50"].get(at), series["p99"].get(at), at)

    def _worker_lag(self, now: float) -> float | Unavailable:
        function = self._target.worker_function
        if function is None:
            return Unavailable("the stack's WorkerFunctionName is unknown (give --env, not --api-url)")
        try:
            points = self._series(
                [_query("lag", "AWS/Lambda", "OffsetLag", {"FunctionName": function}, "Maximum")], now
            )["lag"]
        except botocore.exceptions.ClientError as exc:
            return Unavailable(self._failed(exc, "the Maximum of OffsetLag", "cloudwatch:GetMetricData"))
        if not points:
            return Unavailable(f"no OffsetLag datapoints in the last {_minutes(LOOK_BACK)} minutes{self._where}")
        return points[max(points)]

    def _dead_letters(self) -> int | Unavailable:
        if self._target.dlq_url is None:
            return Unavailable("the stack's DlqUrl is unknown (give --env, not --api-url)")
        try:
            attributes = self._sqs.get_queue_attributes(
                QueueUrl=self._target.dlq_url, AttributeNames=["ApproximateNumberOfMessages"]
            )["Attributes"]
        except botocore.exceptions.ClientError as exc:
            return Unavailable(self._failed(exc, "the DLQ's ApproximateNumberOfMessages", "sqs:GetQueueAttributes"))
        return int(attributes["ApproximateNumberOfMessages"])

    def _failed(self, exc: botocore.exceptions.ClientError, what: str, actions: str) -> str:
        """Why ``what`` could not be read: the IAM actions when AWS denied them, else what the
        endpoint answered."""
        error = exc.response.get("Error", {})
        code, message = error.get("Code", "error"), error.get("Message", "")
        if code in DENIED_CODES:
            return f"{code}: your identity may not call {actions}"
        where = self._target.aws_endpoint or "AWS"
        return f"{where} failed to give {what}: {code}{f' ({message})' if message else ''}"

    def _listed(self, namespace: str) -> list[str]:
        names = set()
        dimensions = [{"Name": name, "Value": value} for name, value in _SERVICE.items()]
        for page in self._cloudwatch.get_paginator("list_metrics").paginate(Namespace=namespace, Dimensions=dimensions):
            names |= {m["MetricName"] for m in page["Metrics"]}
        return sorted(n for n in names if n.startswith(OUTCOME_PREFIX) and n != LATENCY)

    def _series(self, queries: list[dict[str, Any]], now: float) -> dict[str, dict[datetime, float]]:
        """Each query's values by minute over the look-back, in whole minutes up to the current one
        (which is still being counted)."""
        end = datetime.fromtimestamp(now, UTC).replace(second=0, microsecond=0)
        found: dict[str, dict[datetime, float]] = {query["Id"]: {} for query in queries}
        if not queries:
            return found
        pages = self._cloudwatch.get_paginator("get_metric_data").paginate(
            MetricDataQueries=queries, StartTime=end - LOOK_BACK, EndTime=end
        )
        for page in pages:
            for result in page["MetricDataResults"]:
                found[result["Id"]].update(zip(result["Timestamps"], result["Values"], strict=True))
        return found


_SERVICE = {"service": INTAKE_SERVICE}


def _query(key: str, namespace: str, name: str, dimensions: dict[str, str], statistic: str) -> dict[str, Any]:
    metric = {
        "Namespace": namespace,
        "MetricName": name,
        "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
    }
    return {"Id": key, "MetricStat": {"Metric": metric, "Period": MINUTE_S, "Stat": statistic}, "ReturnData": True}


def _outcome(metric: str) -> str:
    """``IssueSoldOut`` -> ``SOLD_OUT``: the API's status the metric counts."""
    words = [c if c.islower() else f"_{c}" for c in metric.removeprefix(OUTCOME_PREFIX)]
    return "".join(words).lstrip("_").upper()


def _minutes(span: timedelta) -> int:
    return int(span.total_seconds() // MINUTE_S)
