"""A small HTTP client for the deployed API, and a coupon request that behaves as clients should.

Built on urllib3's connection pool (thread-safe, keep-alive, and it checks that a pooled
connection is still open before reusing it). urllib3 sends a request again only when it never
reached the server (a connect error). ``request_coupon`` makes one click's claim as the retry
contract says (``coupon_client.retry``): one ``Idempotency-Key``, a lost answer settled on the
status route before it is sent again.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING, Any

import urllib3

from coupon_client.retry import TIMEOUT_S, Claim, claim, retry_after_seconds

if TYPE_CHECKING:
    from coupon_client.aws_auth import Signer
    from coupon_client.debug import Tracer

CONNECT_TIMEOUT_S = 5  # how long a connection may take before nothing was sent
NO_ANSWER = 0
"""``Reply.status_code`` when nothing came back: the request may or may not have been handled."""


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
        self._timeout = urllib3.Timeout(connect=CONNECT_TIMEOUT_S, read=timeout_s)
        self._pool = urllib3.PoolManager(maxsize=connections, block=False, retries=retries, timeout=self._timeout)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> Reply:
        """One request; ``timeout_s`` for this one instead of the client's read timeout."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        url = self._base_url + path
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if self._sign is not None:
            all_headers |= self._sign(method, url, data, all_headers)
        if self._trace is not None:
            self._trace.request(method, url, all_headers, data)
        started = time.perf_counter()
        try:
            timeout = self._timeout if timeout_s is None else urllib3.Timeout(connect=CONNECT_TIMEOUT_S, read=timeout_s)
            response = self._pool.request(method, url, body=data, headers=all_headers, timeout=timeout)
        except urllib3.exceptions.HTTPError as exc:
            failure, said, seconds = *_failure(exc), time.perf_counter() - started
            if self._trace is not None:
                self._trace.failure(said, seconds)
            return Reply(NO_ANSWER, {"status": "NO_ANSWER", "error": said}, seconds, failure=failure)
        text = response.data.decode(errors="replace")  # a proxy's page in another encoding is still an answer
        if self._trace is not None:
            self._trace.answer(response.status, time.perf_counter() - started, response.headers, text)
        try:
            document: Any = json.loads(text)
        except json.JSONDecodeError:
            document = text
        retry_after_s = retry_after_seconds(response.headers.get("Retry-After"), time.time())
        return Reply(response.status, document, time.perf_counter() - started, retry_after_s, dict(response.headers))

    def request_coupon(self, coupon_id: int, user_id: int) -> Claim:
        """One click's ``POST /coupon-issues``, as docs/frontend.md's retry contract says
        (``coupon_client.retry.claim``): each request unanswered for ``TIMEOUT_S`` has no answer."""
        return claim(partial(self.request, timeout_s=TIMEOUT_S), coupon_id, user_id)


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
