"""What the API sends back, and the one table of its refusals: plain data, cheap to import.

The vocabulary, used the same way in both HTTP functions:

- An :class:`Answer` is everything a function sends back: a status code, a JSON body, headers.
  The intake turns one into API Gateway's proxy result (:meth:`Answer.proxy_result`), the
  coupons function's routes into a Powertools ``Response`` (``functions/coupons/routes/responses.py``).
- A **refusal** is an answer other than success. :data:`REFUSALS` is the one table from an
  outcome (the domain's ``IssueOutcome`` and ``CopyOutcome`` members, and the
  API's own) to its HTTP status, the body's ``status`` and its ``error`` message;
  :func:`refusal` makes the answer, and :class:`RequestRefusedError` carries one from where it is
  found (a route, the caller, the request's parsing) to where it is answered. A domain outcome
  without its answer fails at import (:func:`answered`), not on the request that meets it.

Every answer has ``status``; a refusal adds ``error``, which says what was wrong. Response models
in ``schemas.py`` document these bodies, and a test checks the bodies against them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from http import HTTPStatus
from typing import Any

from coupon_core.domain.reservations import IssueOutcome

RETRY_AFTER_S = "1"
JSON_HEADERS = {"Content-Type": "application/json"}
_UNPROCESSABLE, _FORBIDDEN, _NOT_FOUND = HTTPStatus.UNPROCESSABLE_ENTITY, HTTPStatus.FORBIDDEN, HTTPStatus.NOT_FOUND
_CONFLICT, _UNAVAILABLE = HTTPStatus.CONFLICT, HTTPStatus.SERVICE_UNAVAILABLE
_NOTHING_RESERVED = "temporarily unavailable; nothing was reserved, retry later"

# outcome: (HTTP status, the body's "status", its "error" as a template of the refusal's facts).
# Every 503 also carries Retry-After.
REFUSALS: dict[str, tuple[HTTPStatus, str, str]] = {
    # The request itself
    "INVALID_REQUEST": (_UNPROCESSABLE, "INVALID_REQUEST", "{problems}"),
    "UNSUPPORTED_MEDIA_TYPE": (
        HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        "UNSUPPORTED_MEDIA_TYPE",
        "the body must be JSON (Content-Type: application/json); got {declared!r}",
    ),
    "USER_ID_MISSING": (_UNPROCESSABLE, "INVALID_REQUEST", "userId: Field required"),
    "INVALID_CHANGE": (_UNPROCESSABLE, "INVALID_REQUEST", "{problem}"),
    IssueOutcome.KEY_REUSED: (
        _UNPROCESSABLE,
        "KEY_REUSED",
        "this Idempotency-Key was used for another request to coupon {coupon}; use a new key",
    ),
    "NO_ROUTE": (_NOT_FOUND, "NOT_FOUND", "no route for {method} {path}"),
    # Who asks (USER_ID_SOURCE=claims)
    "NO_USER_IN_TOKEN": (_FORBIDDEN, "FORBIDDEN", "the token carries no numeric user id (claim {claim})"),
    "NOT_THE_TOKENS_USER": (_FORBIDDEN, "FORBIDDEN", "userId differs from the user id in the token"),
    # The coupon
    IssueOutcome.COUPON_NOT_FOUND: (_NOT_FOUND, "COUPON_NOT_FOUND", "coupon {coupon} does not exist"),
    # Issuing a copy (IssueOutcome)
    IssueOutcome.DUPLICATE: (_CONFLICT, "DUPLICATE", "user {user} already holds coupon {coupon}"),
    IssueOutcome.SOLD_OUT: (_CONFLICT, "SOLD_OUT", "coupon {coupon} is sold out"),
    IssueOutcome.NOT_OPEN: (_CONFLICT, "NOT_OPEN", "the issue window of coupon {coupon} has not opened yet"),
    IssueOutcome.ENDED: (_CONFLICT, "ENDED", "the issue window of coupon {coupon} has ended"),
    IssueOutcome.CLOSED: (_CONFLICT, "CLOSED", "coupon {coupon} is closed by its operators"),
    # Using or canceling an issued copy (CopyOutcome)
    "ALREADY_USED": (_CONFLICT, "ALREADY_USED", "user {user}'s copy of coupon {coupon} is already used"),
    "ALREADY_CANCELED": (_CONFLICT, "ALREADY_CANCELED", "user {user}'s copy of coupon {coupon} is already canceled"),
    "USED": (_CONFLICT, "USED", "user {user}'s copy of coupon {coupon} is used: it cannot be canceled"),
    "CANCELED": (_CONFLICT, "CANCELED", "user {user}'s copy of coupon {coupon} was canceled"),
    "EXPIRED": (_CONFLICT, "EXPIRED", "user {user}'s copy of coupon {coupon} has expired"),
    "PENDING": (_CONFLICT, "PENDING", "user {user}'s copy of coupon {coupon} is not persisted yet; retry in a moment"),
    "NOT_ISSUED": (_CONFLICT, "NOT_ISSUED", "user {user} holds no copy of coupon {coupon}"),
    # The servers behind it
    IssueOutcome.UNAVAILABLE: (_UNAVAILABLE, "UNAVAILABLE", _NOTHING_RESERVED),
    # a state the service could not have built (it has it built and reserves again): the same 503
    IssueOutcome.STATE_MISSING: (_UNAVAILABLE, "UNAVAILABLE", _NOTHING_RESERVED),
    IssueOutcome.UNCONFIRMED: (
        _UNAVAILABLE,
        "UNCONFIRMED",
        "request {request} may have been accepted; ask GET /coupons/{coupon}/issues/{user} before sending it again",
    ),
}


def answered(outcomes: type[StrEnum], *, besides: Iterable[StrEnum]) -> None:
    """Fail at import when one of ``outcomes`` (a domain enum) has no answer in :data:`REFUSALS`,
    ``besides`` the success its route answers itself: a new outcome is never met first by a
    request (a ``KeyError``, a 502)."""
    answered_elsewhere = set(besides)
    missing = [outcome.name for outcome in outcomes if outcome not in REFUSALS and outcome not in answered_elsewhere]
    if missing:
        raise ImportError(f"{outcomes.__name__} {', '.join(missing)}: no answer in functions/http_api/answers.py")


answered(IssueOutcome, besides={IssueOutcome.SUCCESS})


@dataclass(frozen=True)
class Answer:
    """Everything the intake sends back: a status code, a JSON body and headers."""

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


def refusal(outcome: str, **facts: object) -> Answer:
    """The answer that refuses a request for ``outcome`` (a key of :data:`REFUSALS`), its
    message filled in with ``facts``."""
    status_code, status, template = REFUSALS[outcome]
    headers = {"Retry-After": RETRY_AFTER_S} if status_code == _UNAVAILABLE else {}
    return Answer(status_code, {"status": status, "error": template.format(**facts)}, headers)


def problems(errors: Iterable[Mapping[str, Any]]) -> str:
    """An INVALID_REQUEST's error: each problem named, from pydantic's errors as Powertools'
    validation reports them (``loc`` starts with ``body``, ``header``, ``path`` or ``query``)."""
    said = []
    for error in errors:
        if error.get("type") == "json_invalid":
            said.append(f"body is not valid JSON: {error.get('ctx', {}).get('error', 'unreadable')}")
        else:
            where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
            said.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(said)


class RequestRefusedError(Exception):
    """A refusal, raised where it is found (a route, the caller) and answered by the handlers."""

    def __init__(self, outcome: str, **facts: object) -> None:
        self.answer = refusal(outcome, **facts)
        super().__init__(self.answer.body["error"])
