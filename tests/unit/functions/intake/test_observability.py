"""What operators read of the intake's answers: the metrics line and the log keys, each held to
what Powertools itself writes (the intake writes both its own way, for their cost per answer)."""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit

from coupon_core import observability
from coupon_core.domain.issuing import IssueResult
from coupon_core.domain.reservations import IssueOutcome
from coupon_core.observability import lambda_context, logger, metrics
from functions.intake import app
from local.testkit.lambda_events import InProcessContext, api_event
from tests import emf_specification
from tests.unit.functions.intake.test_app import service  # noqa: F401 - the fixture


@pytest.fixture(autouse=True)
def fresh_lines() -> Iterator[None]:
    observability._line.cache_clear()
    yield
    observability._line.cache_clear()


def _printed(action: Any) -> list[str]:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        action()
    return out.getvalue().splitlines()


# What else an answer may count beside its outcome: the flag of IssueResult, and its metric.
ALSO_COUNTED = {
    None: None,
    "release_failed": "ReleaseFailed",
    "remembered": "IssueFromMemory",
    "learned": "IssueMemoryRefresh",
}


def _result(outcome: IssueOutcome, flag: str | None) -> IssueResult:
    return IssueResult(outcome, **({flag: True} if flag else {}))


def _powertools_document(outcome: IssueOutcome, latency_ms: float, flag: str | None) -> dict[str, Any]:
    """The document Powertools' Metrics prints for the same metrics (how the intake counted before)."""
    metrics.add_metric(name="IssueLatency", unit=MetricUnit.Milliseconds, value=latency_ms)
    metrics.add_metric(name=observability.ISSUE_COUNT_OF[outcome], unit=MetricUnit.Count, value=1)
    if (name := ALSO_COUNTED[flag]) is not None:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
    (line,) = _printed(metrics.flush_metrics)
    return json.loads(line)


@pytest.mark.parametrize("flag", list(ALSO_COUNTED))
@pytest.mark.parametrize("outcome", list(IssueOutcome))
def test_an_answers_metrics_line_follows_the_emf_specification(outcome, flag):
    (line,) = _printed(lambda: observability.count_issue(_result(outcome, flag), 12.345678))
    assert emf_specification.problems(line) == []


def test_the_emf_checker_finds_what_breaks_the_specification():
    """The checker of the test above fails on lines that break the specification."""
    (line,) = _printed(lambda: observability.count_issue(IssueResult(IssueOutcome.SOLD_OUT), 1.5))
    document = json.loads(line)
    broken = [
        {**document, "IssueSoldOut": "one"},  # a metric's value that is no number
        {key: value for key, value in document.items() if key != "service"},  # a dimension with no member
        {**document, "_aws": {**document["_aws"], "Timestamp": "now"}},
        {**document, "_aws": {"Timestamp": 1}},  # no directives
    ]
    definitions = document["_aws"]["CloudWatchMetrics"][0]["Metrics"]
    bad_unit = [{**definitions[0], "Unit": "Milliseconds/Second"}, *definitions[1:]]
    broken.append({**document, "_aws": {**document["_aws"], "CloudWatchMetrics": [
        {**document["_aws"]["CloudWatchMetrics"][0], "Metrics": bad_unit}]}})  # fmt: skip
    for case in broken:
        assert emf_specification.problems(json.dumps(case)), case
    assert emf_specification.problems(line[:-1])  # not one JSON document


@pytest.mark.parametrize("flag", list(ALSO_COUNTED))
@pytest.mark.parametrize("outcome", list(IssueOutcome))
def test_an_answers_metrics_line_is_the_document_powertools_prints(outcome, flag):
    before = int(time.time() * 1000)
    (line,) = _printed(lambda: observability.count_issue(_result(outcome, flag), 12.345678))
    after = int(time.time() * 1000)
    ours, theirs = json.loads(line), _powertools_document(outcome, 12.345678, flag)
    assert before <= ours["_aws"].pop("Timestamp") <= after
    theirs["_aws"].pop("Timestamp")
    assert ours == theirs
    assert ours["IssueLatency"] == [12.345678]
    assert ours[observability.ISSUE_COUNT_OF[outcome]] == [1.0]


@pytest.mark.parametrize(
    ("variables", "printed"),
    [
        ({"POWERTOOLS_METRICS_DISABLED": "true"}, False),
        ({"POWERTOOLS_METRICS_DISABLED": "false"}, True),
        ({"POWERTOOLS_DEV": "true"}, False),
        ({"POWERTOOLS_DEV": "true", "POWERTOOLS_METRICS_DISABLED": "false"}, True),
        ({"POWERTOOLS_DEV": "false"}, True),
    ],
)
def test_metrics_are_disabled_as_powertools_documents(monkeypatch, variables, printed):
    """The same rule as Powertools' Metrics, held to it (its flush prints nothing when disabled)."""
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_DEV"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    ours = _printed(lambda: observability.count_issue(IssueResult(IssueOutcome.SOLD_OUT), 1.0))
    metrics.add_metric(name="IssueLatency", unit=MetricUnit.Milliseconds, value=1.0)
    theirs = _printed(metrics.flush_metrics)
    assert (bool(ours), bool(theirs)) == (printed, printed)


def test_an_express_answer_prints_one_metrics_line_with_its_outcome_and_latency(service):  # noqa: F811
    service.result = IssueResult(IssueOutcome.SOLD_OUT)
    event = api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7})
    lines = _printed(lambda: app.handler(event, InProcessContext()))
    documents = [json.loads(line) for line in lines if line.startswith('{"_aws"')]
    assert len(documents) == 1
    (document,) = documents
    assert document["IssueSoldOut"] == [1.0]
    assert document["IssueLatency"][0] >= 0
    assert [m["Name"] for m in document["_aws"]["CloudWatchMetrics"][0]["Metrics"]] == ["IssueLatency", "IssueSoldOut"]


def _logged(handler: Any, invocations: list[tuple[dict[str, Any], InProcessContext]]) -> list[dict[str, Any]]:
    """The lines ``handler`` logs over ``invocations``, without the time and place of each."""
    stream = io.StringIO()
    previous = logger.registered_handler.setStream(stream)
    try:
        for event, context in invocations:
            handler(event, context)
    finally:
        logger.registered_handler.setStream(previous)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    for line in lines:
        del line["timestamp"], line["location"]
    return lines


def _appends_then_logs(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if event.get("body") is not None:  # the first invocation: a key of its own, which must not outlive it
        logger.append_keys(couponId=3)
    logger.info("answered")
    return {}


def test_the_intakes_log_lines_carry_what_powertools_lambda_context_gives(monkeypatch):
    monkeypatch.delenv("AWS_LAMBDA_INITIALIZATION_TYPE", raising=False)
    invocations = [
        (api_event("POST", "/coupon-issues", {"couponId": 3}), InProcessContext()),
        (api_event("GET", "/coupons/3"), InProcessContext(aws_request_id="second")),
        ({"not": "from API Gateway"}, InProcessContext(aws_request_id="third")),
    ]
    powertools = logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
    theirs = _logged(powertools(_appends_then_logs), invocations)
    ours = _logged(lambda_context(app.request_id_of)(_appends_then_logs), invocations)
    theirs[0]["cold_start"] = True  # Powertools' flag is its module's: this process's first call was long ago
    assert ours == theirs
    assert [line.get("couponId") for line in ours] == [3, None, None]
    assert [line["cold_start"] for line in ours] == [True, False, False]
    assert [line.get("correlation_id") for line in ours] == [event["requestContext"]["requestId"]
                                                             for event, _ in invocations[:2]] + [None]  # fmt: skip


def test_a_provisioned_container_is_never_a_cold_start(monkeypatch):
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "provisioned-concurrency")
    handler = lambda_context(app.request_id_of)(_appends_then_logs)
    (line,) = _logged(handler, [(api_event("GET", "/x"), InProcessContext())])
    assert line["cold_start"] is False


def _logs_at_every_level(event: dict[str, Any], context: Any) -> dict[str, Any]:
    logger.debug("looked")
    logger.info("answered")
    return {}


def test_the_intakes_context_logs_the_event_when_asked_as_powertools_does(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_LOGGER_LOG_EVENT", "true")
    invocations = [(api_event("POST", "/coupon-issues", {"couponId": 3}), InProcessContext())]
    powertools = logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
    theirs = _logged(powertools(_appends_then_logs), invocations)
    ours = _logged(lambda_context(app.request_id_of)(_appends_then_logs), invocations)
    for line in (*ours, *theirs):
        line.pop("cold_start")
    assert ours == theirs
    assert [line["message"] for line in ours] == [invocations[0][0], "answered"]


def test_the_intakes_context_samples_each_warm_invocation_as_powertools_does(monkeypatch):
    """POWERTOOLS_LOGGER_SAMPLE_RATE=1: every warm invocation logs at debug, as under the decorator."""
    monkeypatch.setattr(logger, "sampling_rate", 1.0)
    level = logger.log_level
    invocation = [(api_event("GET", "/coupons/3"), InProcessContext())]
    powertools = logger.inject_lambda_context(clear_state=True)(_logs_at_every_level)
    ours = lambda_context(app.request_id_of)(_logs_at_every_level)
    seen = {}
    try:
        for name, handler in (("theirs", powertools), ("ours", ours)):
            _logged(handler, invocation)  # the container's first invocation (a cold start for ours)
            logger.setLevel(level)
            seen[name] = [line["message"] for line in _logged(handler, invocation)]  # a warm one
            logger.setLevel(level)
    finally:
        logger.setLevel(level)
    assert seen["ours"] == seen["theirs"] == ["looked", "answered"]


def test_the_intakes_context_flushes_the_log_buffer_on_an_uncaught_error_and_clears_it(monkeypatch):
    """A logger with a log buffer: flushed when the handler raises, cleared after every invocation."""
    calls: list[str] = []
    monkeypatch.setattr(logger, "flush_buffer", lambda: calls.append("flush"))
    monkeypatch.setattr(logger, "clear_buffer", lambda: calls.append("clear"))

    def fails(event: dict[str, Any], context: Any) -> dict[str, Any]:
        raise RuntimeError("a bug")

    wrapped = lambda_context(app.request_id_of)
    wrapped(_appends_then_logs)({}, InProcessContext())
    with pytest.raises(RuntimeError, match="a bug"):
        wrapped(fails)({}, InProcessContext())
    assert calls == ["clear", "flush", "clear"]


METRICS_LINE_BYTES, WARNING_LINE_BYTES = 512, 1024  # docs/design.md, What a public request can cost


@pytest.mark.parametrize("result", [IssueResult(outcome) for outcome in IssueOutcome] + [
    IssueResult(IssueOutcome.UNAVAILABLE, detail="a server's error, " * 1_000, release_failed=True),
])  # fmt: skip
def test_an_answer_writes_one_bounded_metrics_line_and_a_503_one_bounded_warning(service, result):  # noqa: F811
    """Whatever the request and its cause: a log line is the one cost a memory's answer still has."""
    service.result = result
    event = api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 918_273_645})
    stream = io.StringIO()
    previous = logger.registered_handler.setStream(stream)
    try:
        printed = _printed(lambda: app.handler(event, InProcessContext()))
    finally:
        logger.registered_handler.setStream(previous)
    logged = stream.getvalue().splitlines()

    (metrics_line,) = [line for line in printed if line.startswith('{"_aws"')]
    assert len(metrics_line.encode()) <= METRICS_LINE_BYTES
    unavailable = {IssueOutcome.SUCCESS, IssueOutcome.UNCONFIRMED, IssueOutcome.UNAVAILABLE, IssueOutcome.STATE_MISSING}
    assert len(logged) == (result.outcome in unavailable)  # answered 503 (a success without its record too)
    assert all(len(line.encode()) <= WARNING_LINE_BYTES and "918273645" not in line for line in logged)
