"""Requests an API fuzzer found the contract did not answer: each is a clear 4xx JSON error that
changes nothing, whichever lane would have taken it, against the real servers."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local.testkit.http_functions import answer
from local.testkit.kafka_topics import read_all
from local.testkit.lambda_events import InProcessContext, api_event
from local.testkit.tables import row_counts
from tests.services.intake_support import call, create_coupon

NOT_JSON = [
    "Application/JSON",  # what Powertools' resolver does not read as JSON either
    "multipart/form-data",  # no boundary: Powertools' parser raised ValueError, a 502 at the gateway
    "multipart/form-data; boundary=x",
    "text/plain",
    "application/x-www-form-urlencoded",
]
STARTS = datetime(2030, 1, 1, tzinfo=UTC)


def _redis_state(redis_client) -> dict[str, Any]:
    return {key: redis_client.dump(key) for key in sorted(redis_client.keys("*"))}


def _body_routes(coupon_id: int) -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    window = {"issueStartsAt": STARTS.isoformat(), "issueEndsAt": (STARTS + timedelta(hours=1)).isoformat()}
    return [
        ("POST", "/coupons", {"name": "n", "totalQuantity": 5, **window}, {}),
        ("PATCH", f"/coupons/{coupon_id}", {"name": "renamed"}, {}),
        ("POST", f"/coupons/{coupon_id}/top-up", {"copies": 3}, {}),
        ("POST", "/coupon-issues", {"couponId": coupon_id, "userId": 5}, {}),  # the express lane's shape
        ("POST", "/coupon-issues", {"couponId": coupon_id, "userId": "5"}, {}),  # the resolver's
        ("POST", "/coupon-issues", {"couponId": coupon_id, "userId": 5}, {"Idempotency-Key": "k" * 256}),
    ]


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_a_body_declared_as_anything_but_json_is_415_in_the_apis_shape_and_changes_nothing(
    pipeline, migrated_engine, redis_client, content_type
):
    coupon_id = create_coupon(10)
    rows, state = row_counts(migrated_engine), _redis_state(redis_client)

    for method, path, body, headers in _body_routes(coupon_id):
        answer = call(method, path, body, headers={**headers, "Content-Type": content_type})
        assert answer.status_code == 415, (method, path, answer)
        assert answer.body["status"] == "UNSUPPORTED_MEDIA_TYPE"
        assert content_type in answer.body["error"]
        assert answer.headers["Content-Type"] == "application/json"

    assert row_counts(migrated_engine) == rows
    assert _redis_state(redis_client) == state
    assert read_all(pipeline.bootstrap_servers, pipeline.topic) == []  # nothing produced


def test_no_body_on_a_body_route_with_a_type_that_is_not_json_is_415_in_the_apis_shape(pipeline):
    answer = call("POST", "/coupons", None, headers={"Content-Type": "text/plain"})  # the resolver finds it

    assert answer.status_code == 415
    assert answer.body == {
        "status": "UNSUPPORTED_MEDIA_TYPE",
        "error": "the body must be JSON (Content-Type: application/json); got 'text/plain'",
    }


def test_json_with_parameters_is_json(pipeline):
    coupon_id = create_coupon(10)
    for content_type in ("application/json; charset=utf-8", " application/json"):
        answer = call("PATCH", f"/coupons/{coupon_id}", {"name": "renamed"}, headers={"Content-Type": content_type})
        assert answer.status_code == 200, (content_type, answer)


@pytest.mark.parametrize("moment", [0, 1893456000, 1893456000.5, "1893456000", "1893456000.5", True])
@pytest.mark.parametrize("field", ["issueStartsAt", "issueEndsAt", "validUntil"])
def test_a_time_that_is_not_iso_8601_is_422_and_creates_nothing(pipeline, migrated_engine, field, moment):
    window = {"issueStartsAt": STARTS.isoformat(), "issueEndsAt": (STARTS + timedelta(hours=1)).isoformat()}
    rows = row_counts(migrated_engine)

    answer = call("POST", "/coupons", {"name": "n", "totalQuantity": 5, **window, field: moment})

    assert answer.status_code == 422, answer
    assert answer.body["status"] == "INVALID_REQUEST"
    assert f"{field}: " in answer.body["error"]
    assert "ISO 8601" in answer.body["error"]
    assert row_counts(migrated_engine) == rows


@pytest.mark.parametrize("moment", [0, 1893456000, "1893456000"])
def test_a_move_to_a_time_that_is_not_iso_8601_is_422_and_changes_nothing(pipeline, redis_client, moment):
    coupon_id = create_coupon(10)
    before, state = call("GET", f"/coupons/{coupon_id}").body, _redis_state(redis_client)

    answer = call("PATCH", f"/coupons/{coupon_id}", {"issueEndsAt": moment})

    assert answer.status_code == 422, answer
    assert "issueEndsAt: " in answer.body["error"]
    assert call("GET", f"/coupons/{coupon_id}").body == before
    assert _redis_state(redis_client) == state


@pytest.mark.parametrize(("method", "path"), [("POST", "/coupons"), ("POST", "/coupon-issues")])
def test_a_json_body_that_is_not_utf_8_is_422_and_changes_nothing(pipeline, migrated_engine, method, path):
    """Found by the fuzzer: API Gateway passes such a body base64-encoded, and Powertools'
    decoding raised UnicodeDecodeError (a 502)."""
    event = api_event(method, path, raw_body=base64.b64encode(b"\x80{}").decode())
    event["isBase64Encoded"] = True
    rows = row_counts(migrated_engine)

    response = answer(event, InProcessContext())

    assert response["statusCode"] == 422
    assert json.loads(response["body"]) == {
        "status": "INVALID_REQUEST",
        "error": "body is not valid JSON: not UTF-8 text",
    }
    assert row_counts(migrated_engine) == rows
