"""Answers built from the response models, and the OpenAPI description of a route's answers.

Every body is a model of ``schemas.py`` dumped to JSON, so the document generated from the
routes and the answers the routes give cannot drift apart.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel

from functions.intake.schemas import ErrorBody

RETRY_AFTER_S = "1"


def answer(status_code: HTTPStatus, body: BaseModel, headers: dict[str, str] | None = None) -> Response[Any]:
    return Response(status_code=status_code, content_type="application/json", body=body.model_dump(), headers=headers)


def error_answer(status_code: HTTPStatus, status: str, error: str, headers: dict[str, str] | None = None) -> Response:
    return answer(status_code, ErrorBody(status=status, error=error), headers)


def unavailable() -> Response:
    return error_answer(
        HTTPStatus.SERVICE_UNAVAILABLE,
        "UNAVAILABLE",
        "temporarily unavailable; nothing was reserved, retry later",
        {"Retry-After": RETRY_AFTER_S},
    )


def unconfirmed(coupon_id: int, user_id: int, request_id: str) -> Response:
    """The record was sent but never acknowledged: the request may have been accepted."""
    return error_answer(
        HTTPStatus.SERVICE_UNAVAILABLE,
        "UNCONFIRMED",
        f"request {request_id} may have been accepted; ask GET /coupons/{coupon_id}/issues/{user_id} "
        "before sending it again",
        {"Retry-After": RETRY_AFTER_S},
    )


def documented(success: tuple[int, str, type[BaseModel]], errors: dict[int, str] | None = None) -> dict[int, Any]:
    """OpenAPI responses of a route: its success model, and ErrorBody for each error status."""
    code, description, model = success
    responses: dict[int, Any] = {code: {"description": description, "content": {"application/json": {"model": model}}}}
    all_errors = {422: "INVALID_REQUEST: the request is malformed; the error says how", **(errors or {})}
    for status_code, text in all_errors.items():
        responses[status_code] = {"description": text, "content": {"application/json": {"model": ErrorBody}}}
    return responses
