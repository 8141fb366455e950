"""The ``coupons`` command through Typer's test runner: what each command sends, what it prints
(JSON alone on stdout with --json), and the one line and exit status of each failure."""

from __future__ import annotations

import csv
import io
import json
import re
import socket
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from moto import mock_aws
from rich.console import Console
from typer.testing import CliRunner

from coupon_client import errors
from coupon_client.cli import app
from coupon_client.metrics import Answers, StackFigures, Unavailable
from coupon_client.watch import Frame, render
from tests.unit.client.api_double import Answer, api_double

ROOT = Path(__file__).resolve().parents[3]
COUPON = {
    "status": "OK", "couponId": 7, "name": "Black Friday", "totalQuantity": 100, "remainingQuantity": 60,
    "issued": 40, "reserved": 55, "issueStartsAt": "2026-12-24T12:00:00+00:00",
    "issueEndsAt": "2026-12-24T14:00:00+00:00", "validUntil": None, "validDays": None,
    "reissueAfterCancel": False, "closed": False,
}  # fmt: skip


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "COUPONS_ENV", "COUPONS_API_URL"):
        monkeypatch.delenv(name, raising=False)
    with api_double() as double:
        yield double


def run(api, *args: str, input: str | None = None):
    return CliRunner().invoke(app, ["--api-url", api.url, *args], input=input)


def test_create_sends_the_body_the_api_takes_signed_and_prints_json_alone(api):
    api.answer("POST", "/coupons", Answer(201, {**COUPON, "status": "CREATED"}))

    result = run(api, "create", "Black Friday", "--copies", "100", "--starts", "2026-12-24T12:00:00Z",
                 "--ends", "2026-12-24T14:00Z", "--valid-days", "30", "--json")  # fmt: skip

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {**COUPON, "status": "CREATED"}
    (sent,) = api.sent
    assert json.loads(sent.body) == {
        "name": "Black Friday", "totalQuantity": 100, "issueStartsAt": "2026-12-24T12:00:00+00:00",
        "issueEndsAt": "2026-12-24T14:00:00+00:00", "reissueAfterCancel": False, "validDays": 30,
    }  # fmt: skip
    assert sent.headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in sent.headers["Authorization"]


@pytest.mark.parametrize(
    ("args", "method", "path", "body"),
    [
        (["show", "7"], "GET", "/coupons/7", None),
        (["close", "7", "--yes"], "POST", "/coupons/7/close", None),
        (["reopen", "7"], "POST", "/coupons/7/reopen", None),
        (["top-up", "7", "25"], "POST", "/coupons/7/top-up", {"copies": 25}),
        (["change", "7", "--name", "Cyber Monday"], "PATCH", "/coupons/7", {"name": "Cyber Monday"}),
        (["change", "7", "--ends", "2026-12-25T00:00Z"], "PATCH", "/coupons/7",
         {"issueEndsAt": "2026-12-25T00:00:00+00:00"}),
    ],
)  # fmt: skip
def test_each_coupon_command_calls_its_route(api, args, method, path, body):
    api.answer(method, path, Answer(200, COUPON))

    result = run(api, *args, "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == COUPON
    assert [(s.method, s.path) for s in api.sent] == [(method, path)]
    assert (json.loads(api.sent[0].body) if api.sent[0].body else None) == body


def test_the_human_output_shows_the_coupon(api):
    api.answer("GET", "/coupons/7", Answer(200, COUPON))

    result = run(api, "show", "7")

    assert result.exit_code == 0
    assert "Black Friday" in result.stdout
    assert "remainingQuantity" in result.stdout


def test_close_asks_first_and_sends_nothing_when_refused(api):
    result = run(api, "close", "7", input="n\n")

    assert result.exit_code == 1
    assert api.sent == []


def test_list_all_follows_the_pages(api):
    api.answer("GET", "/coupons?after=0&limit=1", Answer(200, {"status": "OK", "coupons": [COUPON], "next": 7}))
    second = {**COUPON, "couponId": 8}
    api.answer("GET", "/coupons?after=7&limit=1", Answer(200, {"status": "OK", "coupons": [second], "next": None}))

    result = run(api, "list", "--limit", "1", "--all", "--json")

    assert result.exit_code == 0, result.output
    assert [c["couponId"] for c in json.loads(result.stdout)["coupons"]] == [7, 8]


def test_export_writes_every_page_with_one_header(api, tmp_path):
    header = "issueId,userId,requestId,status\n"
    api.answer("GET", "/coupons/7", Answer(200, {**COUPON, "issued": 3}))
    api.answer(
        "GET",
        "/coupons/7/issues?after=0&limit=2&format=csv",
        Answer(200, header + "1,10,r1,ISSUED\n2,11,r2,USED\n", {"X-Next-After": "2"}),
    )
    api.answer("GET", "/coupons/7/issues?after=2&limit=2&format=csv", Answer(200, header + "3,12,r3,ISSUED\n"))
    out = tmp_path / "issues.csv"  # fmt: skip

    result = run(api, "export", "7", "--page-size", "2", "--output", str(out), "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"couponId": 7, "rows": 3, "output": str(out)}
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [r["userId"] for r in rows] == ["10", "11", "12"]


def test_export_to_stdout_is_the_csv_alone(api):
    api.answer("GET", "/coupons/7", Answer(200, {**COUPON, "issued": 1}))
    api.answer("GET", "/coupons/7/issues?after=0&limit=1000&format=csv", Answer(200, "issueId,userId\n1,10\n"))

    result = run(api, "export", "7")

    assert result.exit_code == 0, result.output
    assert result.stdout == "issueId,userId\n1,10\n"


def test_status_answers_where_a_users_request_stands(api):
    api.answer("GET", "/coupons/7/issues/42", Answer(200, {"status": "PENDING", "couponId": 7, "userId": 42}))

    result = run(api, "status", "7", "42")

    assert result.exit_code == 0
    assert result.stdout.strip() == "user 42 on coupon 7: PENDING"


def test_status_with_an_id_token_sends_it_in_place_of_a_signature(api, tmp_path):
    api.answer("GET", "/coupons/7/issues/42", Answer(200, {"status": "NONE", "couponId": 7, "userId": 42}))
    token = tmp_path / "token"
    token.write_text("eyJ.token\n")

    assert run(api, "status", "7", "42", "--id-token-file", str(token)).exit_code == 0
    assert api.sent[0].headers["Authorization"] == "eyJ.token"


def test_watch_as_json_prints_one_document_a_refresh_and_says_what_it_cannot_read(api):
    api.answer("GET", "/coupons/7", Answer(200, COUPON))

    result = run(api, "watch", "7", "--json", "--frames", "2", "--interval", "0.2")

    assert result.exit_code == 0, result.output
    frames = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(frames) == 2
    assert frames[0]["coupon"] == COUPON
    assert (frames[0]["inFlight"], frames[0]["stockLeft"]) == (15, 45)  # 55 reserved, 40 issued, 60 remaining
    assert "MetricsNamespace is unknown" in frames[0]["answersPerSecond"]["unavailable"]
    assert "DlqUrl is unknown" in frames[0]["deadLetters"]["unavailable"]


ERRORS = [
    (Answer(404, {"status": "COUPON_NOT_FOUND", "error": "coupon 7 does not exist"}), errors.NotFoundError,
     "404 COUPON_NOT_FOUND: coupon 7 does not exist"),
    (Answer(409, {"status": "PENDING", "error": "retry shortly"}), errors.ConflictError, "409 PENDING: retry shortly"),
    (Answer(422, {"status": "INVALID_REQUEST", "error": "copies: must be at least 1"}), errors.RefusedError,
     "422 INVALID_REQUEST: copies: must be at least 1; nothing changed"),
    (Answer(503, {"status": "UNAVAILABLE", "error": "database"}, {"Retry-After": "2"}), errors.UnavailableError,
     "503 UNAVAILABLE: database; nothing changed: try again after 2 s"),
    (Answer(429, {"message": "Too Many Requests"}), errors.UnavailableError, "429 Too Many Requests"),
    (Answer(502, {"message": "Internal server error"}), errors.NoAnswerError, "it may have been carried out"),
    (Answer(403, {"message": "User: arn:aws:iam::1:user/ops is not authorized"}), errors.ForbiddenError,
     "403: your identity may not call POST /coupons/7/close: it needs execute-api:Invoke on "
     "arn:aws:execute-api:eu-west-1:*:*/dev/POST/coupons/7/close (eu-west-1)"),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "error", "said"), ERRORS, ids=[e[1].__name__ for e in ERRORS])
def test_each_failure_is_one_line_on_stderr_with_its_exit_status(api, answer, error, said):
    api.answer("POST", "/coupons/7/close", answer)

    result = run(api, "close", "7", "--yes", "--json")

    assert result.exit_code == error.exit_code
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("coupons: ")
    assert said in result.stderr


def test_no_answer_at_all_says_it_may_have_been_carried_out(monkeypatch, api):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    result = CliRunner().invoke(app, ["--api-url", f"http://127.0.0.1:{port}/dev", "reopen", "7"])

    assert result.exit_code == errors.NoAnswerError.exit_code
    assert "no answer from POST /coupons/7/reopen" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["top-up", "7", "0"],
        ["top-up", "7", "10000001"],
        ["show", "0"],
        ["create", "x", "--copies", "5", "--starts", "2026-12-24T12:00", "--ends", "+1h"],  # no zone
        ["create", "x", "--copies", "5", "--starts", "+2h", "--ends", "+1h"],  # ends first
        ["create", "", "--copies", "5", "--starts", "now", "--ends", "+1h"],
        ["change", "7"],  # nothing to change
        ["export", "7", "--json"],  # the CSV would mix with the JSON
    ],
)
def test_a_bad_argument_is_a_usage_error_and_sends_nothing(api, args):
    result = run(api, *args)

    assert result.exit_code == 2, result.output
    assert api.sent == []


def test_no_target_is_said(monkeypatch):
    monkeypatch.delenv("COUPONS_ENV", raising=False)
    monkeypatch.delenv("COUPONS_API_URL", raising=False)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")

    result = CliRunner().invoke(app, ["show", "7"])

    assert result.exit_code == errors.UnknownEnvironmentError.exit_code
    assert "pass --env NAME" in result.stderr


def test_no_credentials_is_said_before_anything_is_sent(api, monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    result = run(api, "show", "7")

    assert result.exit_code == errors.NoCredentialsError.exit_code
    assert "no AWS credentials" in result.stderr
    assert api.sent == []


def test_every_exit_status_is_its_own():
    codes = [error.exit_code for error in errors.EVERY_ERROR]
    assert len(set(codes)) == len(codes)
    assert not {0, 1, 2} & set(codes)  # success, an abort, Click's usage errors


def test_a_query_is_what_the_api_takes(api):
    api.answer("GET", "/coupons/7/issues?after=5&limit=10", Answer(200, {"status": "OK", "couponId": 7,
                                                                       "issues": [], "next": None}))  # fmt: skip

    assert run(api, "issues", "7", "--after", "5", "--limit", "10").exit_code == 0
    assert parse_qs(urlsplit(api.sent[0].path).query) == {"after": ["5"], "limit": ["10"]}


def test_the_runbook_lists_every_exit_status():
    runbook = (ROOT / "docs" / "operations.md").read_text()
    table = runbook.split("### When the command fails", 1)[1].split("\n## ", 1)[0]
    listed = {int(code) for code in re.findall(r"^\| (\d+) \|", table, flags=re.MULTILINE)}
    assert listed == {0, 1, 2} | {error.exit_code for error in errors.EVERY_ERROR}


def test_reconcile_prints_the_rebuilds_report(api):
    report = {"reconciled": [{"couponId": 7, "added": 2, "released": 1}], "failed": [], "inFlightError": None}
    api.answer("POST", "/coupons/7/reconcile", Answer(200, {"status": "OK", "couponId": 7, "report": report}))

    human, as_json = run(api, "reconcile", "7"), run(api, "reconcile", "7", "--json")

    assert human.exit_code == 0
    assert re.search(r"added\s+│\s+2", human.stdout)
    assert json.loads(as_json.stdout)["report"] == report


def test_an_expired_sso_session_is_said_with_its_exit_status(api, monkeypatch, tmp_path):
    from tests.unit.client.test_environment import START_URL, expired_sso_token  # noqa: PLC0415

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    (tmp_path / ".aws" / "sso" / "cache").mkdir(parents=True)
    (tmp_path / ".aws" / "config").write_text(
        f"[profile ops]\nsso_start_url = {START_URL}\nsso_region = eu-west-1\nsso_account_id = 1\nsso_role_name = Op\n"
    )
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / ".aws" / "config"))
    expired_sso_token(tmp_path, START_URL)

    result = CliRunner().invoke(app, ["--api-url", api.url, "--profile", "ops", "show", "7"])

    assert result.exit_code == errors.SessionExpiredError.exit_code
    assert result.stderr == "coupons: the SSO session has expired: run aws sso login --profile ops\n"
    assert api.sent == []


def test_an_environment_is_looked_up_by_name(api, monkeypatch):
    with mock_aws():
        template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}, "Outputs": {"ApiUrl": {"Value": api.url}}}
        boto3.client("cloudformation", region_name="eu-west-1").create_stack(
            StackName="Coupons-dev", TemplateBody=json.dumps(template)
        )
        api.answer("GET", "/coupons/7", Answer(200, COUPON))

        found = CliRunner().invoke(app, ["--env", "dev", "show", "7", "--json"])
        unknown = CliRunner().invoke(app, ["--env", "prod", "show", "7"])

    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout) == COUPON
    assert unknown.exit_code == errors.UnknownEnvironmentError.exit_code
    assert unknown.stderr == "coupons: no environment 'prod' in eu-west-1 (no stack Coupons-prod); deployed here: dev\n"


def test_the_view_draws_each_figure_or_why_it_is_missing():
    answers = Answers({"SOLD_OUT": 410.5, "SUCCESS": 2.0}, datetime(2026, 12, 24, 12, 1, tzinfo=UTC), 3.2, 41.0)
    stack = StackFigures(answers, Unavailable("no OffsetLag datapoints in the last 5 minutes"), 3)
    frame = Frame(COUPON, stack, datetime(2026, 12, 24, 12, 2, 5, tzinfo=UTC), "closed at 12:02:04 UTC")
    console = Console(record=True, width=120)

    console.print(render(frame, "dev"))
    screen = console.export_text()

    assert "coupon 7 · Black Friday · dev · 12:02:05 UTC" in screen
    assert re.search(r"state\s+OPEN", screen)
    assert re.search(r"stock left\s+45 of 100", screen)
    assert re.search(r"in flight\s+15", screen)
    assert re.search(r"answers/s \(all coupons, 12:01 UTC\)\s+SOLD_OUT 410.5  SUCCESS 2.0", screen)
    assert re.search(r"latency p50 / p99\s+3.2 ms / 41.0 ms", screen)
    assert re.search(r"worker lag\s+not available: no OffsetLag datapoints", screen)
    assert re.search(r"dead letters waiting\s+3", screen)
    assert "closed at 12:02:04 UTC" in screen
