"""The one place the resolver's error handlers are registered: every answer that is not a
success, in the one JSON shape of ``functions/http_api/answers.py``.

Routes raise :class:`~functions.http_api.answers.RequestRefusedError`; the handlers registered by
:func:`register` answer it, every ``UnavailableError`` (:func:`answer_to`: a 503 with
``Retry-After``, never a bare 500), Powertools' validation errors (``answers.problems``, as the intake describes its
own) and unknown routes, each from its entry in ``answers.REFUSALS``.
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestUnsupportedContentType, RequestValidationError

from coupon_core.errors import UnavailableError
from coupon_core.observability import logger
from functions.coupons.routes.responses import as_response
from functions.http_api.answers import Answer, RequestRefusedError, problems, refusal

Answered = RequestRefusedError | UnavailableError


def answer_to(exc: Answered) -> Answer:
    """The answer to an exception a route raised: a refusal says why, a server outage is a 503
    with ``Retry-After``. Anything else is a bug and stays an exception."""
    if isinstance(exc, RequestRefusedError):
        return exc.answer
    logger.warning("a server is unavailable", extra={"detail": str(exc)})
    return refusal("UNAVAILABLE")


def register(app: APIGatewayRestResolver) -> None:
    """Install the API's error answers on ``app``."""

    @app.exception_handler([RequestRefusedError, UnavailableError])
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
