"""The intake's metrics lines, where the local tools find them for the reports' arrival order
(``coupon_client.fairness`` measures them): printed by an intake called in-process
(:class:`PrintedLines`), or in the intake's log group on the local stack's CloudWatch Logs, read
until every answer's line is there (:func:`sale_lines`)."""

from __future__ import annotations

import io
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import TextIO

from coupon_client.fairness import Line, lines_of


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


LINES_WAIT_S = 20.0  # for LocalStack to have written the last answers' lines to its log group


def sale_lines(
    read: Callable[[], Iterable[str]], coupon_id: int, answers: int, wait_s: float = LINES_WAIT_S
) -> list[Line]:
    """The coupon's lines among what ``read()`` gives, read again until there are ``answers`` of
    them (one per request that reached the intake: a log group is written a moment after the
    answer) or ``wait_s`` has passed; then what there is."""
    deadline = time.monotonic() + wait_s
    while True:
        found = lines_of(read(), coupon_id)
        if len(found) >= answers or time.monotonic() >= deadline:
            return found
        time.sleep(0.5)


LOOK_BACK_MS = 60_000  # a sale's lines are read from this long before it began, to as long after now


def span_since(began_ms: int) -> tuple[int, int]:
    """Epoch ms between which a log group holds the lines of a sale that began at ``began_ms``."""
    return began_ms - LOOK_BACK_MS, time.time_ns() // 1_000_000 + LOOK_BACK_MS
