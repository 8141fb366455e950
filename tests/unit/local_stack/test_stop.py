"""Stopping a process the stack started: one that ignores SIGTERM is killed, and one that ends
between the last look and the SIGKILL is not an error (``make down`` once failed on it)."""

from __future__ import annotations

import signal
import subprocess
import sys

from local.stack import processes
from local.stack.processes import stop


def test_a_process_ignoring_sigterm_is_killed():
    ignoring = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", ignoring], stdout=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.readline()  # its handler is set
    stop(child.pid, timeout_s=0.2)
    assert child.wait(timeout=5) == -signal.SIGKILL


def test_a_process_that_ends_before_the_sigkill_is_stopped_without_an_error(monkeypatch):
    sent = []

    def kill(pid: int, sig: int) -> None:
        sent.append(sig)
        if sig == signal.SIGKILL:
            raise ProcessLookupError(pid)

    monkeypatch.setattr(processes.os, "kill", kill)
    monkeypatch.setattr(processes, "alive", lambda pid: True)  # still there at every look
    stop(2**22 + 17, timeout_s=0.1)  # not a child of this process: its exit is polled
    assert sent == [signal.SIGTERM, signal.SIGKILL]
