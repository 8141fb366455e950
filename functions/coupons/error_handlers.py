"""The one place the resolver's error handlers are registered: every answer that is not a
success, in the one JSON shape of ``functions/http_api/answers.py``.

Routes raise :class:`~functions.http_api.answers.RequestRefusedError`; the handlers registered by
:func:`register` answer it, every ``UnavailableError`` (``answers.answer_to``, as the
intake does), Powertools' validation errors (``answers.problems``, as the intake describes its
own) and unknown routes, each from its entry in ``answers.REFUSALS``.
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestUnsupportedContentType, RequestValidationError

from functions.coupons.routes.responses import as_response
from functions.http_api.answers import ANSWERED, Answered, answer_to, problems, refusal


def register(app: APIGatewayRestResolver) -> None:
    """Install the API's error answers on ``app``."""

    @app.exception_handler(list(ANSWERED))
    def _answered(exc: Answered) -> Response:
        return as_response(answer_to(exc))

    @app.exception_handler(RequestUnsupportedContentType)
    def _not_json(_: RequestUnsupportedContentType) -> Response:
        # request.refused refuses these before the resolver; should one pass, it is refused alike.
        return as_response(refusal("UNSUPPORTED_MEDIA_TYPE", declared=app.current_event.headers.get("content-type")))

    @app.exception_handler(RequestValidationError)
    def _invalid(exc: RequestValidationError) -> Response:
        return as_response(refusal("INVALID_REQUEST", problems=problems(exc.errors())))

    @app.not_found
    def _no_route(_: Exception) -> Response:
        event = app.current_event
        return as_response(refusal("NO_ROUTE", method=event.http_method, path=event.path))
