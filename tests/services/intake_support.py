"""Calling the HTTP API in-process (the intake, or the coupons function, as API Gateway routes a
request), wired to the real services through the functions' environment."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import redis

from coupon_client.api_client import Reply
from coupon_core.domain.issuing import MEMORY_MS
from functions.intake import dependencies as intake_dependencies
from local.testkit.http_functions import answer
from local.testkit.lambda_events import InProcessContext, api_event
from lua_redis.store import rebuild_key


def call(method: str, path: str, body: Any = None, *, raw: bool = False, **kwargs: Any) -> Reply:
    """The API's answer to a request, as its client hears it (``raw``: the body's text)."""
    started = time.perf_counter()
    response = answer(api_event(method, path, body, **kwargs), InProcessContext())
    headers = {name: values[-1] for name, values in (response.get("multiValueHeaders") or {}).items()}
    document = response["body"] if raw else json.loads(response["body"])
    retry_after = float(headers["Retry-After"]) if "Retry-After" in headers else None
    return Reply(response["statusCode"], document, time.perf_counter() - started, retry_after, headers)


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


def issue(coupon_id: int, user_id: int, *, idempotency_key: str | None = None) -> Reply:
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
    return call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user_id}, headers=headers)


def issue_until_answered(coupon_id: int, user_id: int, *, idempotency_key: str | None = None) -> Reply:
    """The answer once it is not a 503, asking again half a second after each, as a client does
    after Retry-After (for up to 10 s; then the last 503)."""
    deadline = time.monotonic() + 10
    while (reply := issue(coupon_id, user_id, idempotency_key=idempotency_key)).status_code == 503:
        if time.monotonic() > deadline:
            break
        time.sleep(0.5)
    return reply


def after_a_second() -> None:
    """Time passes for the intake container's memory of refusals: what it remembered is forgotten,
    as every change is answered a second later at the latest (docs/design.md, the intake's memory)."""
    memory = intake_dependencies.wiring().service.memory
    if memory is not None:
        earlier = memory.clock
        memory.clock = lambda: earlier() + MEMORY_MS / 1000


def produces_under_way_have_ended(redis_client: redis.Redis, coupon_id: int) -> bool:
    """Time passes for the rebuild gate of a coupon whose state was lost: its wait is over at once.

    The wait (twice KAFKA_PRODUCE_TIMEOUT_MS: 6 s at its default) lets a produce that was under
    way when Redis lost the state end before the rebuild reads the records in flight. A test has
    none under way by the time it calls this, so sleeping through the wait would prove only that
    the gate opens, which ``test_rebuild.py`` proves once on the server's clock. Whether a wait had
    started (the gate's key was there), so that a test still proves the loss closed the gate."""
    return bool(redis_client.set(rebuild_key(coupon_id), 1, xx=True, keepttl=True))


def first_request_after_the_loss(
    redis_client: redis.Redis, coupon_id: int, user_id: int, *, idempotency_key: str | None = None
) -> None:
    """A lost state's first request: 503 UNAVAILABLE, as the rebuild gate starts its wait for the
    produces under way; then that wait ends at once (``produces_under_way_have_ended``)."""
    waiting = issue(coupon_id, user_id, idempotency_key=idempotency_key)
    assert (waiting.status_code, waiting.body["status"]) == (503, "UNAVAILABLE")
    assert produces_under_way_have_ended(redis_client, coupon_id)
