"""The demo's and the integration run's HTTP client, against a real HTTP server that plays the API.

What matters: every attempt of one coupon request carries the same Idempotency-Key (so that a
request sent again after a lost answer gets its own SUCCESS back, not DUPLICATE), a 503 is
retried after its Retry-After, and an answer still unknown after the attempts is settled with the
status route.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from coupon_client.api_client import NO_ANSWER, ApiClient, retry_after_seconds

DROP = "drop"  # close the connection after reading the request, without answering


class ScriptedApi(ThreadingHTTPServer):
    """Answers POSTs from a script, one entry per request, and GET status from ``held``."""

    def __init__(self, script: list[object], held: str = "NONE") -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script, self.held = list(script), held
        self.posts = 0
        self.gets = 0
        self.keys: list[str | None] = []


class Handler(BaseHTTPRequestHandler):
    server: ScriptedApi
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: object) -> None:
        """Quiet."""

    def _answer(self, status: int, body: dict[str, object], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        headers = {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.posts += 1
        self.server.keys.append(self.headers.get("Idempotency-Key"))
        step = self.server.script.pop(0)
        if step == DROP:
            self.close_connection = True
            return
        status, body, headers = step  # type: ignore[misc]
        self._answer(status, body, headers)

    def do_GET(self) -> None:
        self.server.gets += 1
        self._answer(200, {"status": self.server.held})


@pytest.fixture
def api(request: pytest.FixtureRequest) -> Iterator[tuple[ApiClient, ScriptedApi]]:
    script, held = request.param
    server = ScriptedApi(script, held)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield ApiClient(f"http://127.0.0.1:{server.server_address[1]}/prod", timeout_s=5), server
    server.shutdown()
    server.server_close()


SUCCESS = (202, {"status": "SUCCESS", "requestId": "r-1"}, {})
UNAVAILABLE = (503, {"status": "UNAVAILABLE", "error": "retry later"}, {"Retry-After": "0"})
GATEWAY_ERROR = (502, {"message": "Internal server error"}, {})
THROTTLED = (429, {"message": "Too Many Requests"}, {"Retry-After": "0"})
UNCONFIRMED = (503, {"status": "UNCONFIRMED", "error": "may have been accepted"}, {"Retry-After": "0"})


@pytest.mark.parametrize("api", [([UNAVAILABLE, THROTTLED, SUCCESS], "NONE")], indirect=True)
def test_a_503_or_429_is_retried_after_its_retry_after(api):
    client, server = api
    answer = client.request_coupon(1, 7)
    assert (answer.status_code, answer.status, server.posts, server.gets) == (202, "SUCCESS", 3, 0)


@pytest.mark.parametrize("api", [([UNAVAILABLE] * 5, "NONE")], indirect=True)
def test_503s_give_up_after_the_attempts(api):
    client, server = api
    answer = client.request_coupon(1, 7)
    assert (answer.status_code, answer.retry_after_s, server.posts) == (503, 0, 5)


@pytest.mark.parametrize("api", [([DROP, GATEWAY_ERROR, SUCCESS], "NONE")], indirect=True)
def test_a_lost_answer_is_sent_again_with_the_same_idempotency_key(api):
    client, server = api
    answer = client.request_coupon(1, 7)
    assert (answer.status_code, answer.status, server.posts, server.gets) == (202, "SUCCESS", 3, 0)
    assert len(set(server.keys)) == 1
    assert server.keys[0]


@pytest.mark.parametrize("api", [([DROP] * 5, "PENDING")], indirect=True)
def test_an_answer_still_unknown_after_the_attempts_is_settled_by_the_status_route(api):
    client, server = api
    answer = client.request_coupon(1, 7)
    assert (answer.status_code, answer.status, answer.body["issue"]) == (NO_ANSWER, "ANSWER_LOST", "PENDING")
    assert (server.posts, server.gets) == (5, 1)


def test_two_requests_carry_two_keys():
    server = ScriptedApi([SUCCESS, SUCCESS])
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        client = ApiClient(f"http://127.0.0.1:{server.server_address[1]}/prod", timeout_s=5)
        client.request_coupon(1, 7)
        client.request_coupon(1, 8)
    finally:
        server.shutdown()
        server.server_close()
    assert len(set(server.keys)) == 2


@pytest.mark.parametrize("api", [([DROP], "NONE")], indirect=True)
def test_a_plain_request_reports_no_answer_instead_of_raising(api):
    client, server = api
    answer = client.request("POST", "/coupon-issues", {"couponId": 1, "userId": 7})
    assert (answer.status_code, answer.status, server.posts) == (NO_ANSWER, "NO_ANSWER", 1)


@pytest.mark.parametrize("api", [([UNCONFIRMED, SUCCESS], "PENDING")], indirect=True)
def test_an_unconfirmed_503_is_sent_again_with_its_key(api):
    client, server = api
    answer = client.request_coupon(1, 7)
    assert (answer.status, server.posts, server.gets, len(set(server.keys))) == ("SUCCESS", 2, 0, 1)


@pytest.mark.parametrize(
    ("header", "now", "seconds"),
    [("2", 0.0, 2.0), (" 7 ", 0.0, 7.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470.0, 10.0),
     ("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490.0, 0.0), (None, 0.0, None), ("soon", 0.0, None), ("-1", 0.0, None)],
)  # fmt: skip
def test_retry_after_is_read_in_both_of_its_forms(header, now, seconds):
    """Delay-seconds or an HTTP date (RFC 9110); a date in the past is now."""
    assert retry_after_seconds(header, now) == seconds


HTTP_DATE_LATER = (
    503,
    {"status": "UNAVAILABLE", "error": "retry later"},
    {"Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"},
)


@pytest.mark.parametrize("api", [([HTTP_DATE_LATER, SUCCESS], "NONE")], indirect=True)
def test_a_retry_after_given_as_a_date_is_honoured(api):
    client, server = api
    answer = client.request_coupon(1, 7)
    assert (answer.status_code, server.posts) == (202, 2)
