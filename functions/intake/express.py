"""The express lane: ``POST /coupon-issues`` answered without the resolver.

A flash sale is this one route, hundreds of thousands of times a minute, and every request of
it pays the intake's CPU (Lambda bills it; it bounds how many containers a burst needs) and
every new container of the scale-out pays its cold start. Through Powertools' resolver a
request spent about twice the CPU of the reserve and the produce themselves (route matching,
the validation middleware, ``Depends`` resolved from the signatures on every request, response
validation; docs/benchmarks.md), and importing the resolver with its OpenAPI and pydantic
models was half the cold start.

So the handler first offers the event here. This lane takes a request only when it is exactly
well-formed: ``POST /coupon-issues`` with a JSON object of nothing but ``couponId`` and an
optional ``userId``, integers in 1..2^63-1 (not booleans, strings or floats), and at most one
``Idempotency-Key`` of 1..255 printable ASCII characters. That is a subset of what the route's
pydantic models accept (a test holds it so); anything else, including every malformed request,
goes to the resolver, whose validation writes the precise error. Once taken, the request runs
the same code as the route (``issue_route.request_coupon``) with the same collaborators
(``dependencies.provide``), errors and all. Logger's context wraps both lanes in ``app.py``; the issue
answers print their own metrics line (``issue_metrics.py``), Metrics' decorator wraps the resolver's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from coupon_core import untrusted_json
from functions.intake.answers import ANSWERED, answer_to
from functions.intake.caller import caller_of
from functions.intake.dependencies import issue_service, provide, settings
from functions.intake.issue_route import request_coupon
from functions.intake.json_only import header_values
from lua_redis import MAX_BIGINT

METHOD, PATH = "POST", "/coupon-issues"
_BODY_FIELDS = frozenset({"couponId", "userId"})
_KEY = re.compile(r"[\x21-\x7e]{1,255}")


def take(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """API Gateway's proxy result for a well-formed issue request, which this lane takes; None
    for any other event, which it leaves to the resolver."""
    request = issue_request(event)
    if request is None:
        return None
    coupon_id, user_id, idempotency_key = request
    try:
        asker = caller_of(event, provide(settings))
        answer = request_coupon(provide(issue_service), asker, coupon_id, user_id, idempotency_key)
    except ANSWERED as exc:
        answer = answer_to(exc)
    return answer.proxy_result()


def issue_request(event: Mapping[str, Any]) -> tuple[int, int | None, str | None] | None:
    """``(couponId, userId, Idempotency-Key)`` of an exactly well-formed issue request, else None."""
    if event.get("httpMethod") != METHOD or event.get("path") != PATH or event.get("isBase64Encoded"):
        return None
    ids = _ids(event.get("body"))
    keys = header_values(event, "idempotency-key")
    if ids is None or len(keys) > 1 or (keys and not _KEY.fullmatch(keys[0])):
        return None
    key: str | None = keys[0] if keys else None
    return ids[0], ids[1], key


def _ids(body: object) -> tuple[int, int | None] | None:
    """``couponId`` and ``userId`` of a body that is a JSON object of nothing else."""
    if not isinstance(body, str):
        return None
    try:
        fields = untrusted_json.loads(body)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both are
        return None
    if type(fields) is not dict or not fields.keys() <= _BODY_FIELDS:
        return None
    coupon_id, user_id = fields.get("couponId"), fields.get("userId")
    if _is_id(coupon_id) and (user_id is None or _is_id(user_id)):
        return coupon_id, user_id
    return None


def _is_id(value: object) -> TypeGuard[int]:
    return type(value) is int and 1 <= value <= MAX_BIGINT
