"""Lambda's Invoke API on the loopback, running the functions' handlers in-process.

The HTTP functions invoke the rebuild function synchronously (a missing state built, a reconcile
on demand) with boto3's Lambda client. In the tests that run them in-process against the real
servers, ``AWS_ENDPOINT_URL_LAMBDA`` points that client here: the same request (SigV4-signed
``POST /2015-03-31/functions/{name}/invocations``), the handler run with the payload as its event,
and the answer in Lambda's shape, a function's error included (``X-Amz-Function-Error`` and an
``errorMessage`` payload). What it does not do is what Lambda's service does around a call:
separate containers (the handler runs in a thread of this process, with its module's wiring) and
throttling at a reserved concurrency (the unit tests of ``adapters.lambda_rebuild`` stub that).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from local.testkit.lambda_events import InProcessContext

Handler = Callable[[Any, Any], Any]
_INVOKE = re.compile(r"^/2015-03-31/functions/(?P<name>[^/]+)/invocations$")


class LambdaService:
    """Serves ``functions`` (a function name to its handler) until :meth:`close`; ``url`` is the
    endpoint to give boto3."""

    def __init__(self, functions: Mapping[str, Handler]) -> None:
        self.invocations: list[tuple[str, Any]] = []
        service = self

        class _Invoke(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                match = _INVOKE.match(self.path.split("?", 1)[0])
                handler = functions.get(match["name"]) if match else None
                if match is None or handler is None:
                    error = {"Type": "User", "message": f"Function not found: {self.path}"}
                    self._answer(HTTPStatus.NOT_FOUND, error, {"x-amzn-ErrorType": "ResourceNotFoundException"})
                    return
                event = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
                service.invocations.append((match["name"], event))
                try:
                    result = handler(event, InProcessContext())
                except Exception as exc:  # what Lambda answers for an unhandled error
                    failure = {"errorMessage": str(exc), "errorType": type(exc).__name__}
                    self._answer(HTTPStatus.OK, failure, {"X-Amz-Function-Error": "Unhandled"})
                    return
                self._answer(HTTPStatus.OK, result, {})

            def _answer(self, status: HTTPStatus, document: Any, headers: dict[str, str]) -> None:
                raw = json.dumps(document).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests read the invocations, not an access log."""

        class _Server(ThreadingHTTPServer):
            request_queue_size = 256  # a burst of callers at once, as Lambda's front end takes them
            daemon_threads = True

        self._server = _Server(("127.0.0.1", 0), _Invoke)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="lambda-service", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
