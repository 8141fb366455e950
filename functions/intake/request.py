"""The intake's one request, ``POST /coupon-issues``: its body and its ``Idempotency-Key``.

The one route the intake serves is ``POST /coupon-issues`` (API Gateway
sends it nothing else; anything else is answered 404 NOT_FOUND, as the coupons function answers
an unknown route). The body is read once, by ``untrusted_json``, and validated by the one model
of it, :class:`IssueRequest`, which the gateway's request model is generated from; the
``Idempotency-Key`` header by the rule the coupons function's routes declare
(:data:`IdempotencyKeyValue`). Both are here, not among the other bodies (``functions/http_api/schemas.py``): a
cold intake builds this one model, not every body of the API. Errors are described as the
coupons function describes its validation errors (``functions/coupons/error_handlers.py``): a
422 INVALID_REQUEST naming each field and what is wrong with it, as Python's JSON reader and
Powertools name it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
from pydantic import Field, StrictInt, TypeAdapter, ValidationError

from coupon_core import untrusted_json
from coupon_core.domain.records import MAX_BIGINT
from functions.http_api.answers import RequestRefusedError, problems
from functions.http_api.request import IdempotencyKeyValue, Strict, header_values

Id = Annotated[StrictInt, Field(ge=1, le=MAX_BIGINT, description="positive integer below 2^63")]


class IssueRequest(Strict):
    couponId: Id  # noqa: N815 - wire names are camelCase
    userId: Id | None = Field(default=None, description="required unless the user id comes from the token's claims")  # noqa: N815


METHOD, PATH = "POST", "/coupon-issues"
_PATHS = (PATH, f"{PATH}/")  # a trailing slash is the same route, as the resolver matches routes
_KEY = TypeAdapter[str](IdempotencyKeyValue)
_NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from"
Errors = list[Mapping[str, Any]]  # pydantic's, with the loc Powertools' validation gives them


def is_issue_route(method: object, path: object) -> bool:
    """Whether ``method path`` is the intake's one route (API Gateway sends it nothing else)."""
    return method == METHOD and path in _PATHS


def arrived_at(event: APIGatewayProxyEvent) -> int | None:
    """When API Gateway received ``event``: its ``requestContext.requestTimeEpoch`` (epoch ms on
    the gateway's clock), or None without an integer one."""
    at = (event.get("requestContext") or {}).get("requestTimeEpoch")
    return at if isinstance(at, int) and not isinstance(at, bool) else None


def issue_request(event: APIGatewayProxyEvent) -> tuple[IssueRequest, str | None]:
    """The issue request of ``event`` (its body) and its Idempotency-Key, if any; raises
    :class:`RequestRefusedError` for any other route, and for a request that is not valid (every
    problem named, the header's first)."""
    method, path = event.get("httpMethod"), event.get("path")
    if not is_issue_route(method, path):
        raise RequestRefusedError("NO_ROUTE", method=method, path=path)
    key_errors, key = _idempotency_key(event)
    body_errors, request = _body(event.decoded_body)
    if key_errors or body_errors or request is None:
        raise RequestRefusedError("INVALID_REQUEST", problems=problems(key_errors + body_errors))
    return request, key


def _idempotency_key(event: APIGatewayProxyEvent) -> tuple[Errors, str | None]:
    values = header_values(event, "idempotency-key")
    if not values:
        return [], None
    try:
        return [], _KEY.validate_python(values[0] if len(values) == 1 else values)
    except ValidationError as exc:
        return [error | {"loc": ("header", "idempotency-key", *error["loc"])} for error in exc.errors()], None


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
