"""The live view's figures from CloudWatch and SQS (moto): what the functions publish, read as
per-second rates, and a figure that cannot be read said so, never 0."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import boto3
import botocore.exceptions
import pytest
from moto import mock_aws

from coupon_client.environment import Target
from coupon_client.metrics import CLOUDWATCH_EVERY_S, INTAKE_SERVICE, Answers, StackMetrics, Unavailable
from coupon_core.observability import ISSUE_COUNT_OF, ISSUE_LATENCY

NAMESPACE = "CouponSystem-dev"


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield boto3.Session(region_name="eu-west-1")


def target(session, **overrides) -> Target:
    dlq = session.client("sqs").create_queue(QueueName="dlq")["QueueUrl"]
    fields = {"api_url": "https://a.execute-api.eu-west-1.amazonaws.com/dev", "region": "eu-west-1", "name": "dev",
              "dlq_url": dlq, "worker_function": "worker", "metrics_namespace": NAMESPACE}  # fmt: skip
    return Target(**{**fields, **overrides})


@pytest.fixture
def now() -> float:
    """One instant per test, for the datapoints and the reader alike: a test that read the clock twice
    would fail whenever a minute turned between the two reads."""
    return time.time()


def minute_of(now: float, minutes_ago: int) -> datetime:
    return datetime.fromtimestamp(now, UTC).replace(second=0, microsecond=0) - timedelta(minutes=minutes_ago)


def put(session, namespace: str, name: str, dimensions: dict[str, str], value: float, at: datetime) -> None:
    session.client("cloudwatch").put_metric_data(
        Namespace=namespace,
        MetricData=[
            {
                "MetricName": name,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
                "Value": value,
                "Timestamp": at,
            }
        ],
    )


def test_the_intakes_metric_names_are_the_ones_read():
    """The dimension, ``service``, is Powertools' (held in tests/unit/functions/intake/test_observability.py)."""
    assert ISSUE_LATENCY == "IssueLatency"
    assert ISSUE_COUNT_OF  # every outcome's count is an Issue* metric, which the view lists by prefix
    assert all(name.startswith("Issue") and name != ISSUE_LATENCY for name in ISSUE_COUNT_OF.values())


def test_answers_per_second_by_outcome_in_the_last_minute_with_data(aws, now):
    service = {"service": INTAKE_SERVICE}
    put(aws, NAMESPACE, "IssueSoldOut", service, 1200, at=minute_of(now, 3))
    put(aws, NAMESPACE, "IssueSoldOut", service, 600, at=minute_of(now, 2))
    put(aws, NAMESPACE, "IssueSuccess", service, 30, at=minute_of(now, 2))
    put(aws, NAMESPACE, "ReleaseFailed", service, 1, at=minute_of(now, 2))  # not an answer
    put(aws, "AWS/Lambda", "OffsetLag", {"FunctionName": "worker"}, 250, at=minute_of(now, 1))
    session_target = target(aws)
    aws.client("sqs").send_message(QueueUrl=session_target.dlq_url, MessageBody="{}")

    figures = StackMetrics(aws, session_target, clock=lambda: now).read()

    assert isinstance(figures.answers, Answers)
    assert figures.answers.per_second == {"SOLD_OUT": 10.0, "SUCCESS": 0.5}
    assert figures.answers.at == minute_of(now, 2)
    assert figures.worker_lag == 250
    assert figures.dead_letters == 1


def test_no_datapoints_is_said_not_shown_as_zero(aws):
    figures = StackMetrics(aws, target(aws)).read()

    assert figures.answers == Unavailable(f"no answers counted in {NAMESPACE} in the last 5 minutes")
    assert isinstance(figures.worker_lag, Unavailable)
    assert figures.dead_letters == 0  # the queue was read: it is empty


@pytest.fixture
def endpoint(monkeypatch, moto_endpoint):
    """AWS's APIs at an endpoint of one's own, with its test identity."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    return moto_endpoint


def test_through_an_endpoint_of_ones_own_no_datapoints_says_it_measures_nothing(endpoint):
    session = boto3.Session(region_name="eu-west-1")
    dlq = session.client("sqs", endpoint_url=endpoint).create_queue(QueueName="dlq")["QueueUrl"]
    through = Target("https://a.execute-api.eu-west-1.amazonaws.com/dev", "eu-west-1", "local", dlq, "worker",
                     NAMESPACE, aws_endpoint=endpoint)  # fmt: skip

    figures = StackMetrics(session, through).read()

    assert isinstance(figures.answers, Unavailable)
    assert f"through {endpoint}, which publishes no such metric" in figures.answers.reason
    assert figures.dead_letters == 0  # read at the endpoint, not at AWS


def test_a_statistic_the_endpoint_fails_on_is_named_with_its_answer_and_no_iam_action(aws, monkeypatch, now):
    session_target = target(aws)
    metrics = StackMetrics(aws, session_target, clock=lambda: now)
    put(aws, NAMESPACE, "IssueSuccess", {"service": INTAKE_SERVICE}, 60, at=minute_of(now, 1))
    real = metrics._series  # the percentile query alone fails, as LocalStack's does on p50

    def failing_on_percentiles(queries, now):
        if any(q["MetricStat"]["Stat"] == "p50" for q in queries):
            error = {"Error": {"Code": "InternalError", "Message": "exception while calling cloudwatch"}}
            raise botocore.exceptions.ClientError(error, "GetMetricData")
        return real(queries, now)

    monkeypatch.setattr(metrics, "_series", failing_on_percentiles)
    figures = metrics.read()

    assert isinstance(figures.answers, Answers)  # the counts are still read
    assert figures.latency == Unavailable(
        "AWS failed to give the p50 and p99 statistics of IssueLatency: "
        "InternalError (exception while calling cloudwatch)"
    )


def test_a_denied_read_names_the_iam_action(aws, monkeypatch):
    metrics = StackMetrics(aws, target(aws))
    error = {"Error": {"Code": "AccessDenied", "Message": "User: x is not authorized"}}

    def denied(*_args, **_kwargs):
        raise botocore.exceptions.ClientError(error, "GetQueueAttributes")

    monkeypatch.setattr(metrics._sqs, "get_queue_attributes", denied)

    assert metrics.read().dead_letters == Unavailable("AccessDenied: your identity may not call sqs:GetQueueAttributes")


def test_given_an_api_url_alone_each_figure_names_what_it_lacks(aws):
    figures = StackMetrics(aws, Target(api_url="https://x/dev", region="eu-west-1")).read()

    assert "MetricsNamespace is unknown" in figures.answers.reason  # type: ignore[union-attr]
    assert "WorkerFunctionName is unknown" in figures.worker_lag.reason  # type: ignore[union-attr]
    assert "DlqUrl is unknown" in figures.dead_letters.reason  # type: ignore[union-attr]


def test_cloudwatch_is_asked_at_most_every_ten_seconds_and_the_queue_every_time(aws, now):
    start = now - now % 60  # the reads below stay within the minute the datapoint is counted before
    clock = [start]
    session_target = target(aws)
    metrics = StackMetrics(aws, session_target, clock=lambda: clock[0])
    first = metrics.read()
    put(aws, NAMESPACE, "IssueSuccess", {"service": INTAKE_SERVICE}, 60, at=minute_of(now, 1))
    aws.client("sqs").send_message(QueueUrl=session_target.dlq_url, MessageBody="{}")

    clock[0] += CLOUDWATCH_EVERY_S - 1
    cached = metrics.read()
    clock[0] += 1
    fresh = metrics.read()

    assert cached.answers == first.answers
    assert cached.dead_letters == 1
    assert isinstance(fresh.answers, Answers)
    assert fresh.answers.per_second == {"SUCCESS": 1.0}
