"""API Gateway's REST proxy integration as a WSGI app, for tools that speak HTTP (an API fuzzer).

Each request becomes the proxy event API Gateway would send the intake (``headers`` and
``multiValueHeaders``, query parameters, the body as text, or base64 when it is not UTF-8), the
handler runs in-process, and its proxy result becomes the response. ``/openapi.json`` serves the
checked-in document, so that a tool can load the schema from the same app it tests.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Callable, Iterable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from local.testkit.lambda_events import InProcessContext

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
StartResponse = Callable[[str, list[tuple[str, str]]], Any]
OPENAPI = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def gateway(handler: Handler) -> Callable[[dict[str, Any], StartResponse], Iterable[bytes]]:
    """A WSGI app in front of ``handler``."""

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ["PATH_INFO"] == "/openapi.json":
            start_response("200 OK", [("Content-Type", "application/json")])
            return [OPENAPI.read_bytes()]
        result = handler(proxy_event(environ), InProcessContext())
        headers = [(name, str(value)) for name, values in (result.get("multiValueHeaders") or {}).items()
                   for value in values]  # fmt: skip
        headers += [(name, str(value)) for name, value in (result.get("headers") or {}).items()]
        body = result.get("body") or ""
        raw = base64.b64decode(body) if result.get("isBase64Encoded") else str(body).encode()
        status = HTTPStatus(int(result["statusCode"]))
        start_response(f"{status.value} {status.phrase}", headers)
        return [raw]

    return app


def proxy_event(environ: dict[str, Any]) -> dict[str, Any]:
    """The REST proxy event of one WSGI request."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    headers: dict[str, list[str]] = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            headers.setdefault(key[5:].replace("_", "-").title(), []).append(value)
    for key, name in (("CONTENT_TYPE", "Content-Type"), ("CONTENT_LENGTH", "Content-Length")):
        if environ.get(key):
            headers[name] = [environ[key]]
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    try:
        body, encoded = (raw.decode("utf-8"), False) if raw else (None, False)
    except UnicodeDecodeError:
        body, encoded = base64.b64encode(raw).decode(), True
    path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": {name: values[-1] for name, values in headers.items()} or None,
        "multiValueHeaders": headers or None,
        "queryStringParameters": {name: values[-1] for name, values in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "requestTimeEpoch": time.time_ns() // 1_000_000,
            "stage": "fuzz",
            "httpMethod": method,
            "path": f"/fuzz{path}",
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "body": body,
        "isBase64Encoded": encoded,
    }
