"""The express lane against the resolver: for any event, the same answer and the same calls.

The express lane may only take a request the resolver's validation would accept, and must
then do what the route does. Each event below is answered twice, once by the handler (where
the express lane goes first) and once by the resolver alone, and the two answers and the
service calls they made must be the same; the well-formed ones must really take the lane.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest

from coupon_core.domain.issuing import IssueOutcome, IssueResult
from coupon_core.domain.records import IssueMessage
from coupon_core.settings.intake import IntakeSettings
from functions.intake import api, app, dependencies, express
from local.testkit.bad_requests import BAD_ISSUE_BODIES
from local.testkit.lambda_events import InProcessContext, api_event
from tests.unit.functions.intake.test_routes import ENV, FakeService

MAX = 2**63 - 1
SUCCESS = IssueResult(IssueOutcome.SUCCESS, message=IssueMessage(3, 7, uuid.UUID(int=1), reserved_at=1_764_590_400_123))


def _event(
    body: Any = None, *, raw_body: str | None = None, headers: dict[str, str] | None = None, **changes: Any
) -> dict[str, Any]:
    return api_event("POST", "/coupon-issues", body, raw_body=raw_body, headers=headers) | changes


WELL_FORMED = [
    _event({"couponId": 3, "userId": 7}),
    _event({"userId": 7, "couponId": 3}),
    _event({"couponId": MAX, "userId": 1}),
    _event(raw_body='{"couponId": 3, "userId": 7, "couponId": 4}'),  # JSON's last value wins, in both lanes
    _event({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "order-1"}),
    _event({"couponId": 3, "userId": 7}, headers={"idempotency-key": "~" * 255}),
    _event(raw_body='  {"couponId": 3,\n "userId": 7}  '),
]
NO_USER = [_event({"couponId": 3}), _event({"couponId": 3, "userId": None})]  # taken; the caller refuses
DECLINED = [
    *(_event(body) for body, _ in BAD_ISSUE_BODIES if body != {"couponId": 3}),
    _event(raw_body="{couponId: 3"),
    _event(raw_body='{"couponId": 3, "userId": 1' + "0" * 30 + "}"),
    _event({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": ""}),
    _event({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "has space"}),
    _event({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "k" * 256}),
    _event({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "k\n"}),
    _event(
        {"couponId": 3, "userId": 7},
        multiValueHeaders={"Content-Type": ["application/json"], "Idempotency-Key": ["a", "b"]},
    ),
    _event(isBase64Encoded=True, raw_body=base64.b64encode(json.dumps({"couponId": 3, "userId": 7}).encode()).decode()),
    _event({"couponId": 3, "userId": 7}, path="/coupon-issues/"),
    _event({"couponId": 3, "userId": 7}, httpMethod="PUT"),
]


@pytest.fixture
def service(monkeypatch):
    fake = FakeService(SUCCESS)
    monkeypatch.setitem(dependencies.OVERRIDES, dependencies.settings, lambda: IntakeSettings.from_env(ENV))
    monkeypatch.setitem(dependencies.OVERRIDES, dependencies.issue_service, lambda: fake)
    return fake


def _both_lanes(service: FakeService, event: dict[str, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    def answered(answer: dict[str, Any]) -> tuple[Any, ...]:
        calls = (list(service.calls), list(service.keys))
        service.calls.clear()
        service.keys.clear()
        return int(answer["statusCode"]), json.loads(answer["body"]), dict(answer["multiValueHeaders"]), calls

    handler_answer = answered(app.handler(event, InProcessContext()))
    resolver_answer = answered(api.app.resolve(event, InProcessContext()))
    return handler_answer, resolver_answer


@pytest.mark.parametrize("event", WELL_FORMED, ids=lambda e: e["body"])
def test_a_well_formed_request_takes_the_express_lane_and_answers_as_the_resolver_does(service, event):
    assert express.issue_request(event) is not None
    handler_answer, resolver_answer = _both_lanes(service, event)
    assert handler_answer == resolver_answer
    assert handler_answer[0] == 202
    assert len(handler_answer[3][0]) == 1


@pytest.mark.parametrize("event", NO_USER, ids=lambda e: e["body"])
def test_a_request_without_a_user_is_refused_alike_in_both_lanes(service, event):
    assert express.issue_request(event) is not None
    handler_answer, resolver_answer = _both_lanes(service, event)
    assert handler_answer == resolver_answer
    assert handler_answer[:2] == (422, {"status": "INVALID_REQUEST", "error": "userId: Field required"})


@pytest.mark.parametrize("event", DECLINED, ids=lambda e: repr(e["body"])[:60])
def test_anything_else_goes_to_the_resolver(service, event):
    assert express.issue_request(event) is None
    handler_answer, resolver_answer = _both_lanes(service, event)
    assert handler_answer == resolver_answer


@pytest.mark.parametrize(
    "outcome",
    [IssueResult(IssueOutcome.SOLD_OUT), IssueResult(IssueOutcome.KEY_REUSED), IssueResult(IssueOutcome.UNAVAILABLE)],
    ids=lambda r: r.outcome.value,
)
def test_refusals_answer_the_same_in_both_lanes(service, outcome):
    service.result = outcome
    handler_answer, resolver_answer = _both_lanes(service, _event({"couponId": 3, "userId": 7}))
    assert handler_answer == resolver_answer
    assert handler_answer[0] in (409, 422, 503)


@pytest.mark.parametrize(
    ("claims", "user"), [({"custom:user_id": "7"}, 7), ({"custom:user_id": "x"}, None), (None, None)]
)
def test_the_user_from_the_token_is_the_same_in_both_lanes(monkeypatch, service, claims, user):
    settings = IntakeSettings.from_env({**ENV, "USER_ID_SOURCE": "claims"})
    monkeypatch.setitem(dependencies.OVERRIDES, dependencies.settings, lambda: settings)
    event = api_event("POST", "/coupon-issues", {"couponId": 3}, claims=claims)
    handler_answer, resolver_answer = _both_lanes(service, event)
    assert handler_answer == resolver_answer
    assert handler_answer[0] == (202 if user else 403)
