"""An HTTP server on the loopback that answers what a test sets, and keeps what it was sent: how
the command's handling of each answer the API documents is tested without a deployment (the
integration tier runs it against the real API on LocalStack)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STAGE = "/dev"


@dataclass
class Sent:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Answer:
    status: int
    body: Any  # a JSON document, or text sent as it is
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait this long before answering (a slow API)


@dataclass
class ApiDouble:
    url: str
    answers: dict[tuple[str, str], list[Answer]] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)

    def answer(self, method: str, path: str, *answers: Answer) -> None:
        """Answer ``method path`` (its query included) with ``answers`` in turn, the last again."""
        self.answers[(method, path)] = list(answers)

    def _next(self, method: str, path: str) -> Answer:
        queue = self.answers.get((method, path))
        if not queue:
            return Answer(404, {"status": "NOT_FOUND", "error": f"the double has no answer for {method} {path}"})
        return queue.pop(0) if len(queue) > 1 else queue[0]


@contextmanager
def api_double() -> Iterator[ApiDouble]:
    double: ApiDouble

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            path = self.path.removeprefix(STAGE)
            double.sent.append(Sent(self.command, path, dict(self.headers), self.rfile.read(length)))
            answer = double._next(self.command, path)
            time.sleep(answer.delay_s)
            raw = answer.body.encode() if isinstance(answer.body, str) else json.dumps(answer.body).encode()
            self.send_response(answer.status)
            content_type = "text/csv" if isinstance(answer.body, str) else "application/json"
            for name, value in {"Content-Type": content_type, **answer.headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = do_PATCH = _handle  # noqa: N815

        def log_message(self, *_: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a client that gave up on a slow answer closed its end: nothing to report

    server = Server(("127.0.0.1", 0), Handler)
    double = ApiDouble(f"http://127.0.0.1:{server.server_address[1]}{STAGE}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield double
    finally:
        server.shutdown()
        server.server_close()
