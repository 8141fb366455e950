"""Requests an API fuzzer found the contract did not answer, on both HTTP functions without
servers: each is a clear 4xx JSON error, and nothing changes, which here means no store, no
catalog and no issue service is ever reached (each stands in as :class:`Untouchable`). The fuzzer
itself runs against the real servers (``tests/services/test_fuzz.py``)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from coupon_core.settings.coupons import CouponsSettings
from coupon_core.settings.intake import IntakeSettings
from functions.coupons import app as coupons_app
from functions.coupons import dependencies as coupons_dependencies
from functions.intake import dependencies as intake_dependencies
from local.testkit.http_functions import answer
from local.testkit.lambda_events import InProcessContext, api_event
from tests.unit.functions.coupons.test_routes import ENV as COUPONS_ENV
from tests.unit.functions.intake.test_app import ENV as INTAKE_ENV

NOT_JSON = [
    "Application/JSON",  # what Powertools' resolver does not read as JSON either
    "multipart/form-data",  # no boundary: Powertools' parser raised ValueError, a 502 at the gateway
    "multipart/form-data; boundary=x",
    "text/plain",
    "application/x-www-form-urlencoded",
]
STARTS = datetime(2030, 1, 1, tzinfo=UTC)
WINDOW = {"issueStartsAt": STARTS.isoformat(), "issueEndsAt": (STARTS + timedelta(hours=1)).isoformat()}
BODY_ROUTES = [
    ("POST", "/coupons", {"name": "n", "totalQuantity": 5, **WINDOW}, {}),
    ("PATCH", "/coupons/3", {"name": "renamed"}, {}),
    ("POST", "/coupons/3/top-up", {"copies": 3}, {}),
    ("POST", "/coupon-issues", {"couponId": 3, "userId": 5}, {}),
    ("POST", "/coupon-issues", {"couponId": 3, "userId": "5"}, {}),
    ("POST", "/coupon-issues", {"couponId": 3, "userId": 5}, {"Idempotency-Key": "k" * 256}),
]


class Untouchable:
    """What a refused request must never reach: any use of it is recorded, and fails."""

    def __init__(self) -> None:
        self.used: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.used.append(name)
        raise AssertionError(f"a refused request reached the store: {name}")


@pytest.fixture
def untouched(monkeypatch) -> Untouchable:
    """Every store, catalog and service of both functions replaced by one :class:`Untouchable`."""
    nothing = Untouchable()
    for provider in (coupons_dependencies.catalog, coupons_dependencies.coupon_admin, coupons_dependencies.reservations,
                     coupons_dependencies.lifecycle, coupons_dependencies.on_demand_reconcile):  # fmt: skip
        monkeypatch.setitem(coupons_app.app.dependency_overrides, provider, lambda: nothing)
    settings = CouponsSettings.from_env(COUPONS_ENV)
    monkeypatch.setitem(coupons_app.app.dependency_overrides, coupons_dependencies.settings, lambda: settings)
    wiring = intake_dependencies.Wiring(IntakeSettings.from_env(INTAKE_ENV), None, None, nothing)  # type: ignore[arg-type]
    monkeypatch.setattr(intake_dependencies, "wiring", lambda: wiring)
    return nothing


def call(
    method: str, path: str, body: Any = None, *, base64_body: bool = False, **given: Any
) -> tuple[int, dict[str, Any], dict[str, str]]:
    event = api_event(method, path, body, **given)
    event["isBase64Encoded"] = base64_body
    response = answer(event, InProcessContext())
    headers = {name: values[-1] for name, values in (response.get("multiValueHeaders") or {}).items()}
    return response["statusCode"], json.loads(response["body"]), headers


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_a_body_declared_as_anything_but_json_is_415_in_the_apis_shape_and_changes_nothing(untouched, content_type):
    for method, path, body, headers in BODY_ROUTES:
        status, said, answered = call(method, path, body, headers={**headers, "Content-Type": content_type})
        assert status == 415, (method, path, said)
        assert said["status"] == "UNSUPPORTED_MEDIA_TYPE"
        assert content_type in said["error"]
        assert answered["Content-Type"] == "application/json"
    assert untouched.used == []


def test_no_body_on_a_body_route_with_a_type_that_is_not_json_is_415_in_the_apis_shape(untouched):
    status, said, _ = call("POST", "/coupons", None, headers={"Content-Type": "text/plain"})

    assert (status, said) == (415, {
        "status": "UNSUPPORTED_MEDIA_TYPE",
        "error": "the body must be JSON (Content-Type: application/json); got 'text/plain'",
    })  # fmt: skip
    assert untouched.used == []


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", " application/json"])
def test_json_with_parameters_is_read_as_json(untouched, content_type):
    """The body reaches the route: its catalog is asked (here, the untouchable one)."""
    with pytest.raises(AssertionError, match="a refused request reached the store"):
        call("PATCH", "/coupons/3", {"name": "renamed"}, headers={"Content-Type": content_type})


@pytest.mark.parametrize("moment", [0, 1893456000, 1893456000.5, "1893456000", "1893456000.5", True])
@pytest.mark.parametrize("field", ["issueStartsAt", "issueEndsAt", "validUntil"])
def test_a_time_that_is_not_iso_8601_is_422_and_creates_nothing(untouched, field, moment):
    status, said, _ = call("POST", "/coupons", {"name": "n", "totalQuantity": 5, **WINDOW, field: moment})

    assert (status, said["status"]) == (422, "INVALID_REQUEST")
    assert f"{field}: " in said["error"]
    assert "ISO 8601" in said["error"]
    assert untouched.used == []


@pytest.mark.parametrize("moment", [0, 1893456000, "1893456000"])
def test_a_move_to_a_time_that_is_not_iso_8601_is_422_and_changes_nothing(untouched, moment):
    status, said, _ = call("PATCH", "/coupons/3", {"issueEndsAt": moment})

    assert (status, said["status"]) == (422, "INVALID_REQUEST")
    assert "issueEndsAt: " in said["error"]
    assert untouched.used == []


@pytest.mark.parametrize(("method", "path"), [("POST", "/coupons"), ("POST", "/coupon-issues")])
def test_a_json_body_that_is_not_utf_8_is_422_and_changes_nothing(untouched, method, path):
    """Found by the fuzzer: API Gateway passes such a body base64-encoded, and Powertools'
    decoding raised UnicodeDecodeError (a 502)."""
    status, said, _ = call(method, path, raw_body=base64.b64encode(b"\x80{}").decode(), base64_body=True)

    assert (status, said) == (422, {"status": "INVALID_REQUEST", "error": "body is not valid JSON: not UTF-8 text"})
    assert untouched.used == []
