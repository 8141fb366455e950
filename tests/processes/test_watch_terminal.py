"""``coupons watch`` in a pseudo-terminal against the API double: however the view ends, Ctrl-C, a
SIGTERM (``timeout``, a supervisor) or a SIGHUP (the terminal closed under it), the terminal is
left as it was: the cursor shown again and its modes (echo, whole lines) restored."""

from __future__ import annotations

import os
import signal
import termios

import pytest

from tests.processes.terminal import HIDE_CURSOR, SHOW_CURSOR, Terminal
from tests.unit.client.api_double import Answer
from tests.unit.client.test_cli import COUPON, api  # noqa: F401 -- the fixture

MODES = termios.ECHO | termios.ICANON  # what the view's cbreak mode turns off


# pty.fork in a process with threads (the API double's): the child only calls execve.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
@pytest.mark.parametrize(
    ("end", "status"), [("\x03", 0), (signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGHUP, 128 + signal.SIGHUP)]
)
def test_the_view_puts_the_terminal_back_however_it_ends(api, end, status):  # noqa: F811
    api.answer("GET", "/coupons/7", Answer(200, COUPON))
    screen = Terminal(["--api-url", api.url, "watch", "7", "--interval", "0.3"], dict(os.environ))
    try:
        screen.until(r"dead letters waiting[^\n]*\n")
        assert termios.tcgetattr(screen.fd)[3] & MODES == 0  # cbreak, while the view runs
        if isinstance(end, str):
            screen.press(end)
        else:
            screen.signal(end)
        assert screen.exit_status() == status
        left = termios.tcgetattr(screen.fd)
    finally:
        screen.kill()

    assert screen.raw.rfind(SHOW_CURSOR) > screen.raw.rfind(HIDE_CURSOR) >= 0
    assert left[3] & MODES == screen.modes[3] & MODES == MODES
    assert "Traceback" not in screen.seen


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
@pytest.mark.parametrize("cancel", ["\x03", "\x04"])  # Ctrl-C, Ctrl-D
def test_canceling_the_top_up_prompt_cancels_the_prompt_not_the_view(api, cancel):  # noqa: F811
    """The view goes on after the prompt, drawn again with what happened, and nothing was sent;
    the view's own end (q) is its usual one."""
    api.answer("GET", "/coupons/7", Answer(200, COUPON))
    screen = Terminal(["--api-url", api.url, "watch", "7", "--interval", "0.3"], dict(os.environ))
    try:
        screen.until(r"dead letters waiting[^\n]*\n")
        screen.press("t")
        screen.until(r"Copies to add")
        screen.reading()  # at the prompt's read, not before it (Terminal.reading)
        screen.press(cancel)
        screen.until(r"top up: canceled, nothing done")
        screen.until(r"dead letters waiting[^\n]*\n")  # drawn again
        screen.press("q")
        assert screen.exit_status() == 0
    finally:
        screen.kill()

    assert [sent.method for sent in api.sent] == ["GET"] * len(api.sent)  # no top-up was sent
    assert "Traceback" not in screen.seen
