"""How the resolver answers what is not a success: one JSON shape, one place.

Routes raise :class:`~functions.intake.answers.RequestRefusedError`; the handlers registered by
:func:`register` turn it, the adapters' "unavailable" errors (``answers.answer_for``, shared
with the express lane), Powertools' validation errors and unknown routes into
``{"status", "error"}`` answers.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from functions.intake.answers import ANSWERED, Answered, answer_for, error_answer
from functions.intake.routes.responses import respond


def _describe(error: dict[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
    if error.get("type") == "json_invalid":
        return f"body is not valid JSON: {error.get('ctx', {}).get('error', 'unreadable')}"
    return f"{where}: {error.get('msg', 'invalid')}"


def register(app: APIGatewayRestResolver) -> None:
    """Install the intake's error answers on ``app``."""

    @app.exception_handler(list(ANSWERED))
    def _answered(exc: Answered) -> Response:
        return respond(answer_for(exc))

    @app.exception_handler(RequestValidationError)
    def _invalid(exc: RequestValidationError) -> Response:
        problems = "; ".join(_describe(error) for error in exc.errors())
        return respond(error_answer(HTTPStatus.UNPROCESSABLE_ENTITY, "INVALID_REQUEST", problems))

    @app.not_found
    def _no_route(_: Exception) -> Response:
        event = app.current_event
        error = f"no route for {event.http_method} {event.path}"
        return respond(error_answer(HTTPStatus.NOT_FOUND, "NOT_FOUND", error))
