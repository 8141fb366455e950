"""The ``coupons`` command in a pseudo-terminal of 120 columns, the way a terminal runs it: its
controlling terminal, so that Ctrl-C is a SIGINT from the terminal's line discipline, and what it
draws is read back as a person would see it (``seen``, escapes removed) and as it was sent
(``raw``, escapes kept: the cursor's hiding and showing)."""

from __future__ import annotations

import os
import platform
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Callable
from fcntl import ioctl
from pathlib import Path
from typing import TypeVar

COUPONS = Path(sys.executable).parent / "coupons"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")
T = TypeVar("T")
SHOW_CURSOR, HIDE_CURSOR = "\x1b[?25h", "\x1b[?25l"
READ = {"x86_64": "0", "aarch64": "63"}[platform.machine()]  # read(2)'s number, as /proc/PID/syscall gives it


class Terminal:
    def __init__(self, args: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the command, with the pseudo-terminal as its terminal
            # Ctrl-C interrupts, as from a shell: a runner that started the tests in the background
            # without job control had SIGINT ignored, which the command inherited (the view never ended).
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            if cwd is not None:
                os.chdir(cwd)
            os.execve(str(COUPONS), [str(COUPONS), *args], env)
        ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.modes = termios.tcgetattr(self.fd)  # the terminal's modes before the command changes them
        self.seen = ""
        self.raw = ""

    def until(self, pattern: str, timeout_s: float = 60) -> str:
        """The screen's text up to the first match of ``pattern`` not yet consumed."""
        match = self._awaited(lambda: re.search(pattern, self.seen), f"on screen: {pattern!r}", timeout_s, 0.5)
        shown, self.seen = self.seen[: match.end()], self.seen[match.end() :]
        return shown

    def reading(self, timeout_s: float = 60) -> None:
        """Return once the command is blocked reading its terminal (read(2) on fd 0, from
        /proc/PID/syscall). A Ctrl-C pressed as a prompt appears can otherwise land between
        Python's last check for signals and the read it then blocks in: the SIGINT is handled,
        but the KeyboardInterrupt waits for the read to return, which only another key does."""
        syscall = Path(f"/proc/{self.pid}/syscall")
        self._awaited(lambda: syscall.read_text().split()[:2] == [READ, "0x0"], "reading its terminal", timeout_s, 0.05)

    def _awaited(self, found: Callable[[], T | None], what: str, timeout_s: float, poll_s: float) -> T:
        """What ``found()`` returns once it is truthy, reading the screen meanwhile."""
        deadline = time.monotonic() + timeout_s
        while not (result := found()):
            if time.monotonic() > deadline:
                raise AssertionError(f"not {what} within {timeout_s} s; saw {self.seen[-2000:]!r}")
            self._read(poll_s)
        return result

    def press(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def signal(self, number: int) -> None:
        os.kill(self.pid, number)

    def exit_status(self, timeout_s: float = 30) -> int:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._read(0.2)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = 0
                while self._read(0.5):  # what it wrote on its way out, to the last byte
                    pass
                return os.waitstatus_to_exitcode(status)
        raise AssertionError("the command did not end")

    def kill(self) -> None:
        if self.pid:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        os.close(self.fd)

    def _read(self, timeout_s: float) -> bool:
        """Whatever the command wrote within ``timeout_s``; False when there was nothing more."""
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if not ready:
            return False
        try:
            text = os.read(self.fd, 65536).decode(errors="replace")
        except OSError:  # EIO once the child has closed its end and everything was read
            return False
        self.raw += text
        self.seen += ANSI.sub("", text)
        return bool(text)


def figure(frame: str, label: str) -> int:
    found = re.findall(rf"{label}\s+(\d+)", frame)
    assert found, f"no {label!r} on {frame!r}"
    return int(found[-1])
