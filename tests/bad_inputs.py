"""Malformed bodies for POST /coupon-issues, with a fragment of the error each must produce."""

from __future__ import annotations

BAD_ISSUE_BODIES = [
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
