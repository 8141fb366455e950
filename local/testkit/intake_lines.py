"""The intake's metrics lines, where the local tools find them: printed by an intake called
in-process (:class:`PrintedLines`), or in the intake's log group on the local stack's CloudWatch
Logs (:func:`logged_lines`); and each answer's decision time read from them
(:func:`decided_times`), for the reports' arrival order."""

from __future__ import annotations

import io
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from coupon_client.api_client import Reply
from coupon_client.fairness import Answer, decisions, gateway_request_id


class PrintedLines(io.TextIOBase):
    """Standard output while it is in place (``with PrintedLines() as lines``): the intake's
    metrics lines (Powertools prints one per answer) kept in :attr:`lines`, anything else written
    through to the real standard output. Every thread's prints pass here, as they do to
    ``sys.stdout``."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self._through: TextIO = sys.stdout
        self._partial = ""
        self._lock = threading.Lock()

    def __enter__(self) -> PrintedLines:
        self._through, sys.stdout = sys.stdout, self
        return self

    def __exit__(self, *_: object) -> None:
        sys.stdout = self._through

    def write(self, text: str) -> int:
        with self._lock:
            *whole, self._partial = (self._partial + text).split("\n")
            for line in whole:
                if line.startswith('{"_aws"'):
                    self.lines.append(line)
                else:
                    self._through.write(line + "\n")
        return len(text)


def logged_lines(logs: Any, group: str, since_ms: int, pattern: str = "") -> Iterator[str]:
    """The lines of ``group`` since ``since_ms`` (epoch ms) that match ``pattern`` (CloudWatch
    Logs' filter syntax; empty: every line), through a boto3 Logs client."""
    paginator = logs.get_paginator("filter_log_events")
    for page in paginator.paginate(logGroupName=group, startTime=since_ms, filterPattern=pattern):
        for event in page.get("events", []):
            yield str(event["message"])


LINES_WAIT_S = 20.0  # for LocalStack to have written the last answers' lines to its log group


def decided_times(read: Callable[[], Iterable[str]], wanted: set[str], wait_s: float = LINES_WAIT_S) -> dict[str, int]:
    """When each request of ``wanted`` (API Gateway's request ids) was decided, from the lines
    ``read()`` gives, read again until every one is found or ``wait_s`` has passed (a log group
    is written a moment after the answer); those never found are left out."""
    deadline = time.monotonic() + wait_s
    while True:
        decided = decisions(read())
        if wanted <= decided.keys() or time.monotonic() >= deadline:
            return {request: at for request, at in decided.items() if request in wanted}
        time.sleep(0.5)


LOOK_BACK_MS = 60_000  # the lines read start this long before the first click was sent


def lines_since(clicks: list[tuple[int, Reply]]) -> int:
    """Epoch ms from which a log group holds the lines of ``clicks`` (each ``(sent at, answer)``)."""
    return min((sent for sent, _ in clicks), default=0) - LOOK_BACK_MS


def joined(clicks: list[tuple[int, Reply]], logs: Any, group: str) -> list[Answer]:
    """Each click's arrival (when it was sent) and answer, with when the intake decided it: its
    line in the intake's log group, found by API Gateway's request id."""
    since_ms = lines_since(clicks)
    ids = [gateway_request_id(reply.headers) for _, reply in clicks]
    decided = decided_times(lambda: logged_lines(logs, group, since_ms), {i for i in ids if i is not None})
    return [Answer(sent, decided.get(i or ""), reply.status) for (sent, reply), i in zip(clicks, ids, strict=True)]
