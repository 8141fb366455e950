"""The intake's metrics lines, where the local tools find them: printed by an intake called
in-process (:class:`PrintedLines`), or in the intake's log group on the local stack's CloudWatch
Logs (:func:`logged_lines`). ``coupon_client.fairness.decisions`` reads each answer's decision
time from them, for the reports' arrival order."""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO


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
