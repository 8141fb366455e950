"""Calling the intake handler in-process, wired to the real services through its environment."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from functions.intake import app as intake_app
from local.testkit.lambda_events import InProcessContext, api_event


@dataclass(frozen=True)
class Answer:
    status_code: int
    body: Any  # the JSON document, or the text with raw=True
    headers: dict[str, str]


def call(method: str, path: str, body: Any = None, *, raw: bool = False, **kwargs: Any) -> Answer:
    response = intake_app.handler(api_event(method, path, body, **kwargs), InProcessContext())
    headers = {name: values[-1] for name, values in (response.get("multiValueHeaders") or {}).items()}
    return Answer(response["statusCode"], response["body"] if raw else json.loads(response["body"]), headers)


def create_coupon(
    total: int, *, starts_in: timedelta = timedelta(hours=-1), lasts: timedelta = timedelta(hours=2), **extra: Any
) -> int:
    """A coupon open now by default; ``extra`` adds fields of the request (``validDays``, ...)."""
    starts_at = datetime.now(UTC) + starts_in
    answer = call(
        "POST",
        "/coupons",
        {
            "name": f"coupon of {total}",
            "totalQuantity": total,
            "issueStartsAt": starts_at.isoformat(),
            "issueEndsAt": (starts_at + lasts).isoformat(),
            **extra,
        },
    )
    assert answer.status_code == 201, answer
    return int(answer.body["couponId"])


def issue(coupon_id: int, user_id: int, *, idempotency_key: str | None = None) -> Answer:
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
    return call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user_id}, headers=headers)
