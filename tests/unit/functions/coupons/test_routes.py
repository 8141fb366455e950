"""The coupons function without servers: routing, validation and refusals that never reach a store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import boto3
import pytest
from moto import mock_aws

from coupon_core.domain.availability import AvailabilityService, NoSale, Sale, Unread
from coupon_core.errors import StateUnavailableError
from coupon_core.settings.coupons import CouponsSettings
from functions.coupons import app as coupons_app
from functions.coupons import dependencies
from local.testkit.lambda_events import InProcessContext, api_event

ENV = {
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "DATABASE_URL": "postgresql+pg8000://postgres@127.0.0.1:1/coupons",
    "POWERTOOLS_SERVICE_NAME": "coupon-coupons",
    "POWERTOOLS_METRICS_NAMESPACE": "CouponSystemTests",
}


def call(event: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
    response = coupons_app.handler(event, InProcessContext())
    headers = {name: values[-1] for name, values in (response.get("multiValueHeaders") or {}).items()}
    return response["statusCode"], json.loads(response["body"]), headers


def override(monkeypatch, provider: Any, value: Any) -> None:
    """Replace one of the function's dependencies for this test (Powertools' dependency_overrides)."""
    monkeypatch.setitem(coupons_app.app.dependency_overrides, provider, lambda: value)


@pytest.fixture(autouse=True)
def settings(monkeypatch):
    override(monkeypatch, dependencies.settings, CouponsSettings.from_env(ENV))


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/coupon-issues"), ("DELETE", "/coupons/1"), ("POST", "/nowhere"), ("GET", "/coupons/1/issues/2/use")],
)
def test_unknown_routes_and_methods_are_404_with_a_message(method, path):
    status, body, _ = call(api_event(method, path))
    assert (status, body) == (404, {"status": "NOT_FOUND", "error": f"no route for {method} {path}"})


@pytest.mark.parametrize("bad", ["abc", "0", "-1", "1.5", str(2**63)])
def test_bad_path_ids_are_422(bad):
    status, body, _ = call(api_event("GET", f"/coupons/{bad}/issues/7"))
    assert status == 422
    assert body["status"] == "INVALID_REQUEST"
    assert body["error"].startswith("path.couponId")


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
    override(monkeypatch, dependencies.catalog, catalog)
    status, answer, _ = call(api_event("POST", "/coupons", {**COUPON, **changes}))
    assert (status, answer["status"]) == (422, "INVALID_REQUEST")
    assert error in answer["error"]
    assert catalog.created == []


SHOP = "https://shop.example.com"
AS_TEXT = {"Origin": SHOP, "Content-Type": "text/plain"}


@pytest.fixture
def cors(monkeypatch):
    monkeypatch.setenv("CORS_ORIGINS", SHOP)
    coupons_app.request.allowed_origins.cache_clear()
    yield
    coupons_app.request.allowed_origins.cache_clear()


@pytest.mark.parametrize(
    ("event", "status"),
    [(api_event("GET", "/coupons/abc/issues/7", headers={"Origin": SHOP}), 422),
     (api_event("POST", "/nowhere", headers={"Origin": SHOP}), 404),
     (api_event("POST", "/coupons/1/issues/7/use", raw_body="a", headers=AS_TEXT), 415)],
)  # fmt: skip
def test_the_answers_a_shops_page_reads_carry_the_cors_headers(cors, event, status):
    answered, _, headers = call(event)
    assert (answered, headers["Access-Control-Allow-Origin"], headers["Vary"]) == (status, SHOP, "Origin")
    assert headers["Access-Control-Expose-Headers"] == "Retry-After"


def test_another_origin_reads_none(cors):
    _, _, headers = call(api_event("POST", "/nowhere", headers={"Origin": "https://evil.example.com"}))
    assert "Access-Control-Allow-Origin" not in headers


@dataclass
class OneSale:
    """Redis as the availability route reads it: one answer for every coupon."""

    found: Sale | Unread | StateUnavailableError

    def read(self, coupon_id: int) -> Sale | Unread:
        if isinstance(self.found, Exception):
            raise self.found
        return self.found


AT = 1_900_000_000_000  # 2030-03-17T17:46:40Z
OPEN = Sale(AT, 10, AT - 1, AT + 60_000, False, 3)  # open a minute more, 7 of 10 copies left
CACHED_1S = "public, max-age=0, s-maxage=1"  # the edge keeps every answer a second, no browser keeps one


@pytest.mark.parametrize(
    ("found", "status", "answer", "cache"),
    [
        (OPEN, 200,
         {"status": "OPEN", "couponId": 5, "serverTime": "2030-03-17T17:46:40.000+00:00",
          "startsAt": "2030-03-17T17:46:39.999+00:00", "endsAt": "2030-03-17T17:47:40.000+00:00",
          "total": 10, "left": 7, "asOf": "2030-03-17T17:46:40.000+00:00"}, CACHED_1S),
        (Unread(NoSale.ENDED, AT), 200,
         {"status": "ENDED", "couponId": 5, "serverTime": "2030-03-17T17:46:40.000+00:00",
          "startsAt": None, "endsAt": None, "total": None, "left": None, "asOf": None}, CACHED_1S),
        (Unread(NoSale.COUPON_NOT_FOUND, AT), 404,
         {"status": "COUPON_NOT_FOUND", "error": "coupon 5 does not exist"}, CACHED_1S),
        (Unread(NoSale.UNAVAILABLE, AT), 503,
         {"status": "UNAVAILABLE", "error": "temporarily unavailable; nothing was reserved, retry later"}, CACHED_1S),
        (StateUnavailableError("refused"), 503,
         {"status": "UNAVAILABLE", "error": "temporarily unavailable; nothing was reserved, retry later"}, CACHED_1S),
    ],
)  # fmt: skip
def test_availability_answers_and_what_the_edge_may_keep(monkeypatch, cors, found, status, answer, cache):
    override(monkeypatch, dependencies.availability, AvailabilityService(OneSale(found)))
    answered, body, headers = call(api_event("GET", "/coupons/5/availability", headers={"Origin": SHOP}))
    assert (answered, body, headers.get("Cache-Control")) == (status, answer, cache)
    assert headers["Access-Control-Allow-Origin"] == SHOP
    assert ("Retry-After" in headers) is (status == 503)


def test_a_sale_the_container_already_held_is_not_kept_at_the_edge_so_left_is_at_most_a_second_old(monkeypatch, cors):
    """Read now: the edge may keep it a second. Answered 300 ms later from the container's read:
    the edge keeps nothing (its second and the container's would add up to two)."""
    now = [100.0]
    service = AvailabilityService(OneSale(OPEN), clock=lambda: now[0])
    override(monkeypatch, dependencies.availability, service)
    event = api_event("GET", "/coupons/5/availability", headers={"Origin": SHOP})

    _, fresh, fresh_headers = call(event)
    now[0] += 0.3
    _, held, held_headers = call(event)

    assert fresh_headers["Cache-Control"] == CACHED_1S
    assert held_headers["Cache-Control"] == "public, max-age=0, s-maxage=0"
    assert (held["asOf"], held["serverTime"]) == (fresh["asOf"], "2030-03-17T17:46:40.300+00:00")


@pytest.fixture
def edge(monkeypatch) -> Iterator[Any]:
    """The function deployed behind the edge: its secret ("s3cret") in (moto's) Secrets Manager,
    EDGE_SECRET_ARN naming it; the Secrets Manager client, for a test that takes it away."""
    with mock_aws():
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        secrets = boto3.client("secretsmanager")
        arn = secrets.create_secret(Name="edge", SecretString="s3cret")["ARN"]
        override(monkeypatch, dependencies.settings, CouponsSettings.from_env(ENV | {"EDGE_SECRET_ARN": arn}))
        dependencies.edge_secret.cache_clear()
        yield secrets
        dependencies.edge_secret.cache_clear()


@pytest.mark.parametrize(("sent", "fresh"), [("s3cret", True), ("guessed", False), (None, False)])
def test_the_edges_ask_is_answered_from_a_read_made_for_it_and_kept_a_second(monkeypatch, cors, edge, sent, fresh):
    """The edge's header with the stack's secret (from Secrets Manager) reads Redis now, however
    recent the container's read; the header with another value, or none, is a page's ask."""
    now = [100.0]
    reads: list[int] = []

    class Counted(OneSale):
        def read(self, coupon_id: int) -> Sale | Unread:
            reads.append(coupon_id)
            return replace(OPEN, read_at=AT + len(reads))

    override(monkeypatch, dependencies.availability, AvailabilityService(Counted(OPEN), clock=lambda: now[0]))
    call(api_event("GET", "/coupons/5/availability"))
    now[0] += 0.3
    headers = {"X-Coupon-Edge": sent} if sent is not None else {}
    _, _, answered = call(api_event("GET", "/coupons/5/availability", headers=headers))

    assert (len(reads), answered["Cache-Control"]) == (
        (2, CACHED_1S) if fresh else (1, "public, max-age=0, s-maxage=0")
    )


def test_an_edge_secret_that_cannot_be_read_is_unavailable_and_asked_again(monkeypatch, cors, edge):
    override(monkeypatch, dependencies.availability, AvailabilityService(OneSale(OPEN)))
    edge.delete_secret(SecretId="edge", ForceDeleteWithoutRecovery=True)

    status, body, _ = call(api_event("GET", "/coupons/5/availability", headers={"X-Coupon-Edge": "s3cret"}))

    assert dependencies.edge_secret.cache_info().currsize == 0
    assert (status, body["status"]) == (503, "UNAVAILABLE")
