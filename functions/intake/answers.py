"""What the intake says back, as plain data: no framework, no models, cheap to import.

An :class:`Answer` is a status code, a JSON body and headers. The express lane
(``express.py``) turns one into API Gateway's proxy result itself; the resolver's routes wrap it
in a Powertools ``Response`` (``routes/responses.py``). Every answer has ``status``; errors add
``error``, which says what was wrong. Response models in ``schemas.py`` document these bodies,
and a test checks the bodies against them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from coupon_core.errors import UnavailableError
from coupon_core.observability import logger
from lua_redis import LockUnavailableError, StateUnavailableError

RETRY_AFTER_S = "1"
JSON_HEADERS = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Answer:
    status_code: HTTPStatus
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    def proxy_result(self) -> dict[str, Any]:
        """API Gateway's REST proxy result, in the shape Powertools' REST resolver gives."""
        headers = JSON_HEADERS | self.headers
        return {
            "statusCode": self.status_code,
            "body": json.dumps(self.body, separators=(",", ":")),
            "isBase64Encoded": False,
            "multiValueHeaders": {name: [value] for name, value in headers.items()},
        }


class RequestRefusedError(Exception):
    """An answer other than success, raised where the refusal is found (a route, the caller)."""

    def __init__(self, status_code: HTTPStatus, status: str, error: str) -> None:
        super().__init__(error)
        self.status_code, self.status, self.error = status_code, status, error


def coupon_not_found(coupon_id: int) -> RequestRefusedError:
    return RequestRefusedError(HTTPStatus.NOT_FOUND, "COUPON_NOT_FOUND", f"coupon {coupon_id} does not exist")


def error_answer(status_code: HTTPStatus, status: str, error: str, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status_code, {"status": status, "error": error}, headers or {})


def unavailable() -> Answer:
    return error_answer(
        HTTPStatus.SERVICE_UNAVAILABLE,
        "UNAVAILABLE",
        "temporarily unavailable; nothing was reserved, retry later",
        {"Retry-After": RETRY_AFTER_S},
    )


def unconfirmed(coupon_id: int, user_id: int, request_id: str) -> Answer:
    """The record was sent but never acknowledged: the request may have been accepted."""
    return error_answer(
        HTTPStatus.SERVICE_UNAVAILABLE,
        "UNCONFIRMED",
        f"request {request_id} may have been accepted; ask GET /coupons/{coupon_id}/issues/{user_id} "
        "before sending it again",
        {"Retry-After": RETRY_AFTER_S},
    )


Answered = RequestRefusedError | StateUnavailableError | LockUnavailableError | UnavailableError
ANSWERED = (RequestRefusedError, StateUnavailableError, LockUnavailableError, UnavailableError)


def answer_for(exc: Answered) -> Answer:
    """The answer to an exception a route raised: a refusal says why, a server outage is a 503
    with ``Retry-After`` (never a bare 500). Anything else is a bug and stays an exception."""
    if isinstance(exc, RequestRefusedError):
        return error_answer(exc.status_code, exc.status, exc.error)
    logger.warning("a server is unavailable", extra={"detail": str(exc)})
    return unavailable()
