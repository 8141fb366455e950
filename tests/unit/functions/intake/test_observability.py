"""What operators read of the intake's answers: one metrics line per answer (Powertools'
Metrics), valid embedded metric format, bounded, with the outcome, the latency and what else
the answer counts; and log lines with the invocation's keys (Logger's Lambda context)."""

from __future__ import annotations

import contextlib
import io
import json
import time
import uuid
from typing import Any

import pytest

from coupon_client import fairness
from coupon_core.domain.issuing import IssueResult
from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import IssueOutcome
from coupon_core.observability import ISSUE_COUNT_OF, logger
from functions.intake import app
from local.testkit.lambda_events import InProcessContext, api_event
from tests import emf_specification
from tests.unit.functions.intake.test_app import service  # noqa: F401 - the fixture


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
EVENT = api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7})


def _metrics_line(printed: list[str]) -> str:
    (line,) = [line for line in printed if line.startswith('{"_aws"')]
    return line


@pytest.mark.parametrize("flag", list(ALSO_COUNTED))
@pytest.mark.parametrize("outcome", list(IssueOutcome))
def test_an_answer_prints_one_emf_line_with_its_outcome_latency_and_flag(service, outcome, flag):  # noqa: F811
    service.result = IssueResult(outcome, **({flag: True} if flag else {}))
    line = _metrics_line(_printed(lambda: app.handler(EVENT, InProcessContext())))

    assert emf_specification.problems(line) == []
    document = json.loads(line)
    counted = ["IssueLatency", ISSUE_COUNT_OF[outcome], *([ALSO_COUNTED[flag]] if flag else [])]
    assert [m["Name"] for m in document["_aws"]["CloudWatchMetrics"][0]["Metrics"]] == counted
    assert document[ISSUE_COUNT_OF[outcome]] == [1.0]
    assert document["IssueLatency"][0] >= 0
    assert document["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["service"]]


def test_the_emf_checker_finds_what_breaks_the_specification(service):  # noqa: F811
    """The checker of the test above fails on lines that break the specification."""
    service.result = IssueResult(IssueOutcome.SOLD_OUT)
    line = _metrics_line(_printed(lambda: app.handler(EVENT, InProcessContext())))
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


def test_a_refused_request_counts_nothing(service):  # noqa: F811
    """A body that is not JSON is refused before the domain: no answer of the sale to count."""
    event = api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}, headers={"Content-Type": "text/plain"})
    with pytest.warns(UserWarning, match="No application metrics"):
        printed = _printed(lambda: app.handler(event, InProcessContext()))
    assert [line for line in printed if line.startswith('{"_aws"')] == []
    assert service.calls == []


def test_the_intakes_log_lines_carry_the_request_id_as_correlation_id_and_no_earlier_key(service):  # noqa: F811
    service.result = IssueResult(IssueOutcome.UNAVAILABLE, detail="down")
    stream = io.StringIO()
    previous = logger.registered_handler.setStream(stream)
    try:
        _printed(lambda: app.handler(EVENT, InProcessContext()))
        service.result = IssueResult(IssueOutcome.UNAVAILABLE, detail="down again")
        second = EVENT | {"requestContext": EVENT["requestContext"] | {"requestId": "request-2"}}
        _printed(lambda: app.handler(second, InProcessContext()))
    finally:
        logger.registered_handler.setStream(previous)
    first_line, second_line = (json.loads(line) for line in stream.getvalue().splitlines())

    assert first_line["correlation_id"] == EVENT["requestContext"]["requestId"]
    assert second_line["correlation_id"] == "request-2"
    assert {"function_name", "function_request_id", "cold_start"} <= first_line.keys()


METRICS_LINE_BYTES, WARNING_LINE_BYTES = 640, 1024  # docs/design.md, What a public request can cost


LONGEST = {"request_id": uuid.UUID(int=2**128 - 1), "replays": 10**13 - 1, "decided_at": 10**13 - 1}


@pytest.mark.parametrize("result", [IssueResult(outcome, **LONGEST) for outcome in IssueOutcome] + [
    IssueResult(IssueOutcome.UNAVAILABLE, detail="a server's error, " * 1_000, release_failed=True, **LONGEST),
    IssueResult(IssueOutcome.SOLD_OUT, remembered=True, **LONGEST),
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
    # answered 503 with its cause (a success without its record too); STATE_MISSING, which the
    # service never returns, is answered 503 by its row alone
    unavailable = {IssueOutcome.SUCCESS, IssueOutcome.UNCONFIRMED, IssueOutcome.UNAVAILABLE}
    assert len(logged) == (result.outcome in unavailable)
    assert all(len(line.encode()) <= WARNING_LINE_BYTES and "918273645" not in line for line in logged)


def test_the_metrics_line_carries_the_coupon_outcome_arrival_and_redis_decision(service):  # noqa: F811
    """What the measure of arrival order reads (coupon_client.fairness): the gateway's arrival and
    request id, the time Redis decided, the request id that joins a click's attempts and the
    earlier decision a SUCCESS answered again repeats, beside the outcome; no user id or key."""
    request_id = uuid.uuid5(uuid.NAMESPACE_URL, "a click")
    service.result = IssueResult(
        IssueOutcome.SUCCESS,
        record=IssueRecord(3, 918_273_645, request_id, 1_764_590_400_200),
        decided_at=1_764_590_400_250,
        replays=1_764_590_400_200,
        request_id=request_id,
    )
    event = api_event(
        "POST", "/coupon-issues", {"couponId": 3, "userId": 918_273_645}, headers={"Idempotency-Key": "k-77"}
    )
    event["requestContext"] |= {"requestId": "gateway-1", "requestTimeEpoch": 1_764_590_400_123}
    document = json.loads(_metrics_line(_printed(lambda: app.handler(event, InProcessContext()))))

    fields = {key: document[key] for key in ("couponId", "outcome", "arrivedAt", "decidedAt", "requestId", "replays")}
    assert fields == {
        "couponId": 3,
        "outcome": "SUCCESS",
        "arrivedAt": 1_764_590_400_123,
        "decidedAt": 1_764_590_400_250,
        "requestId": str(request_id),
        "replays": 1_764_590_400_200,
    }
    assert "918273645" not in json.dumps(document)
    assert "k-77" not in json.dumps(document)


@pytest.mark.parametrize("arrived", [None, "1764590400123", True, 1.5])
def test_an_answer_the_container_decided_is_timed_by_its_clock_and_a_missing_arrival_is_left_out(
    service,  # noqa: F811
    arrived,
):
    """An answer from the container's memory has no Redis time: the container's clock decides;
    an event without an integer requestTimeEpoch leaves arrivedAt out rather than guessing."""
    service.result = IssueResult(IssueOutcome.SOLD_OUT, remembered=True)
    event = EVENT | {"requestContext": EVENT["requestContext"] | {"requestTimeEpoch": arrived}}
    before = time.time_ns() // 1_000_000
    document = json.loads(_metrics_line(_printed(lambda: app.handler(event, InProcessContext()))))
    after = time.time_ns() // 1_000_000

    assert before <= document["decidedAt"] <= after
    assert "arrivedAt" not in document


def test_the_measure_reads_back_what_the_intakes_line_carries(service):  # noqa: F811
    """coupon_client.fairness reads the line the handler prints, as a log group holds it."""
    service.result = IssueResult(IssueOutcome.SOLD_OUT, decided_at=1_764_590_400_250, request_id=uuid.UUID(int=7))
    event = api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7})
    event["requestContext"] |= {"requestId": "gateway-1", "requestTimeEpoch": 1_764_590_400_123}
    printed = _printed(lambda: app.handler(event, InProcessContext()))
    as_logged = [f"2026-12-24T12:00:00.250Z {line}" for line in printed]  # a log stream's prefix

    assert fairness.lines_of(as_logged, 3) == [
        fairness.Line(1_764_590_400_123, 1_764_590_400_250, "SOLD_OUT", str(uuid.UUID(int=7)))
    ]
    assert fairness.lines_of(as_logged, 4) == []
