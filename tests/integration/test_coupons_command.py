"""The operators' ``coupons`` command as an operator runs it, against the local stack, right after
``make up`` with nothing exported: ``--env local`` finds what ``.local/stack.env`` says (LocalStack's
endpoint and test identity), the stack by its outputs through LocalStack's CloudFormation, signed
with SigV4, through API Gateway. ``watch`` runs in a pseudo-terminal, as in a person's terminal:
its frames show the API's counts and the coupon's rates, a close from inside it stops the sale,
and Ctrl-C leaves it with the terminal as it was."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.test_through_the_api import eventually
from tests.processes.terminal import COUPONS, Terminal, figure

ROOT = Path(__file__).resolve().parents[2]
USERS = (101, 102, 103, 104)


def operator_env() -> dict[str, str]:
    """An operator's shell after make up: nothing of AWS's or the command's exported (a real
    identity in it would not be used: the local stack has its own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "COUPONS_", "SSL_CERT_FILE"))}
    return {**env, "AWS_ACCESS_KEY_ID": "AKIAREALLOOKING", "AWS_SECRET_ACCESS_KEY": "not-for-localstack"}


def coupons(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COUPONS), "--env", "local", *args], env=operator_env(), cwd=ROOT / "docs",
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


# pty.fork in a process with threads (the live stack's clients): the child only calls execve.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_an_operator_runs_a_sale_from_the_terminal(live, tmp_path):
    created = coupons(
        "--output", "json", "create", "operator's sale", "--copies", "3", "--starts", "now", "--ends", "+1h"
    )
    assert created.returncode == 0, created.stderr
    coupon_id = json.loads(created.stdout)["couponId"]
    answers = [live.api.request_coupon(coupon_id, user).status for user in USERS]
    assert sorted(answers) == ["SOLD_OUT", "SUCCESS", "SUCCESS", "SUCCESS"]
    eventually(lambda: live.api.request("GET", f"/coupons/{coupon_id}").body["issued"] == 3, "the winners persisted")
    counts = live.api.request("GET", f"/coupons/{coupon_id}").body

    screen = Terminal(["--env", "local", "watch", str(coupon_id), "--interval", "0.5"], operator_env(), ROOT)
    try:
        frame = screen.until(r"dead letters waiting[^\n]*\n")
        assert figure(frame, "reserved in Redis") == counts["reserved"] == 3
        assert figure(frame, "issued in PostgreSQL") == counts["issued"] == 3
        assert figure(frame, "in flight") == 0
        assert "SOLD OUT" in frame
        assert "answers/s" in frame
        assert "not available" in frame  # LocalStack turns no metric line into a metric: said, not 0
        assert "cloudwatch:" not in frame  # nothing was denied: no IAM action is named
        frame = screen.until(r"dead letters waiting[^\n]*\n")
        assert "+0.0 reserved  +0.0 issued" in frame  # the coupon's own rates, from its counts

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
    export = coupons("export", str(coupon_id), "--file", str(exported), "--page-size", "2")
    assert export.returncode == 0, export.stderr
    rows = list(csv.DictReader(io.StringIO(exported.read_text())))
    issues = live.api.request("GET", f"/coupons/{coupon_id}/issues?limit=100").body["issues"]
    assert sorted((r["userId"], r["requestId"]) for r in rows) == sorted(
        (str(i["userId"]), i["requestId"]) for i in issues
    )
    assert len(rows) == 3

    listed = coupons("--output", "text", "list", "--all")
    assert f"{coupon_id}\toperator's sale\tCLOSED\t" in listed.stdout

    missing = coupons("show", "999999999")
    assert missing.returncode == 7
    assert missing.stderr.strip() == "coupons: 404 COUPON_NOT_FOUND: coupon 999999999 does not exist"
    localstack = {**operator_env(), "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
    unknown = subprocess.run([str(COUPONS), "--env", "nowhere", "--endpoint-url", live.env["AWS_ENDPOINT_URL"],
                              "--region", "us-east-1", "list"], env=localstack, capture_output=True, text=True,
                             timeout=120, check=False)  # fmt: skip
    assert unknown.returncode == 5
    assert "deployed here: local" in unknown.stderr
