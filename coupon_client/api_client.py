"""A small HTTP client for the deployed API, and a coupon request that behaves as clients should.

Built on urllib3's connection pool (thread-safe, keep-alive, and it checks that a pooled
connection is still open before reusing it). urllib3 sends a request again only when it never
reached the server (a connect error). ``request_coupon`` sends ``POST /coupon-issues`` with an
``Idempotency-Key``, so that it may send it again after a lost answer: the API answers the
request's own SUCCESS again instead of DUPLICATE.
"""

from __future__ import annotations

import json
import random
import re
import time
import uuid
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from enum import StrEnum
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import urllib3

if TYPE_CHECKING:
    from coupon_client.aws_auth import Signer
    from coupon_client.debug import Tracer

NO_ANSWER = 0
"""``Reply.status_code`` when nothing came back: the request may or may not have been handled."""

ISSUE_ATTEMPTS = 5
RETRY_LATER = (HTTPStatus.SERVICE_UNAVAILABLE, HTTPStatus.TOO_MANY_REQUESTS)
MAX_RETRY_AFTER_S = 5.0
RETRY_JITTER = 1.5  # a retry waits Retry-After times 1 to this, so that refused clients do not return together


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """A ``Retry-After`` header's wait in seconds: delay-seconds (``1``) or an HTTP date (RFC 9110),
    counted from ``now`` (epoch seconds); None without one, or for one that is neither."""
    if value is None:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - now, 0.0) if when.tzinfo is not None else None


class Failure(StrEnum):
    """Why nothing came back (``NO_ANSWER``), as far as the client can tell."""

    UNREACHABLE = "unreachable"  # no connection was made: nothing was sent
    TLS = "tls"  # the TLS handshake failed: nothing was sent
    TIMEOUT = "timeout"  # sent; no answer within the read timeout
    DROPPED = "dropped"  # sent; the connection closed before an answer


@dataclass(frozen=True)
class Reply:
    status_code: int
    body: Any  # the JSON document, or the raw text when the answer was not JSON
    seconds: float
    retry_after_s: float | None = None  # the Retry-After header (503, 429)
    headers: dict[str, str] = field(default_factory=dict)
    failure: Failure | None = None  # set when status_code is NO_ANSWER

    @property
    def status(self) -> str:
        """The API's ``status`` field, or the HTTP status code when the body has none."""
        return str(self.body.get("status", self.status_code)) if isinstance(self.body, dict) else str(self.status_code)


class ApiClient:
    """``sign`` adds the headers that authenticate a request (``coupon_client.aws_auth``): SigV4 for the
    IAM-authorised routes, a Cognito token for the public ones in prod; none locally."""

    def __init__(
        self, base_url: str, timeout_s: float = 60, connections: int = 16, *, sign: Signer | None = None,
        trace: Tracer | None = None,
    ) -> None:  # fmt: skip
        self._base_url = base_url.rstrip("/")
        self._sign = sign
        self._trace = trace
        retries = urllib3.Retry(total=3, connect=3, read=0, status=0, other=0, redirect=0, backoff_factor=0.1)
        self._pool = urllib3.PoolManager(
            maxsize=connections, block=False, retries=retries, timeout=urllib3.Timeout(connect=5, read=timeout_s)
        )

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        url = self._base_url + path
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if self._sign is not None:
            all_headers |= self._sign(method, url, data, all_headers)
        if self._trace is not None:
            self._trace.request(method, url, all_headers, data)
        started = time.perf_counter()
        try:
            response = self._pool.request(method, url, body=data, headers=all_headers)
        except urllib3.exceptions.HTTPError as exc:
            failure, said, seconds = *_failure(exc), time.perf_counter() - started
            if self._trace is not None:
                self._trace.failure(said, seconds)
            return Reply(NO_ANSWER, {"status": "NO_ANSWER", "error": said}, seconds, failure=failure)
        text = response.data.decode()
        if self._trace is not None:
            self._trace.answer(response.status, time.perf_counter() - started, response.headers, text)
        try:
            document: Any = json.loads(text)
        except json.JSONDecodeError:
            document = text
        retry_after_s = retry_after_seconds(response.headers.get("Retry-After"), time.time())
        return Reply(response.status, document, time.perf_counter() - started, retry_after_s, dict(response.headers))

    def request_coupon(self, coupon_id: int, user_id: int) -> Reply:
        """``POST /coupon-issues`` as the API asks clients to behave.

        Every attempt carries the same ``Idempotency-Key``. 503 UNAVAILABLE (nothing reserved) and
        429 (throttled at the gateway) are tried again after ``Retry-After`` (1 s without one) and
        up to half as long again (jitter: refused clients do not all come back at once);
        503 UNCONFIRMED, no answer, or a gateway error (the function failed or timed out) mean the
        request may have been handled, and are tried again too: with the key, a request that had
        succeeded answers its own SUCCESS again. If the answer is still unknown after
        ``ISSUE_ATTEMPTS`` tries, the status route settles it: ``ANSWER_LOST`` with what it said
        (PENDING, ISSUED or FAILED) when the user holds a copy, else the last answer.
        """
        path, body = "/coupon-issues", {"couponId": coupon_id, "userId": user_id}
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        started = time.perf_counter()
        answer = self.request("POST", path, body, headers=headers)
        for _ in range(ISSUE_ATTEMPTS - 1):
            if not _try_again(answer):
                break
            if answer.status_code != NO_ANSWER:  # after Retry-After, and up to half as long again: jitter
                wait_s = min(1.0 if answer.retry_after_s is None else answer.retry_after_s, MAX_RETRY_AFTER_S)
                time.sleep(wait_s * random.uniform(1.0, RETRY_JITTER))
            answer = self.request("POST", path, body, headers=headers)
        if _unknown(answer):
            held = self.request("GET", f"/coupons/{coupon_id}/issues/{user_id}")
            if held.status_code != HTTPStatus.OK or held.status != "NONE":
                lost = {"status": "ANSWER_LOST", "issue": held.status, "answer": answer.body}
                return replace(answer, body=lost, seconds=time.perf_counter() - started)
        return replace(answer, seconds=time.perf_counter() - started)


_CONNECTION = re.compile(r"^HTTPS?Connection\(host='([^']*)', port=(\d+)\): ")


def _failure(exc: urllib3.exceptions.HTTPError) -> tuple[Failure, str]:
    """What kind of failure ``exc`` is, and its cause in words (urllib3 wraps the cause in a
    ``MaxRetryError`` once its retries are spent)."""
    cause = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason else exc
    said = _CONNECTION.sub(r"\1:\2: ", str(cause))  # urllib3's connection object, as host:port
    if isinstance(cause, urllib3.exceptions.SSLError):
        return Failure.TLS, said
    if isinstance(cause, urllib3.exceptions.NewConnectionError | urllib3.exceptions.ConnectTimeoutError):
        return Failure.UNREACHABLE, said
    if isinstance(cause, urllib3.exceptions.ReadTimeoutError):
        return Failure.TIMEOUT, said
    return Failure.DROPPED, said


def _unknown(answer: Reply) -> bool:
    """The request may or may not have been handled."""
    return answer.status_code == NO_ANSWER or (
        answer.status_code >= HTTPStatus.INTERNAL_SERVER_ERROR and answer.status != "UNAVAILABLE"
    )


def _try_again(answer: Reply) -> bool:
    return answer.status_code in RETRY_LATER or _unknown(answer)
