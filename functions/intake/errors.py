"""How the intake answers what is not a success: one exception, one JSON shape, one place.

Routes raise :class:`RequestRefusedError`; the handlers registered by :func:`register` turn it,
Powertools' validation and not-found errors, and the adapters' "unavailable" errors into
``{"status", "error"}`` answers (``answers.py``). A Redis, database or Kafka outage is a 503
with ``Retry-After``, never a bare 500.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from coupon_core.errors import UnavailableError
from coupon_core.observability import logger
from functions.intake.answers import error_answer, unavailable
from lua_redis import LockUnavailableError, StateUnavailableError


class RequestRefusedError(Exception):
    """An answer other than success: raised from a route, turned into JSON by :func:`register`'s handler."""

    def __init__(self, status_code: HTTPStatus, status: str, error: str) -> None:
        super().__init__(error)
        self.status_code, self.status, self.error = status_code, status, error


def coupon_not_found(coupon_id: int) -> RequestRefusedError:
    return RequestRefusedError(HTTPStatus.NOT_FOUND, "COUPON_NOT_FOUND", f"coupon {coupon_id} does not exist")


def _describe(error: dict[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
    if error.get("type") == "json_invalid":
        return f"body is not valid JSON: {error.get('ctx', {}).get('error', 'unreadable')}"
    return f"{where}: {error.get('msg', 'invalid')}"


def register(app: APIGatewayRestResolver) -> None:
    """Install the intake's error answers on ``app``."""

    @app.exception_handler(RequestRefusedError)
    def _refused(exc: RequestRefusedError) -> Response:
        return error_answer(exc.status_code, exc.status, exc.error)

    @app.exception_handler(RequestValidationError)
    def _invalid(exc: RequestValidationError) -> Response:
        problems = "; ".join(_describe(error) for error in exc.errors())
        return error_answer(HTTPStatus.UNPROCESSABLE_ENTITY, "INVALID_REQUEST", problems)

    @app.exception_handler([StateUnavailableError, LockUnavailableError, UnavailableError])
    def _server_down(exc: Exception) -> Response:
        logger.warning("a server is unavailable", extra={"detail": str(exc)})
        return unavailable()

    @app.not_found
    def _no_route(_: Exception) -> Response:
        event = app.current_event
        return error_answer(HTTPStatus.NOT_FOUND, "NOT_FOUND", f"no route for {event.http_method} {event.path}")
