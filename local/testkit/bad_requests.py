"""Malformed requests: the one list every check of I5 sends (the tests, the demo, chaos and the
rehearsal's audit from outside), each to be answered 4xx with a JSON error and to change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Malformed bodies of POST /coupon-issues, with a fragment of the error each must produce.
BAD_ISSUE_BODIES: list[tuple[Any, str]] = [
    (None, "body"),
    ({}, "couponId: Field required"),
    ({"couponId": 3}, "userId: Field required"),
    ({"couponId": "3", "userId": 7}, "couponId: Input should be a valid integer"),
    ({"couponId": 3.0, "userId": 7}, "couponId: Input should be a valid integer"),
    ({"couponId": 3, "userId": 7.5}, "userId: Input should be a valid integer"),
    ({"couponId": True, "userId": 7}, "couponId: Input should be a valid integer"),
    ({"couponId": 0, "userId": 7}, "couponId: Input should be greater than or equal to 1"),
    ({"couponId": -3, "userId": 7}, "couponId: Input should be greater than or equal to 1"),
    ({"couponId": 2**63, "userId": 7}, "couponId: Input should be less than or equal to 9223372036854775807"),
    ({"couponId": 3, "userId": 7, "extra": 1}, "extra: Extra inputs are not permitted"),
    ([3, 7], "Input should be a valid dictionary"),
]


@dataclass(frozen=True)
class BadRequest:
    method: str
    path: str
    body: Any = None  # sent as JSON
    raw: str | None = None  # sent as it is, instead of ``body``


def bad_requests(coupon_id: int) -> list[BadRequest]:
    """Malformed requests of every kind, naming ``coupon_id`` (an existing coupon) where a valid
    request would: bad issue bodies, a body that is not JSON, ids in the path that are not ids, a
    method the route does not have, and coupons that cannot be created."""
    return [
        *(BadRequest("POST", "/coupon-issues", body) for body, _ in BAD_ISSUE_BODIES),
        BadRequest("POST", "/coupon-issues", {"couponId": coupon_id, "userId": "2"}),
        BadRequest("POST", "/coupon-issues", {"couponId": coupon_id}),
        BadRequest("POST", "/coupon-issues", raw="{not json"),
        BadRequest("PUT", "/coupon-issues", {"couponId": coupon_id, "userId": 2}),
        BadRequest("GET", f"/coupons/{coupon_id}/issues/0"),
        BadRequest("GET", "/coupons/abc/issues/1"),
        BadRequest("GET", "/coupons/abc"),
        BadRequest("POST", "/coupons", {"name": "", "totalQuantity": 1, "issueStartsAt": "x", "issueEndsAt": "y"}),
        _coupon("x\x00y", "1969-01-01T00:00:00Z", "1969-01-02T00:00:00Z"),  # a NUL in the name, before 1970
        _coupon("n", "2026-12-01T10:00:00", "2026-12-01T11:00:00"),  # times without a zone
        _coupon("n", "2026-12-01T11:00:00Z", "2026-12-01T10:00:00Z"),  # ends before it starts
    ]  # fmt: skip


def _coupon(name: str, starts_at: str, ends_at: str) -> BadRequest:
    return BadRequest("POST", "/coupons", {"name": name, "totalQuantity": 5, "issueStartsAt": starts_at,
                                           "issueEndsAt": ends_at})  # fmt: skip
