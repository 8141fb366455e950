"""``coupons watch COUPON``: a sale's figures, redrawn every second, with the emergency close (and
reopen, top-up) a key away.

Each frame reads the coupon from the API (its database and Redis counts, read live) and the
stack's figures (``coupon_client.metrics``); Rich's ``Live`` draws it. Keys are read from the
terminal in cbreak mode (no echo, no line buffering; Ctrl-C still interrupts), and put back as
they were for a prompt and on the way out, however the view ends.
"""

from __future__ import annotations

import json
import os
import select
import sys
import termios
import tty
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.prompt import Confirm, IntPrompt
from rich.table import Table
from rich.text import Text

from coupon_client.admin import AdminApi, Body
from coupon_client.arguments import MAX_COPIES
from coupon_client.errors import CouponsError
from coupon_client.metrics import Answers, StackFigures, StackMetrics, Unavailable

KEYS = "[c] close  [r] reopen  [t] top up  [q] quit"


@dataclass(frozen=True)
class Frame:
    """One refresh: the coupon as the API said it, the stack's figures, and what the last read or
    action said."""

    coupon: Body
    stack: StackFigures
    read_at: datetime
    note: str = ""

    def document(self) -> dict[str, Any]:
        """The frame as ``--json`` prints it, one line a refresh."""
        answers = self.stack.answers
        return {
            "readAt": self.read_at.isoformat(),
            "coupon": self.coupon,
            "inFlight": in_flight(self.coupon),
            "stockLeft": stock_left(self.coupon),
            "answersPerSecond": _or_reason(answers, lambda a: {"minute": a.at.isoformat(), **a.per_second}),
            "latencyMs": _or_reason(answers, lambda a: {"p50": a.p50_ms, "p99": a.p99_ms}),
            "workerLag": _or_reason(self.stack.worker_lag, lambda lag: lag),
            "deadLetters": _or_reason(self.stack.dead_letters, lambda count: count),
            "note": self.note,
        }


def in_flight(coupon: Body) -> int:
    """Reserved in Redis, not yet persisted in PostgreSQL (a canceled copy whose user may not take
    it again stays reserved, and counts here too)."""
    return max(int(coupon["reserved"]) - int(coupon["issued"]), 0)


def stock_left(coupon: Body) -> int:
    """What the sale can still sell: the database's remaining copies less those in flight."""
    return max(int(coupon["remainingQuantity"]) - in_flight(coupon), 0)


def read_frame(admin: AdminApi, metrics: StackMetrics, coupon_id: int, previous: Frame | None) -> Frame:
    """The next frame; a failed read of the coupon keeps the previous figures and says why."""
    now = datetime.now(UTC)
    try:
        coupon = admin.coupon(coupon_id)
    except CouponsError as exc:
        if previous is None:
            raise
        return Frame(
            previous.coupon, metrics.read(), now, f"read failed, figures of {previous.read_at:%H:%M:%S}: {exc}"
        )
    return Frame(coupon, metrics.read(), now)


def render(frame: Frame, target: str) -> Panel:
    coupon = frame.coupon
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("state", _state(coupon, frame.read_at))
    table.add_row("window", f"{coupon['issueStartsAt']} -> {coupon['issueEndsAt']}")
    table.add_row("stock left", f"{stock_left(coupon)} of {coupon['totalQuantity']}")
    table.add_row("reserved in Redis", str(coupon["reserved"]))
    table.add_row("issued in PostgreSQL", str(coupon["issued"]))
    table.add_row("in flight", str(in_flight(coupon)))
    answers = frame.stack.answers
    if isinstance(answers, Answers):
        rates = "  ".join(f"{status} {rate:.1f}" for status, rate in sorted(answers.per_second.items()))
        table.add_row(f"answers/s (all coupons, {answers.at:%H:%M} UTC)", rates)
        table.add_row("latency p50 / p99", f"{_ms(answers.p50_ms)} / {_ms(answers.p99_ms)}")
    else:
        table.add_row("answers/s", _unavailable(answers))
        table.add_row("latency p50 / p99", _unavailable(answers))
    lag = frame.stack.worker_lag
    table.add_row("worker lag", _unavailable(lag) if isinstance(lag, Unavailable) else f"{lag:,.0f} records")
    letters = frame.stack.dead_letters
    table.add_row("dead letters waiting", _unavailable(letters) if isinstance(letters, Unavailable) else str(letters))
    footer = Text(KEYS, style="dim")
    parts: list[Table | Text] = [table, Text(frame.note, style="yellow"), footer] if frame.note else [table, footer]
    title = f"coupon {coupon['couponId']} · {coupon['name']} · {target} · {frame.read_at:%H:%M:%S} UTC"
    return Panel(Group(*parts), title=title, title_align="left")


def watch(
    admin: AdminApi, metrics: StackMetrics, coupon_id: int, console: Console, target: str, *, interval_s: float,
    frames: int | None,
) -> None:  # fmt: skip
    """Draw frames until ``q``, Ctrl-C (KeyboardInterrupt, left to the caller) or ``frames``."""
    frame = read_frame(admin, metrics, coupon_id, None)
    drawn = 0
    with Keys(sys.stdin) as keys, Live(render(frame, target), console=console, auto_refresh=False) as live:
        while True:
            drawn += 1
            if frames is not None and drawn >= frames:
                return
            key = keys.read(interval_s)
            if key == "q":
                return
            note = ""
            if key in ACTIONS:
                live.stop()
                with keys.paused():
                    note = act(admin, coupon_id, key, console)
                live.start()
            frame = read_frame(admin, metrics, coupon_id, frame)
            if note:
                frame = Frame(frame.coupon, frame.stack, frame.read_at, note)
            live.update(render(frame, target), refresh=True)


def watch_json(admin: AdminApi, metrics: StackMetrics, coupon_id: int, out: TextIO, *, interval_s: float,
               frames: int | None, sleep: Callable[[float], None]) -> None:  # fmt: skip
    """``--json``: one document a refresh, one a line, nothing else on ``out``."""
    frame, drawn = None, 0
    while frames is None or drawn < frames:
        if drawn:
            sleep(interval_s)
        frame = read_frame(admin, metrics, coupon_id, frame)
        out.write(json.dumps(frame.document()) + "\n")
        out.flush()
        drawn += 1


ACTIONS = {"c": "close", "r": "reopen", "t": "top up"}


def act(admin: AdminApi, coupon_id: int, key: str, console: Console) -> str:
    """Ask, then do what ``key`` names; what happened, for the frame's note."""
    try:
        if key == "c" and Confirm.ask(
            f"Close coupon {coupon_id} now? Requests will answer 409 CLOSED", console=console
        ):
            admin.close(coupon_id)
            return f"closed at {datetime.now(UTC):%H:%M:%S} UTC"
        if key == "r" and Confirm.ask(f"Reopen coupon {coupon_id}?", console=console):
            admin.reopen(coupon_id)
            return f"reopened at {datetime.now(UTC):%H:%M:%S} UTC"
        if key == "t":
            copies = IntPrompt.ask("Copies to add (0 to cancel)", console=console, default=0)
            if 0 < copies <= MAX_COPIES and Confirm.ask(f"Add {copies} copies to coupon {coupon_id}?", console=console):
                admin.top_up(coupon_id, copies)
                return f"{copies} copies added at {datetime.now(UTC):%H:%M:%S} UTC"
            if copies:
                return f"not added: a top-up is 1 to {MAX_COPIES} copies"
    except CouponsError as exc:
        return f"{ACTIONS[key]} failed: {exc}"
    return f"{ACTIONS[key]}: nothing done"


class Keys:
    """Single key presses from a terminal; on anything else (a pipe), no keys, only the wait."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._fd = stream.fileno() if stream.isatty() else None
        self._saved: list[Any] | None = None

    def __enter__(self) -> Keys:
        if self._fd is not None:
            self._saved = termios.tcgetattr(self._fd)
            tty.setcbreak(self._fd)
        return self

    def __exit__(self, *_: object) -> None:
        if self._fd is not None and self._saved is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)

    def read(self, timeout_s: float) -> str | None:
        """The key pressed within ``timeout_s``, lower-cased, or None."""
        if self._fd is None:
            select.select([], [], [], timeout_s)
            return None
        ready, _, _ = select.select([self._fd], [], [], timeout_s)
        return os.read(self._fd, 1).decode(errors="replace").lower() if ready else None

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The terminal as it was (echo, whole lines), for a prompt."""
        self.__exit__()
        try:
            yield
        finally:
            if self._fd is not None:
                tty.setcbreak(self._fd)


def _state(coupon: Body, now: datetime) -> str:
    if coupon["closed"]:
        return "CLOSED (by its operators)"
    if now < datetime.fromisoformat(coupon["issueStartsAt"]):
        return "NOT OPEN yet"
    if now >= datetime.fromisoformat(coupon["issueEndsAt"]):
        return "ENDED"
    return "OPEN"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def _unavailable(figure: Unavailable | Any) -> str:
    return f"not available: {figure.reason}"


def _or_reason(figure: Any, present: Callable[[Any], Any]) -> Any:
    return {"unavailable": figure.reason} if isinstance(figure, Unavailable) else present(figure)
