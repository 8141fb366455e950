"""The operators' routes of a deployed API, one method each, with every answer that is not a
success turned into the one error that says what happened (``coupon_client.errors``).

The routes and their bodies are the API's contract (docs/design.md, HTTP API); this module adds
nothing to it. Requests are signed with SigV4 by the caller's ``ApiClient``.
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode, urlsplit

from coupon_client.api_client import NO_ANSWER, ApiClient, Failure, Reply
from coupon_client.errors import (
    BlockedError,
    ConflictError,
    CouponsError,
    ForbiddenError,
    NoAnswerError,
    NoCredentialsError,
    NotFoundError,
    RefusedError,
    SessionExpiredError,
    TlsError,
    UnavailableError,
    UnreachableError,
)

Body = dict[str, Any]


@dataclass(frozen=True)
class CsvPage:
    text: str  # a header row, then one row an issue
    next_after: int | None  # the ``after`` of the next page; None on the last


class AdminApi:
    """The admin routes (IAM-authorised) and the status route, for support."""

    def __init__(self, client: ApiClient, api_url: str, region: str) -> None:
        self._client = client
        self._api_url = api_url
        self._region = region

    def create(self, body: Body) -> Body:
        return self._json("POST", "/coupons", body, expected=HTTPStatus.CREATED)

    def coupons_page(self, after: int, limit: int) -> Body:
        return self._json("GET", "/coupons?" + urlencode({"after": after, "limit": limit}))

    def coupon(self, coupon_id: int) -> Body:
        return self._json("GET", f"/coupons/{coupon_id}")

    def change(self, coupon_id: int, changes: Body) -> Body:
        return self._json("PATCH", f"/coupons/{coupon_id}", changes)

    def close(self, coupon_id: int) -> Body:
        return self._json("POST", f"/coupons/{coupon_id}/close")

    def reopen(self, coupon_id: int) -> Body:
        return self._json("POST", f"/coupons/{coupon_id}/reopen")

    def top_up(self, coupon_id: int, copies: int) -> Body:
        return self._json("POST", f"/coupons/{coupon_id}/top-up", {"copies": copies})

    def reconcile(self, coupon_id: int) -> Body:
        return self._json("POST", f"/coupons/{coupon_id}/reconcile")

    def issues_page(self, coupon_id: int, after: int, limit: int) -> Body:
        return self._json("GET", f"/coupons/{coupon_id}/issues?" + urlencode({"after": after, "limit": limit}))

    def issues_csv(self, coupon_id: int, after: int, limit: int) -> CsvPage:
        query = urlencode({"after": after, "limit": limit, "format": "csv"})
        reply = self._send("GET", f"/coupons/{coupon_id}/issues?{query}")
        following = {name.lower(): value for name, value in reply.headers.items()}.get("x-next-after")
        return CsvPage(str(reply.body), int(following) if following else None)

    def status(self, coupon_id: int, user_id: int) -> Body:
        return self._json("GET", f"/coupons/{coupon_id}/issues/{user_id}")

    def _json(self, method: str, path: str, body: Body | None = None, *, expected: int = HTTPStatus.OK) -> Body:
        reply = self._send(method, path, body, expected=expected)
        if not isinstance(reply.body, dict):
            raise NoAnswerError(f"{method} {path} answered {reply.status_code} without a JSON document: {reply.body!r}")
        return reply.body

    def _send(self, method: str, path: str, body: Body | None = None, *, expected: int = HTTPStatus.OK) -> Reply:
        reply = self._client.request(method, path, body)
        if reply.status_code != expected:
            raise refusal(reply, method, path, self.invoke_arn(method, path), self._region)
        return reply

    def invoke_arn(self, method: str, path: str) -> str:
        """The resource of ``execute-api:Invoke`` that calling ``method path`` needs."""
        parts = urlsplit(self._api_url)
        host, segments = parts.hostname or "", parts.path.strip("/").split("/")
        if ".execute-api." in host:  # AWS's own: https://<api id>.execute-api.<region>.amazonaws.com/<stage>
            api_id, stage = host.split(".")[0], segments[0]
        elif "execute-api" in segments[:-2]:  # an endpoint's path form: /_aws/execute-api/<api id>/<stage>
            at = segments.index("execute-api")
            api_id, stage = segments[at + 1], segments[at + 2]
        else:  # a URL of one's own in front of it
            api_id, stage = "*", segments[0] or "*"
        return f"arn:aws:execute-api:{self._region}:*:{api_id}/{stage}/{method}{path.split('?', 1)[0]}"


def refusal(reply: Reply, method: str, path: str, invoke_arn: str, region: str) -> CouponsError:
    """The error that an answer other than the route's success means (the API's ``status`` and
    ``error`` in its message). A read (GET) changes nothing whatever happened to it; a write
    that got no answer may have been carried out, and the message says how to look."""
    said, code, route = _said(reply), reply.status_code, path.split("?", 1)[0]
    if code == NO_ANSWER:
        return _no_answer(reply, method, route)
    if code == HTTPStatus.FORBIDDEN and (denied := _forbidden(reply, said)) is not None:
        return denied
    if code in (HTTPStatus.UNAUTHORIZED, HTTPStatus.FORBIDDEN):
        lacks = f"it needs execute-api:Invoke on {invoke_arn} ({region})"
        return ForbiddenError(f"{code}: your identity may not call {method} {route}: {lacks}; {said}".rstrip("; "))
    if code in (HTTPStatus.SERVICE_UNAVAILABLE, HTTPStatus.TOO_MANY_REQUESTS):
        after = f"after {reply.retry_after_s:g} s" if reply.retry_after_s is not None else "in a few seconds"
        who = " (the stage's rate limit, or the web ACL's)" if code == HTTPStatus.TOO_MANY_REQUESTS else ""
        return UnavailableError(f"{code} {said}{who}; nothing changed: try again {after}")
    if code in _REFUSALS:
        error, suffix = _REFUSALS[code]
        return error(f"{code} {said}{suffix}")
    return NoAnswerError(f"{code} from {method} {route}: {said}; {_outcome(method, route)}")


def _no_answer(reply: Reply, method: str, route: str) -> CouponsError:
    said = _said(reply).removeprefix("NO_ANSWER: ")
    if reply.failure is Failure.UNREACHABLE:
        return UnreachableError(f"could not connect for {method} {route} ({said}); nothing was sent")
    if reply.failure is Failure.TLS:
        return TlsError(f"TLS failed for {method} {route} ({said}); nothing was sent")
    waited = "no answer in time" if reply.failure is Failure.TIMEOUT else "the connection closed before an answer"
    return NoAnswerError(f"{waited} from {method} {route} ({said}); {_outcome(method, route)}")


def _outcome(method: str, route: str) -> str:
    """What an unknown outcome means: nothing for a read; for a write, where to look."""
    if method == "GET":
        return "a read: nothing changed, try again"
    segments = route.strip("/").split("/")
    look = f"coupons show {segments[1]}" if len(segments) > 1 and segments[0] == "coupons" else "coupons list"
    return f"it may have been carried out: look ({look}) before repeating it"


def _forbidden(reply: Reply, said: str) -> CouponsError | None:
    """A 403 that is not a policy's denial: a web ACL's block (``x-amzn-ErrorType:
    ForbiddenException``, ``Forbidden``), or credentials or a signature AWS refused."""
    kind = {name.lower(): value for name, value in reply.headers.items()}.get("x-amzn-errortype", "")
    if kind.startswith("ForbiddenException") or said == "Forbidden":
        return BlockedError(
            "403 Forbidden from the web ACL (AWS WAF) in front of the API, not from IAM: a rule blocked the "
            "request (the per-caller rate, Bot Control or a managed rule; the web ACL's sampled requests say "
            "which); nothing changed"
        )
    if kind.startswith("InvalidSignatureException") or "Signature expired" in said:
        return NoCredentialsError(f"403: AWS refused the request's signature ({said}): is this machine's clock right?")
    if "security token included in the request is expired" in said or kind.startswith("ExpiredToken"):
        return SessionExpiredError(f"403: AWS refused the credentials as expired ({said}): sign in again")
    if "security token included in the request is invalid" in said or kind.startswith("UnrecognizedClient"):
        return NoCredentialsError(f"403: AWS refused the credentials as invalid ({said}): sign in again")
    return None


_REFUSALS: dict[int, tuple[type[CouponsError], str]] = {
    HTTPStatus.NOT_FOUND: (NotFoundError, ""),
    HTTPStatus.CONFLICT: (ConflictError, ""),
    HTTPStatus.UNPROCESSABLE_ENTITY: (RefusedError, "; nothing changed"),
    HTTPStatus.BAD_REQUEST: (RefusedError, "; nothing changed"),
    HTTPStatus.UNSUPPORTED_MEDIA_TYPE: (RefusedError, "; nothing changed"),
}


def _said(reply: Reply) -> str:
    """The API's own words: ``STATUS: error``, or the body as text."""
    if isinstance(reply.body, dict):
        status, error = reply.body.get("status"), reply.body.get("error") or reply.body.get("message")
        return ": ".join(str(part) for part in (status, error) if part)
    return str(reply.body).strip()[:200]
