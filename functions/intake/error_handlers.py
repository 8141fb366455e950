"""The one place the resolver's error handlers are registered: every answer that is not a
success, in the one JSON shape of ``answers.py``.

Routes raise :class:`~functions.intake.answers.RequestRefusedError`; the handlers registered by
:func:`register` answer it, every ``ServerUnavailableError`` (``answers.answer_to``, shared with
the express lane), Powertools' validation errors and unknown routes, each from its entry in
``answers.REFUSALS``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestUnsupportedContentType, RequestValidationError

from functions.intake.answers import ANSWERED, Answered, answer_to, refusal
from functions.intake.routes.responses import as_response


def _describe(error: dict[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
    if error.get("type") == "json_invalid":
        return f"body is not valid JSON: {error.get('ctx', {}).get('error', 'unreadable')}"
    return f"{where}: {error.get('msg', 'invalid')}"


def register(app: APIGatewayRestResolver) -> None:
    """Install the intake's error answers on ``app``."""

    @app.exception_handler(list(ANSWERED))
    def _answered(exc: Answered) -> Response:
        return as_response(answer_to(exc))

    @app.exception_handler(RequestUnsupportedContentType)
    def _not_json(_: RequestUnsupportedContentType) -> Response:
        # json_only refuses these before the resolver; should one pass, it is refused alike.
        return as_response(refusal("UNSUPPORTED_MEDIA_TYPE", declared=app.current_event.headers.get("content-type")))

    @app.exception_handler(RequestValidationError)
    def _invalid(exc: RequestValidationError) -> Response:
        problems = "; ".join(_describe(error) for error in exc.errors())
        return as_response(refusal("INVALID_REQUEST", problems=problems))

    @app.not_found
    def _no_route(_: Exception) -> Response:
        event = app.current_event
        return as_response(refusal("NO_ROUTE", method=event.http_method, path=event.path))
