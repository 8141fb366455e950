"""The demo's and the integration run's HTTP client, against a real HTTP server that plays the API.

What the wire adds to the retry contract (its decisions are held to every scenario by
test_retry_contract.py): one Idempotency-Key per click on every attempt, a dropped connection
read as no answer and settled on the status route, Retry-After read off the headers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from coupon_client.api_client import NO_ANSWER, ApiClient, Failure
from coupon_client.retry import Kind

DROP = "drop"  # close the connection after reading the request, without answering
LATE = "late"  # answer SUCCESS a second after reading the request


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
        if step == LATE:
            time.sleep(1)
            step = (202, {"status": "SUCCESS"}, {})
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
UNCONFIRMED = (503, {"status": "UNCONFIRMED", "error": "may have been accepted"}, {"Retry-After": "0"})


@pytest.mark.parametrize("api", [([UNAVAILABLE, UNCONFIRMED, SUCCESS], "NONE")], indirect=True)
def test_every_attempt_of_a_click_carries_its_one_key(api):
    client, server = api
    claim = client.request_coupon(1, 7)
    assert (claim.kind, claim.status, claim.attempts, server.posts, server.gets) == (Kind.SUCCESS, "SUCCESS", 3, 3, 1)
    assert claim.reply.status_code == 202
    assert len(set(server.keys)) == 1
    assert server.keys[0]


@pytest.mark.parametrize("api", [([DROP], "ISSUED")], indirect=True)
def test_a_dropped_connection_is_settled_on_the_status_route(api):
    client, server = api
    claim = client.request_coupon(1, 7)
    assert (claim.kind, claim.status, claim.reply.status_code) == (Kind.HELD, "ISSUED", NO_ANSWER)
    assert (server.posts, server.gets) == (1, 1)


@pytest.mark.parametrize("api", [([LATE], "ISSUED")], indirect=True)
def test_a_claim_waits_the_contracts_timeout_not_the_clients(api, monkeypatch):
    """The client reads for 5 s; a claim's request is a lost answer after the contract's timeout
    (here 0.2 s), and is settled on the status route."""
    monkeypatch.setattr("coupon_client.api_client.TIMEOUT_S", 0.2)
    client, server = api
    claim = client.request_coupon(1, 7)
    assert (claim.kind, claim.status, claim.reply.failure) == (Kind.HELD, "ISSUED", Failure.TIMEOUT)
    assert (server.posts, server.gets) == (1, 1)


def test_two_clicks_carry_two_keys():
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


HTTP_DATE_LATER = (
    503,
    {"status": "UNAVAILABLE", "error": "retry later"},
    {"Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"},
)


@pytest.mark.parametrize("api", [([HTTP_DATE_LATER, SUCCESS], "NONE")], indirect=True)
def test_a_retry_after_header_is_read_off_the_answer(api):
    client, _ = api
    answer = client.request("POST", "/coupon-issues", {"couponId": 1, "userId": 7})
    assert (answer.status_code, answer.retry_after_s) == (503, 0.0)
    assert client.request_coupon(1, 7).kind is Kind.SUCCESS
