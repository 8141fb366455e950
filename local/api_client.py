"""A small HTTP client for the deployed API: JSON in and out, one keep-alive connection per thread."""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Answer:
    status_code: int
    body: Any  # the JSON document, or the raw text when the answer was not JSON
    seconds: float


class ApiClient:
    def __init__(self, base_url: str, timeout_s: float = 60) -> None:
        parts = urlsplit(base_url)
        self._host, self._port, self._prefix = parts.hostname or "127.0.0.1", parts.port or 80, parts.path.rstrip("/")
        self._timeout_s = timeout_s
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        if getattr(self._local, "connection", None) is None:
            self._local.connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout_s)
        return self._local.connection

    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None) -> Answer:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        headers = {"Content-Type": "application/json"}
        for attempt in (1, 2):  # a kept-alive connection the server closed is opened again once
            started = time.perf_counter()
            try:
                connection = self._connection()
                connection.request(method, self._prefix + path, body=data, headers=headers)
                response = connection.getresponse()
                text = response.read().decode()
                break
            except (http.client.HTTPException, ConnectionError):
                self._local.connection = None
                if attempt == 2:
                    raise
        try:
            document: Any = json.loads(text)
        except json.JSONDecodeError:
            document = text
        return Answer(response.status, document, time.perf_counter() - started)
