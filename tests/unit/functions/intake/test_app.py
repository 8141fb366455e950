"""The intake without servers: its one route, the validation of its request, and the mapping of
every outcome to its answer."""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from coupon_core.domain.issuing import IssueResult
from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import IssueOutcome
from coupon_core.settings.intake import IntakeSettings
from functions.intake import app as intake_app
from functions.intake import dependencies
from local.testkit.bad_requests import BAD_ISSUE_BODIES
from local.testkit.lambda_events import InProcessContext, api_event

ENV = {
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
    "KAFKA_TOPIC": "coupon.issue.v1",
    "POWERTOOLS_SERVICE_NAME": "coupon-intake",
    "POWERTOOLS_METRICS_NAMESPACE": "CouponSystemTests",
}
MAX = 2**63 - 1


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


def wire(monkeypatch, service: FakeService, environment: dict[str, str]) -> None:
    """The intake's wiring with ``service`` in place of the real one, and settings from ``environment``."""
    wiring = dependencies.Wiring(IntakeSettings.from_env(environment), None, None, service)  # type: ignore[arg-type]
    monkeypatch.setattr(dependencies, "wiring", lambda: wiring)


@pytest.fixture
def service(monkeypatch):
    fake = FakeService(IssueResult(IssueOutcome.SOLD_OUT))
    wire(monkeypatch, fake, ENV)
    return fake


@pytest.fixture
def claims_service(monkeypatch, service):
    wire(monkeypatch, service, {**ENV, "USER_ID_SOURCE": "claims"})
    return service


def _issue(body: Any = None, *, raw_body: str | None = None, headers: dict[str, str] | None = None, **changes: Any):
    return api_event("POST", "/coupon-issues", body, raw_body=raw_body, headers=headers) | changes


SUCCESS = IssueResult(IssueOutcome.SUCCESS, record=IssueRecord(3, 7, uuid.UUID(int=1), reserved_at=1_764_590_400_123))
ENCODED = base64.b64encode(json.dumps({"couponId": 3, "userId": 7}).encode()).decode()


@pytest.mark.parametrize(
    ("event", "issued"),
    [
        (_issue({"couponId": 3, "userId": 7}), (3, 7, None)),
        (_issue({"userId": 7, "couponId": 3}), (3, 7, None)),
        (_issue({"couponId": MAX, "userId": 1}), (MAX, 1, None)),
        (_issue(raw_body='{"couponId": 3, "userId": 7, "couponId": 4}'), (4, 7, None)),  # JSON's last value wins
        (_issue({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "order-1"}), (3, 7, "order-1")),
        (_issue({"couponId": 3, "userId": 7}, headers={"idempotency-key": "~" * 255}), (3, 7, "~" * 255)),
        (_issue(raw_body='  {"couponId": 3,\n "userId": 7}  '), (3, 7, None)),
        (_issue(raw_body=ENCODED, isBase64Encoded=True), (3, 7, None)),  # API Gateway's binary passthrough
        (_issue({"couponId": 3, "userId": 7}, path="/coupon-issues/"), (3, 7, None)),
        (
            _issue({"couponId": 3, "userId": 7}, headers={"Content-Type": "application/json; charset=utf-8"}),
            (3, 7, None),
        ),
        (_issue({"couponId": 3, "userId": 7}, multiValueHeaders={"Idempotency-Key": []}), (3, 7, None)),
    ],
    ids=lambda value: repr(value)[:50],
)
def test_a_well_formed_request_is_issued(service, event, issued):
    service.result = SUCCESS
    status, _, _ = call(event)
    assert (status, service.calls, service.keys) == (202, [issued[:2]], [issued[2]])


PATTERN = "header.idempotency-key: String should match pattern '^[\\x21-\\x7e]+$'"
NOT_AN_OBJECT = "body: Input should be a valid dictionary or object to extract fields from"


@pytest.mark.parametrize(
    ("event", "status", "error"),
    [
        (
            _issue(raw_body="{couponId: 3"),
            422,
            "body is not valid JSON: Expecting property name enclosed in double quotes",
        ),
        (_issue(raw_body=""), 422, "body: Field required"),
        (_issue(raw_body="null"), 422, "body: Field required"),
        (_issue(raw_body='"x"'), 422, NOT_AN_OBJECT),
        (_issue(raw_body="NaN"), 422, NOT_AN_OBJECT),
        (_issue(raw_body='{"couponId": 1e3, "userId": 7}'), 422, "couponId: Input should be a valid integer"),
        (
            _issue(raw_body='{"couponId": 3, "userId": 1' + "0" * 30 + "}"),
            422,
            "userId: Input should be less than or equal to 9223372036854775807",
        ),
        (
            _issue({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": ""}),
            422,
            "header.idempotency-key: String should have at least 1 character",
        ),
        (_issue({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "has space"}), 422, PATTERN),
        (
            _issue({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "k" * 256}),
            422,
            "header.idempotency-key: String should have at most 255 characters",
        ),
        (_issue({"couponId": 3, "userId": 7}, headers={"Idempotency-Key": "k\n"}), 422, PATTERN),
        (
            _issue({"couponId": 3, "userId": 7, "x": 1}, headers={"Idempotency-Key": "a b"}),
            422,
            f"{PATTERN}; x: Extra inputs are not permitted",
        ),  # every problem, the header's first
        (
            _issue({"couponId": 3, "userId": 7}, multiValueHeaders={"Idempotency-Key": ["a", "b"]}),
            422,
            "header.idempotency-key: Input should be a valid string",
        ),
        (
            _issue({"couponId": 3, "userId": 7}, multiValueHeaders={"idempotency-key": ["", "b"]}),
            422,
            "header.idempotency-key: Input should be a valid string",
        ),
        (
            _issue(raw_body=base64.b64encode(b"\xff\xfe").decode(), isBase64Encoded=True),
            422,
            "body is not valid JSON: not UTF-8 text",
        ),
        (
            _issue({"couponId": 3, "userId": 7}, headers={"Content-Type": "text/plain"}),
            415,
            "the body must be JSON (Content-Type: application/json); got 'text/plain'",
        ),
        (
            _issue({"couponId": 3, "userId": 7}, headers={"Content-Type": "multipart/form-data"}),
            415,
            "the body must be JSON (Content-Type: application/json); got 'multipart/form-data'",
        ),
        (_issue({"couponId": 3, "userId": 7}, httpMethod="PUT"), 404, "no route for PUT /coupon-issues"),
        (_issue({"couponId": 3, "userId": 7}, path="/coupons"), 404, "no route for POST /coupons"),
    ],
    ids=lambda value: repr(value)[:50],
)
def test_a_request_that_is_not_well_formed_is_refused_with_what_is_wrong_and_never_issued(
    service, event, status, error
):
    """The answers Powertools' resolver gave the same events when it served this route: the
    error of each problem, worded as the coupons function words its validation errors."""
    answer = call(event)
    assert answer[:2] == (
        status,
        {"status": {404: "NOT_FOUND", 415: "UNSUPPORTED_MEDIA_TYPE"}.get(status, "INVALID_REQUEST"), "error": error},
    )
    assert service.calls == []


def test_success_is_202_with_the_request_id_and_reservation_time(service):
    message = IssueRecord(3, 7, uuid.UUID("6f1c1f9e-0000-4000-8000-000000000001"), 1_764_590_400_123)
    service.result = IssueResult(IssueOutcome.SUCCESS, record=message)

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


def test_a_redis_that_cannot_be_reached_is_503(monkeypatch):
    """An outage of Redis is a 503 with Retry-After, not a crash."""
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)  # REDIS_URL on port 1: nothing listens
    dependencies.reset()
    status, body, headers = call(api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}))
    assert (status, body["status"], headers["Retry-After"]) == (503, "UNAVAILABLE", "1")


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


COGNITO_SUB = "7d8e3c1a-51b2-4f0e-9d3c-2b6a1f0e9c44"  # what Cognito puts in sub: never the user id


def test_claims_mode_takes_the_user_from_the_configured_claim(claims_service):
    call(api_event("POST", "/coupon-issues", {"couponId": 3}, claims={"sub": COGNITO_SUB, "custom:user_id": "42"}))
    assert claims_service.calls == [(3, 42)]


def test_the_claim_is_configurable(monkeypatch, service):
    wire(monkeypatch, service, {**ENV, "USER_ID_SOURCE": "claims", "USER_ID_CLAIM": "member_no"})
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


SHOP = "https://shop.example.com"


@pytest.fixture
def cors(monkeypatch):
    """The intake of an environment whose shop's page, and only it, may read the answers."""
    monkeypatch.setenv("CORS_ORIGINS", f"{SHOP}, http://127.0.0.1:8000")
    intake_app.request.allowed_origins.cache_clear()
    yield
    intake_app.request.allowed_origins.cache_clear()


@pytest.mark.parametrize(
    "result", [SUCCESS, IssueResult(IssueOutcome.SOLD_OUT), IssueResult(IssueOutcome.UNAVAILABLE, detail="down")]
)
def test_an_allowed_pages_answers_carry_the_cors_headers(cors, service, result):
    """Every answer a shop's page can receive, a 503 with its Retry-After among them, is readable by it."""
    service.result = result
    _, _, headers = call(_issue({"couponId": 3, "userId": 7}, headers={"Origin": SHOP}))
    assert headers["Access-Control-Allow-Origin"] == SHOP
    assert headers["Access-Control-Expose-Headers"] == "Retry-After"
    assert headers["Vary"] == "Origin"


def test_a_refusal_before_the_domain_carries_them_too(cors, service):
    status, _, headers = call(_issue(raw_body="a=1", headers={"Origin": SHOP, "Content-Type": "text/plain"}))
    assert (status, headers["Access-Control-Allow-Origin"]) == (415, SHOP)


@pytest.mark.parametrize("origin", ["https://evil.example.com", "https://shop.example.com.evil.io", None])
def test_a_page_of_another_origin_gets_no_cors_header(cors, service, origin):
    _, _, headers = call(_issue({"couponId": 3, "userId": 7}, headers={"Origin": origin} if origin else {}))
    assert not [name for name in headers if name.startswith("Access-Control-")]
    assert headers["Vary"] == "Origin"


def test_without_cors_origins_no_answer_carries_a_cors_header(monkeypatch, service):
    monkeypatch.delenv("CORS_ORIGINS", raising=False)
    intake_app.request.allowed_origins.cache_clear()
    _, _, headers = call(_issue({"couponId": 3, "userId": 7}, headers={"Origin": SHOP}))
    assert not [name for name in headers if name.startswith("Access-Control-") or name == "Vary"]
