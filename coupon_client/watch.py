"""``coupons watch COUPON``: a sale's figures, redrawn every second, with the emergency close (and
reopen, top-up) a key away.

Each frame reads the coupon from the API (its database and Redis counts, read live) and the
stack's figures (``coupon_client.metrics``); Rich's ``Live`` draws it. The coupon's own rates
come from its counts between two reads, so they are there wherever the API is (the local stack
included); CloudWatch's answers per second and latency where CloudWatch has them. Keys are read
from the terminal in cbreak mode (no echo, no line buffering; Ctrl-C still interrupts), and put
back as they were for a prompt and on the way out, however the view ends: ``q``, Ctrl-C, or a
SIGTERM or SIGHUP (a ``timeout``, a closed terminal), which end it as Ctrl-C does.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import termios
import tty
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from types import FrameType
from typing import Any, TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.prompt import Confirm, IntPrompt
from rich.table import Table
from rich.text import Text

from coupon_client import sale
from coupon_client.admin import AdminApi, Body
from coupon_client.arguments import MAX_COPIES
from coupon_client.errors import CouponsError
from coupon_client.metrics import Answers, Latency, StackFigures, StackMetrics, Unavailable

KEYS = "[c] close  [r] reopen  [t] top up  [q] quit"
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
FIRST_READ = Unavailable("after the next read: a rate needs two")


@dataclass(frozen=True)
class Rates:
    """The coupon's counts' change per second between two reads: ``reserved`` is the SUCCESS
    answers less the copies released, ``issued`` the copies the workers persisted."""

    reserved: float
    issued: float


@dataclass(frozen=True)
class Frame:
    """One refresh: the coupon as the API said it, its rates, the stack's figures, and what the
    last read or action said."""

    coupon: Body
    stack: StackFigures
    read_at: datetime
    counted_at: datetime  # when ``coupon`` was read: ``read_at``, unless that read failed
    rates: Rates | Unavailable = FIRST_READ
    note: str = ""

    def document(self) -> dict[str, Any]:
        """The frame as ``--output json`` prints it, one line a refresh."""
        answers, latency = self.stack.answers, self.stack.latency
        return {
            "readAt": self.read_at.isoformat(),
            "coupon": self.coupon,
            "state": sale.state(self.coupon, self.read_at),
            "inFlight": sale.in_flight(self.coupon),
            "stockLeft": sale.stock_left(self.coupon),
            "perSecond": _or_reason(self.rates, lambda r: {"reserved": r.reserved, "issued": r.issued}),
            "answersPerSecond": _or_reason(answers, lambda a: {"minute": a.at.isoformat(), **a.per_second}),
            "latencyMs": _or_reason(latency, lambda t: {"minute": t.at.isoformat(), "p50": t.p50_ms, "p99": t.p99_ms}),
            "workerLag": _or_reason(self.stack.worker_lag, lambda lag: lag),
            "deadLetters": _or_reason(self.stack.dead_letters, lambda count: count),
            "note": self.note,
        }

    def line(self) -> str:
        """The frame as ``--output text`` prints it: readAt, state, stock left, total, reserved,
        issued, in flight, reserved/s, issued/s, dead letters; tab-separated, empty when unknown."""
        coupon, rates, letters = self.coupon, self.rates, self.stack.dead_letters
        fields = [self.read_at.isoformat(), sale.state(coupon, self.read_at), sale.stock_left(coupon),
                  coupon["totalQuantity"], coupon["reserved"], coupon["issued"], sale.in_flight(coupon),
                  *((f"{rates.reserved:.1f}", f"{rates.issued:.1f}") if isinstance(rates, Rates) else ("", "")),
                  "" if isinstance(letters, Unavailable) else letters]  # fmt: skip
        return "\t".join(str(field) for field in fields)


def read_frame(admin: AdminApi, metrics: StackMetrics, coupon_id: int, previous: Frame | None) -> Frame:
    """The next frame; a failed read of the coupon keeps the previous figures and says why."""
    now = datetime.now(UTC)
    try:
        coupon = admin.coupon(coupon_id)
    except CouponsError as exc:
        if previous is None:
            raise
        note = f"read failed, figures of {previous.counted_at:%H:%M:%S}: {exc}"
        return Frame(previous.coupon, metrics.read(), now, previous.counted_at, previous.rates, note)
    return Frame(coupon, metrics.read(), now, now, _rates(previous, coupon, now))


def _rates(previous: Frame | None, coupon: Body, now: datetime) -> Rates | Unavailable:
    if previous is None:
        return FIRST_READ
    seconds = (now - previous.counted_at).total_seconds()
    if seconds <= 0:
        return FIRST_READ
    before = previous.coupon
    return Rates((int(coupon["reserved"]) - int(before["reserved"])) / seconds,
                 (int(coupon["issued"]) - int(before["issued"])) / seconds)  # fmt: skip


def render(frame: Frame, target: str) -> Panel:
    coupon = frame.coupon
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    state = sale.state(coupon, frame.read_at)
    table.add_row("state", f"{state} (by its operators)" if state == sale.CLOSED else state)
    table.add_row("window", f"{sale.moment(coupon['issueStartsAt'])} -> {sale.moment(coupon['issueEndsAt'])}")
    table.add_row("stock left", f"{sale.stock_left(coupon)} of {coupon['totalQuantity']}")
    table.add_row("reserved in Redis", str(coupon["reserved"]))
    table.add_row("issued in PostgreSQL", str(coupon["issued"]))
    table.add_row("in flight", str(sale.in_flight(coupon)))
    rates = frame.rates
    shown = f"{rates.reserved:+.1f} reserved  {rates.issued:+.1f} issued" if isinstance(rates, Rates) else ""
    table.add_row("this coupon, per second", shown or _unavailable(rates))
    answers, latency = frame.stack.answers, frame.stack.latency
    if isinstance(answers, Answers):
        counts = "  ".join(f"{status} {rate:.1f}" for status, rate in sorted(answers.per_second.items()))
        table.add_row(f"answers/s (all coupons, {answers.at:%H:%M} UTC)", counts)
    else:
        table.add_row("answers/s (all coupons)", _unavailable(answers))
    if isinstance(latency, Latency):
        table.add_row(f"latency p50 / p99 ({latency.at:%H:%M} UTC)", f"{_ms(latency.p50_ms)} / {_ms(latency.p99_ms)}")
    else:
        table.add_row("latency p50 / p99", _unavailable(latency))
    lag = frame.stack.worker_lag
    table.add_row("worker lag", _unavailable(lag) if isinstance(lag, Unavailable) else f"{lag:,.0f} records")
    letters = frame.stack.dead_letters
    table.add_row("dead letters waiting", _unavailable(letters) if isinstance(letters, Unavailable) else str(letters))
    footer = Text(KEYS, style="dim")
    parts: list[Table | Text] = [table, Text(frame.note, style="yellow"), footer] if frame.note else [table, footer]
    title = f"coupon {coupon['couponId']} · {coupon['name']} · {target} · {frame.read_at:%H:%M:%S} UTC"
    return Panel(Group(*parts), title=title, title_align="left")


class Ended(Exception):  # noqa: N818 -- not a failure: how a signal ends the view
    """A SIGTERM or SIGHUP ended the view; the command exits with 128 + its number, as a shell
    reports a process ended by it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def ended_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Ended` in the view's loop, so that every ``with`` on the
    way out (the keys' terminal mode, Rich's hidden cursor) puts the terminal back."""

    def end(signum: int, _frame: FrameType | None) -> None:
        raise Ended(signum)

    saved = {number: signal.signal(number, end) for number in ENDING_SIGNALS}
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)


def watch(
    admin: AdminApi, metrics: StackMetrics, coupon_id: int, console: Console, target: str, *, interval_s: float,
    frames: int | None,
) -> None:  # fmt: skip
    """Draw frames until ``q``, Ctrl-C (KeyboardInterrupt, left to the caller), SIGTERM or SIGHUP
    (:class:`Ended`, left to the caller), or ``frames``."""
    frame = read_frame(admin, metrics, coupon_id, None)
    drawn = 0
    # Transient: the frame is erased when the view stops, for a prompt (then drawn again where
    # the prompt was, never under a stale copy of itself) or on the way out, where the last
    # frame is printed once, to stay on the screen.
    live = Live(render(frame, target), console=console, auto_refresh=False, transient=True)
    try:
        with ended_by_signals(), Keys(sys.stdin) as keys:
            # Started inside the try, not by ``with live``: a Ctrl-C or signal while Live draws its
            # first frame (its cursor already hidden) ends the view before ``with`` has entered,
            # which would never stop Live nor show the cursor again; ``stop`` undoes a partial start.
            try:
                live.start(refresh=True)
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
                        frame = replace(frame, note=note)
                    live.update(render(frame, target), refresh=True)
            finally:
                live.stop()
    finally:
        console.print(render(frame, target))


def watch_lines(admin: AdminApi, metrics: StackMetrics, coupon_id: int, out: TextIO, line: Callable[[Frame], str], *,
                interval_s: float, frames: int | None, sleep: Callable[[float], None]) -> None:  # fmt: skip
    """``--output json`` or ``text``: one ``line`` a refresh, nothing else on ``out``."""
    frame, drawn = None, 0
    while frames is None or drawn < frames:
        if drawn:
            sleep(interval_s)
        frame = read_frame(admin, metrics, coupon_id, frame)
        out.write(line(frame) + "\n")
        out.flush()
        drawn += 1


ACTIONS = {"c": "close", "r": "reopen", "t": "top up"}


def act(admin: AdminApi, coupon_id: int, key: str, console: Console) -> str:
    """Ask, then do what ``key`` names; what happened, for the frame's note. Ctrl-C or Ctrl-D at
    a prompt cancels the prompt, not the view."""
    try:
        done = _asked(admin, coupon_id, key, console)
    except CouponsError as exc:
        return f"{ACTIONS[key]} failed: {exc}"
    except (KeyboardInterrupt, EOFError):
        console.print()  # past the prompt's line
        return f"{ACTIONS[key]}: canceled, nothing done"
    return done or f"{ACTIONS[key]}: nothing done"


def _asked(admin: AdminApi, coupon_id: int, key: str, console: Console) -> str | None:
    if key == "c" and Confirm.ask(f"Close coupon {coupon_id} now? Requests will answer 409 CLOSED", console=console):
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
    return None


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


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def _unavailable(figure: Unavailable | Any) -> str:
    return f"not available: {figure.reason}"


def _or_reason(figure: Any, present: Callable[[Any], Any]) -> Any:
    return {"unavailable": figure.reason} if isinstance(figure, Unavailable) else present(figure)
