"""An issue request read from API Gateway's proxy event, or refused with the error that says why.

The one route the intake serves is ``POST /coupon-issues`` (API Gateway sends it nothing else;
anything else is answered 404 NOT_FOUND, as the coupons function answers an unknown route).
The body is validated by the one model of it, ``issue_body.IssueRequest``, which the gateway's
request model is generated from; the ``Idempotency-Key`` header by the rule the coupons
function's routes declare (``issue_body.IdempotencyKeyValue``). Errors are described as the coupons
function describes its validation errors (``functions/coupons/error_handlers.py``): a 422
INVALID_REQUEST naming each field and what is wrong with it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from coupon_core import untrusted_json
from functions.http_api.answers import RequestRefusedError, problems
from functions.http_api.issue_body import IdempotencyKeyValue, IssueRequest
from functions.http_api.request import header_values

METHOD, PATH = "POST", "/coupon-issues"
_PATHS = (PATH, f"{PATH}/")  # a trailing slash is the same route, as the resolver matches routes
_KEY = TypeAdapter[str](IdempotencyKeyValue)
_NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from"
Errors = list[Mapping[str, Any]]  # pydantic's, with the loc Powertools' validation gives them


@dataclass(frozen=True)
class IssueAsk:
    """A valid issue request: the coupon, the user it names (if any), its Idempotency-Key."""

    coupon_id: int
    user_id: int | None
    idempotency_key: str | None


def is_issue_route(method: object, path: object) -> bool:
    """Whether ``method path`` is the intake's one route (API Gateway sends it nothing else)."""
    return method == METHOD and path in _PATHS


def issue_ask(event: Mapping[str, Any]) -> IssueAsk:
    """The request of ``event``; raises :class:`RequestRefusedError` for any other route, and for
    a request that is not valid (every problem named, the header's first)."""
    method, path = event.get("httpMethod"), event.get("path")
    if not is_issue_route(method, path):
        raise RequestRefusedError("NO_ROUTE", method=method, path=path)
    key_errors, key = _idempotency_key(event)
    body_errors, request = _body(_text(event))
    if key_errors or body_errors or request is None:
        raise RequestRefusedError("INVALID_REQUEST", problems=problems(key_errors + body_errors))
    return IssueAsk(request.couponId, request.userId, key)


def _idempotency_key(event: Mapping[str, Any]) -> tuple[Errors, str | None]:
    values = header_values(event, "idempotency-key")
    if not values:
        return [], None
    try:
        return [], _KEY.validate_python(values[0] if len(values) == 1 else values)
    except ValidationError as exc:
        return [error | {"loc": ("header", "idempotency-key", *error["loc"])} for error in exc.errors()], None


def _text(event: Mapping[str, Any]) -> str | None:
    """The body as text: API Gateway passes a body it took for binary base64-encoded (the media
    type's check found it UTF-8)."""
    body = event.get("body")
    if body and event.get("isBase64Encoded"):
        return base64.b64decode(str(body)).decode("utf-8")
    return None if body is None else str(body)


def _body(body: str | None) -> tuple[Errors, IssueRequest | None]:
    try:
        fields = untrusted_json.loads(body) if body else None
    except ValueError as exc:  # JSONDecodeError (UTF-8 was checked with the media type)
        return [{"type": "json_invalid", "loc": ("body",), "ctx": {"error": getattr(exc, "msg", str(exc))}}], None
    if fields is None:
        return [{"type": "missing", "loc": ("body",), "msg": "Field required"}], None
    if not isinstance(fields, dict):
        return [{"type": "model_attributes_type", "loc": ("body",), "msg": _NOT_AN_OBJECT}], None
    try:
        return [], IssueRequest.model_validate(fields)
    except ValidationError as exc:
        return [error | {"loc": ("body", *error["loc"])} for error in exc.errors()], None
