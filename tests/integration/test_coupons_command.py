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
import time
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


def test_coupons_fairness_measures_a_staged_sale_exactly_and_a_sale_without_lines_is_no_fair_sale(live):
    """One copy on the local stack: A wins, B is refused, A's retry with its key gets its SUCCESS
    back (one winner, at its first arrival), A cancels, C takes the copy put back (a late winner,
    not an inversion). Then a coupon nobody clicked: nothing to measure."""
    created = coupons("--output", "json", "create", "staged", "--copies", "1", "--starts", "now", "--ends", "+1h")
    coupon_id = json.loads(created.stdout)["couponId"]

    def click(user: int, key: str) -> str:
        body = {"couponId": coupon_id, "userId": user}
        return str(live.api.request("POST", "/coupon-issues", body, headers={"Idempotency-Key": key}).status)

    assert [click(201, "a"), click(202, "b"), click(201, "a")] == ["SUCCESS", "SOLD_OUT", "SUCCESS"]
    eventually(lambda: live.api.request("GET", f"/coupons/{coupon_id}/issues/201").status == "ISSUED", "A issued")
    assert live.api.request("POST", f"/coupons/{coupon_id}/issues/201/cancel").status == "CANCELED"
    c_clicks = clicks_until(lambda: click(203, "c"), "SUCCESS")  # one key: a refusal before it is the same click

    def measured() -> dict:
        done = coupons("--output", "json", "fairness", str(coupon_id))
        return json.loads(done.stdout) if done.returncode == 0 else {}

    eventually(lambda: measured().get("lines") == 3 + c_clicks, "every answer's line in the intake's log group")
    figures = measured()
    assert {key: figures[key] for key in ("clicks", "winners", "losers", "inversionWindowMs", "earlyLosers",
                                          "lateWinners")} == {"clicks": 3, "winners": 2, "losers": 1,
                                                              "inversionWindowMs": 0, "earlyLosers": 0,
                                                              "lateWinners": 1}  # fmt: skip

    unclicked = coupons("--output", "json", "create", "unclicked", "--copies", "1", "--starts", "now", "--ends", "+1h")
    nothing = coupons("fairness", str(json.loads(unclicked.stdout)["couponId"]))
    assert nothing.returncode == 15, nothing.stderr
    assert "nothing to measure" in nothing.stderr


def clicks_until(click, wanted: str, attempts: int = 20) -> int:
    """How many times ``click`` ran until it answered ``wanted`` (a copy a cancel put back is in
    Redis once the cancel's state update lands)."""
    for sent in range(1, attempts + 1):
        if click() == wanted:
            return sent
        time.sleep(0.5)
    raise AssertionError(f"not {wanted} in {attempts} clicks")
