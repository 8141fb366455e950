"""The intake API without servers: routing, validation and the mapping of every outcome."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from coupon_core.domain.issuing import IssueOutcome, IssueResult
from coupon_core.domain.records import IssueMessage
from coupon_core.settings.intake import IntakeSettings
from functions.intake import app as intake_app
from functions.intake import dependencies, route_dependencies
from local.testkit.bad_requests import BAD_ISSUE_BODIES
from local.testkit.lambda_events import InProcessContext, api_event

ENV = {
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "DATABASE_URL": "postgresql+pg8000://postgres@127.0.0.1:1/coupons",
    "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
    "KAFKA_TOPIC": "coupon.issue.v1",
    "KAFKA_CONSUMER_GROUP": "coupon-worker-test",
    "POWERTOOLS_SERVICE_NAME": "coupon-intake",
    "POWERTOOLS_METRICS_NAMESPACE": "CouponSystemTests",
}


@dataclass
class FakeService:
    result: IssueResult
    calls: list[tuple[int, int]] = field(default_factory=list)

    keys: list[str | None] = field(default_factory=list)

    def issue(self, coupon_id: int, user_id: int, idempotency_key: str | None = None) -> IssueResult:
        self.calls.append((coupon_id, user_id))
        self.keys.append(idempotency_key)
        return self.result


def call(event: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
    response = intake_app.handler(event, InProcessContext())
    headers = {name: values[-1] for name, values in (response.get("multiValueHeaders") or {}).items()}
    return response["statusCode"], json.loads(response["body"]), headers


def override(monkeypatch, provider: Any, value: Any) -> None:
    """Replace one of the intake's dependencies for this test (Powertools' dependency_overrides)."""
    monkeypatch.setitem(dependencies.OVERRIDES, provider, lambda: value)


@pytest.fixture
def service(monkeypatch):
    fake = FakeService(IssueResult(IssueOutcome.SOLD_OUT))
    override(monkeypatch, dependencies.settings, IntakeSettings.from_env(ENV))
    override(monkeypatch, dependencies.issue_service, fake)
    return fake


@pytest.fixture
def claims_service(monkeypatch, service):
    override(monkeypatch, dependencies.settings, IntakeSettings.from_env({**ENV, "USER_ID_SOURCE": "claims"}))
    return service


def test_success_is_202_with_the_request_id_and_reservation_time(service):
    message = IssueMessage(3, 7, uuid.UUID("6f1c1f9e-0000-4000-8000-000000000001"), 1_764_590_400_123)
    service.result = IssueResult(IssueOutcome.SUCCESS, message=message)

    status, body, _ = call(api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}))

    assert status == 202
    assert body == {
        "status": "SUCCESS",
        "couponId": 3,
        "userId": 7,
        "requestId": "6f1c1f9e-0000-4000-8000-000000000001",
        "reservedAt": "2025-12-01T12:00:00.123+00:00",
    }
    assert service.calls == [(3, 7)]


@pytest.mark.parametrize(
    ("outcome", "status_code", "error"),
    [
        (IssueOutcome.DUPLICATE, 409, "user 7 already holds coupon 3"),
        (IssueOutcome.SOLD_OUT, 409, "coupon 3 is sold out"),
        (IssueOutcome.NOT_OPEN, 409, "the issue window of coupon 3 has not opened yet"),
        (IssueOutcome.ENDED, 409, "the issue window of coupon 3 has ended"),
        (IssueOutcome.COUPON_NOT_FOUND, 404, "coupon 3 does not exist"),
    ],
)
def test_every_refusal_maps_to_its_status_and_message(service, outcome, status_code, error):
    service.result = IssueResult(outcome)
    status, body, _ = call(api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}))
    assert (status, body) == (status_code, {"status": outcome.value, "error": error})


def test_unavailable_is_503_with_retry_after(service):
    service.result = IssueResult(IssueOutcome.UNAVAILABLE, detail="broker down", release_failed=True)
    status, body, headers = call(api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}))
    assert status == 503
    assert body["status"] == "UNAVAILABLE"
    assert "retry later" in body["error"]
    assert headers["Retry-After"] == "1"


@pytest.mark.parametrize(("body", "error"), BAD_ISSUE_BODIES, ids=repr)
def test_bad_bodies_are_422_and_never_reach_the_domain(service, body, error):
    status, answer, _ = call(api_event("POST", "/coupon-issues", body))
    assert status == 422
    assert answer["status"] == "INVALID_REQUEST"
    assert error in answer["error"]
    assert service.calls == []


def test_a_body_that_is_not_json_is_422(service):
    status, answer, _ = call(api_event("POST", "/coupon-issues", raw_body="{couponId: 3"))
    assert status == 422
    assert answer["error"].startswith("body is not valid JSON: Expecting property name")
    assert service.calls == []


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/coupon-issues"), ("DELETE", "/coupons/1"), ("POST", "/nowhere"), ("GET", "/coupons/1/issues/2/use")],
)
def test_unknown_routes_and_methods_are_404_with_a_message(service, method, path):
    status, body, _ = call(api_event(method, path))
    assert (status, body) == (404, {"status": "NOT_FOUND", "error": f"no route for {method} {path}"})


@pytest.mark.parametrize("bad", ["abc", "0", "-1", "1.5", str(2**63)])
def test_bad_path_ids_are_422(service, bad):
    status, body, _ = call(api_event("GET", f"/coupons/{bad}/issues/7"))
    assert status == 422
    assert body["status"] == "INVALID_REQUEST"
    assert body["error"].startswith("path.couponId")


COGNITO_SUB = "7d8e3c1a-51b2-4f0e-9d3c-2b6a1f0e9c44"  # what Cognito puts in sub: never the user id


def test_claims_mode_takes_the_user_from_the_configured_claim(claims_service):
    call(api_event("POST", "/coupon-issues", {"couponId": 3}, claims={"sub": COGNITO_SUB, "custom:user_id": "42"}))
    assert claims_service.calls == [(3, 42)]


def test_the_claim_is_configurable(monkeypatch, service):
    settings = IntakeSettings.from_env({**ENV, "USER_ID_SOURCE": "claims", "USER_ID_CLAIM": "member_no"})
    override(monkeypatch, dependencies.settings, settings)
    call(api_event("POST", "/coupon-issues", {"couponId": 3}, claims={"custom:user_id": "1", "member_no": "42"}))
    assert service.calls == [(3, 42)]


def test_claims_mode_refuses_a_different_body_user(claims_service):
    claims = {"custom:user_id": "42"}
    status, body, _ = call(api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}, claims=claims))
    assert (status, body["status"]) == (403, "FORBIDDEN")
    assert body["error"] == "userId differs from the user id in the token"
    assert claims_service.calls == []


@pytest.mark.parametrize(
    "claims",
    [
        {"sub": COGNITO_SUB},  # Cognito's own subject, and no user id claim
        {"custom:user_id": "alice"},
        {"custom:user_id": "\u00b2"},  # superscript two: str.isdigit() says yes, int() fails
        {"custom:user_id": "\u0661\u0662"},  # Arabic-Indic 12: int() reads it as 12
        {"custom:user_id": "0"},
        {"custom:user_id": "9223372036854775808"},
        {"custom:user_id": " 42"},
        {"custom:user_id": 42},  # not the string an authorizer passes
    ],
)
def test_claims_mode_refuses_a_token_without_an_ascii_numeric_user_id(claims_service, claims):
    status, body, _ = call(api_event("POST", "/coupon-issues", {"couponId": 3}, claims=claims))
    assert (status, body["status"]) == (403, "FORBIDDEN")
    assert body["error"] == "the token carries no numeric user id (claim custom:user_id)"
    assert claims_service.calls == []


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ('{"couponId": ' + "9" * 100_000 + ', "userId": 7}', "couponId: Input should be less than or equal to"),
        ('{"couponId": 3, "userId": -' + "9" * 5_000 + "}", "userId: Input should be greater than or equal to 1"),
        ("[" * 100_000 + "]" * 100_000, "body is not valid JSON: nested too deeply"),
        ('{"couponId": 3, "userId": 7', "body is not valid JSON: Expecting"),
    ],
    ids=["huge-id", "huge-negative-id", "deep-nesting", "truncated"],
)
def test_bodies_the_json_parser_chokes_on_are_422_with_the_reason(service, raw, error):
    status, answer, _ = call(api_event("POST", "/coupon-issues", raw_body=raw))
    assert (status, answer["status"]) == (422, "INVALID_REQUEST")
    assert error in answer["error"]
    assert service.calls == []


@dataclass
class FakeCatalog:
    created: list[Any] = field(default_factory=list)

    def create(self, coupon: Any) -> Any:
        self.created.append(coupon)
        raise AssertionError("a bad coupon reached the catalog")


COUPON = {"name": "spring sale", "totalQuantity": 10,
          "issueStartsAt": "2026-12-01T10:00:00Z", "issueEndsAt": "2026-12-01T11:00:00Z"}  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"name": "spring\x00sale"}, "name: Value error, must not contain control characters"),
        ({"name": "spring\nsale"}, "name: Value error, must not contain control characters"),
        ({"issueStartsAt": "1969-12-31T23:59:59Z"}, "issueStartsAt: Input should be greater than or equal to 1970"),
        ({"totalQuantity": int("9" * 30)}, "totalQuantity: Input should be less than or equal to 10000000"),
        ({"issueEndsAt": "2026-12-01T09:00:00Z"}, "issueEndsAt must be after issueStartsAt"),
    ],
)
def test_a_coupon_the_database_or_redis_could_not_hold_is_422_and_never_created(monkeypatch, changes, error):
    catalog = FakeCatalog()
    override(monkeypatch, route_dependencies.catalog, catalog)
    status, answer, _ = call(api_event("POST", "/coupons", {**COUPON, **changes}))
    assert (status, answer["status"]) == (422, "INVALID_REQUEST")
    assert error in answer["error"]
    assert catalog.created == []


def test_the_idempotency_key_header_reaches_the_domain(service):
    call(api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "order-1"}))
    call(api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}))
    assert service.keys == ["order-1", None]


@pytest.mark.parametrize("key", ["", "has space", "x" * 256, "caf\u00e9"])
def test_a_malformed_idempotency_key_is_422_and_never_reaches_the_domain(service, key):
    status, body, _ = call(
        api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}, headers={"Idempotency-Key": key})
    )
    assert (status, body["status"]) == (422, "INVALID_REQUEST")
    assert "Idempotency-Key" in body["error"] or "idempotency-key" in body["error"]
    assert service.calls == []


def test_a_reused_idempotency_key_is_422_key_reused(service):
    service.result = IssueResult(IssueOutcome.KEY_REUSED)
    status, body, _ = call(
        api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 8}, headers={"Idempotency-Key": "k"})
    )
    assert (status, body["status"]) == (422, "KEY_REUSED")
