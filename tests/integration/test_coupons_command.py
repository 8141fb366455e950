"""The operators' ``coupons`` command as an operator runs it, against the local stack: found by its
environment's name through LocalStack's CloudFormation, signed with SigV4, through API Gateway.
``watch`` runs in a pseudo-terminal, as in a person's terminal: its frames show the API's counts,
a close from inside it stops the sale, and Ctrl-C leaves it with the terminal as it was."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from fcntl import ioctl
from pathlib import Path

import pytest

from tests.integration.test_through_the_api import eventually

COUPONS = Path(sys.executable).parent / "coupons"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")
USERS = (101, 102, 103, 104)


def operator_env(live) -> dict[str, str]:
    """An operator's environment on the local stack: LocalStack's endpoint and its test identity."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "COUPONS_"))}
    return {**env, "AWS_ENDPOINT_URL": live.env["AWS_ENDPOINT_URL"], "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "COUPONS_ENV": "local"}  # fmt: skip


def coupons(live, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COUPONS), *args], env=operator_env(live), capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip


# pty.fork in a process with threads (the live stack's clients): the child only calls execve.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_an_operator_runs_a_sale_from_the_terminal(live, tmp_path):
    created = coupons(live, "create", "operator's sale", "--copies", "3", "--starts", "now", "--ends", "+1h", "--json")
    assert created.returncode == 0, created.stderr
    coupon_id = json.loads(created.stdout)["couponId"]
    answers = [live.api.request_coupon(coupon_id, user).status for user in USERS]
    assert sorted(answers) == ["SOLD_OUT", "SUCCESS", "SUCCESS", "SUCCESS"]
    eventually(lambda: live.api.request("GET", f"/coupons/{coupon_id}").body["issued"] == 3, "the winners persisted")
    counts = live.api.request("GET", f"/coupons/{coupon_id}").body

    screen = Watch(live, coupon_id)
    try:
        frame = screen.until(r"dead letters waiting[^\n]*\n")
        assert _figure(frame, "reserved in Redis") == counts["reserved"] == 3
        assert _figure(frame, "issued in PostgreSQL") == counts["issued"] == 3
        assert _figure(frame, "in flight") == 0
        assert "answers/s" in frame
        assert "not available" in frame  # LocalStack turns no metric line into a metric: said, not 0

        screen.press("c")
        screen.until(r"Close coupon \d+ now\?")
        screen.press("y\n")
        assert "CLOSED" in screen.until(r"closed at \d\d:\d\d:\d\d UTC")
        screen.press("\x03")  # Ctrl-C
        assert screen.exit_status() == 0
    finally:
        screen.kill()

    assert live.api.request("GET", f"/coupons/{coupon_id}").body["closed"] is True
    assert live.api.request_coupon(coupon_id, 105).status == "CLOSED"

    exported = tmp_path / "issues.csv"
    export = coupons(live, "export", str(coupon_id), "--output", str(exported), "--page-size", "2")
    assert export.returncode == 0, export.stderr
    rows = list(csv.DictReader(io.StringIO(exported.read_text())))
    issues = live.api.request("GET", f"/coupons/{coupon_id}/issues?limit=100").body["issues"]
    assert sorted((r["userId"], r["requestId"]) for r in rows) == sorted(
        (str(i["userId"]), i["requestId"]) for i in issues
    )
    assert len(rows) == 3

    missing = coupons(live, "show", "999999999")
    assert missing.returncode == 7
    assert missing.stderr.strip() == "coupons: 404 COUPON_NOT_FOUND: coupon 999999999 does not exist"
    unknown = coupons(live, "--env", "nowhere", "list")
    assert unknown.returncode == 5
    assert "deployed here: local" in unknown.stderr


class Watch:
    """``coupons watch`` in a pseudo-terminal of 120 columns, the way a terminal runs it (its
    controlling terminal, so that Ctrl-C is a SIGINT from the terminal's line discipline)."""

    def __init__(self, live, coupon_id: int) -> None:
        env = operator_env(live)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the command, with the pseudo-terminal as its terminal
            # Ctrl-C interrupts, as from a shell: a runner that started the tests in the background
            # without job control had SIGINT ignored, which the command inherited (the view never ended).
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execve(str(COUPONS), [str(COUPONS), "watch", str(coupon_id), "--interval", "0.5"], env)
        ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.seen = ""

    def until(self, pattern: str, timeout_s: float = 60) -> str:
        """The screen's text up to the first match of ``pattern`` not yet consumed."""
        deadline = time.monotonic() + timeout_s
        while not (match := re.search(pattern, self.seen)):
            if time.monotonic() > deadline:
                raise AssertionError(f"not on screen within {timeout_s} s: {pattern!r}; saw {self.seen[-2000:]!r}")
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                self.seen += ANSI.sub("", os.read(self.fd, 65536).decode(errors="replace"))
        shown, self.seen = self.seen[: match.end()], self.seen[match.end() :]
        return shown

    def press(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def exit_status(self, timeout_s: float = 30) -> int:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            select.select([self.fd], [], [], 0.2)
            with contextlib.suppress(OSError):
                os.read(self.fd, 65536)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = 0
                return os.waitstatus_to_exitcode(status)
        raise AssertionError("the view did not end")

    def kill(self) -> None:
        if self.pid:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def _figure(frame: str, label: str) -> int:
    found = re.findall(rf"{label}\s+(\d+)", frame)
    assert found, f"no {label!r} on {frame!r}"
    return int(found[-1])
