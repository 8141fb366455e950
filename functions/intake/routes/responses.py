"""The resolver's side of the answers: an ``Answer`` as Powertools' ``Response``, a response
model's body as one, and the OpenAPI descriptions of a route's answers."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel

from functions.intake.answers import Answer
from functions.intake.schemas import ErrorBody


def as_response(answer: Answer) -> Response[Any]:
    """An :class:`Answer` as the resolver's ``Response``."""
    return Response(
        status_code=answer.status_code,
        content_type="application/json",
        body=answer.body,
        headers=answer.headers or None,
    )


def from_model(status_code: HTTPStatus, body: BaseModel) -> Response[Any]:
    """A response model's body: the document generated from the routes and the answers cannot drift apart."""
    return as_response(Answer(status_code, body.model_dump()))


# A route that acts for a user, in claims mode (prod): the token carries no user, or another one.
FORBIDDEN = "FORBIDDEN (USER_ID_SOURCE=claims): the token carries no numeric user id, or userId is another user's"


def documented(
    success: tuple[int, str, type[BaseModel]],
    errors: dict[int, str] | None = None,
    *,
    alternative: dict[str, Any] | None = None,
) -> dict[int, Any]:
    """OpenAPI responses of a route: its success model (and ``alternative``, extra content types
    and headers of the same answer), and ErrorBody for each error status."""
    code, description, model = success
    ok: dict[str, Any] = {"description": description, "content": {"application/json": {"model": model}}}
    if alternative:
        ok["content"] |= alternative.get("content", {})
        ok |= {key: value for key, value in alternative.items() if key != "content"}
    responses: dict[int, Any] = {code: ok}
    all_errors = {
        415: "UNSUPPORTED_MEDIA_TYPE: a body declared as anything but JSON; nothing changed",
        422: "INVALID_REQUEST: the request is malformed; the error says how",
        **(errors or {}),
    }
    for status_code, text in all_errors.items():
        responses[status_code] = {"description": text, "content": {"application/json": {"model": ErrorBody}}}
    return responses
