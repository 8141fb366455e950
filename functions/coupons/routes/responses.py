"""The resolver's side of the answers: an ``Answer`` as Powertools' ``Response``, and a response
model's body as one."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel

from functions.http_api.answers import Answer


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
