"""The ``coupons`` command through Typer's test runner: what each command sends, and what it prints
in each ``--output`` form (JSON alone on stdout with json; nothing cut in a table)."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import boto3
import botocore.session
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from rich.console import Console
from typer.testing import CliRunner

from coupon_client import errors, sale
from coupon_client.cli import app
from coupon_client.metrics import Answers, Latency, StackFigures, Unavailable
from coupon_client.watch import Frame, Rates, render
from tests.unit.client.api_double import Answer, api_double

ROOT = Path(__file__).resolve().parents[3]
COUPON = {
    "status": "OK", "couponId": 7, "name": "Black Friday", "totalQuantity": 100, "remainingQuantity": 60,
    "issued": 40, "reserved": 55, "issueStartsAt": "2026-12-24T12:00:00+00:00",
    "issueEndsAt": "2026-12-24T14:00:00+00:00", "validUntil": None, "validDays": None,
    "reissueAfterCancel": False, "closed": False,
}  # fmt: skip


def as_the_api_sent(shown: dict) -> dict:
    """A coupon as ``--output json`` prints it, without what the command adds: its state and stock left."""
    return {name: value for name, value in shown.items() if name not in ("state", "stockLeft")}


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "COUPONS_ENV", "COUPONS_API_URL"):
        monkeypatch.delenv(name, raising=False)
    with api_double() as double:
        yield double


def run(api, *args: str, input: str | None = None, output: str | None = None):
    form = ["--output", output] if output else []
    return CliRunner().invoke(app, ["--api-url", api.url, *form, *args], input=input)


def test_create_sends_the_body_the_api_takes_signed_and_prints_json_alone(api):
    api.answer("POST", "/coupons", Answer(201, {**COUPON, "status": "CREATED"}))

    result = run(api, "create", "Black Friday", "--copies", "100", "--starts", "2026-12-24T12:00:00Z",
                 "--ends", "2026-12-24T14:00Z", "--valid-days", "30", "--yes", output="json")  # fmt: skip

    assert result.exit_code == 0, result.output
    assert as_the_api_sent(json.loads(result.stdout)) == {**COUPON, "status": "CREATED"}
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

    result = run(api, *args, output="json")

    assert result.exit_code == 0, result.output
    assert as_the_api_sent(json.loads(result.stdout)) == COUPON
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

    result = run(api, "list", "--limit", "1", "--all", output="json")

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

    result = run(api, "export", "7", "--page-size", "2", "--file", str(out), output="json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"couponId": 7, "rows": 3, "file": str(out)}
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

    result = run(api, "watch", "7", "--frames", "2", "--interval", "0.2", output="json")

    assert result.exit_code == 0, result.output
    frames = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(frames) == 2
    assert frames[0]["coupon"] == COUPON
    assert (frames[0]["inFlight"], frames[0]["stockLeft"]) == (15, 45)  # 55 reserved, 40 issued, 60 remaining
    assert "MetricsNamespace is unknown" in frames[0]["answersPerSecond"]["unavailable"]
    assert "DlqUrl is unknown" in frames[0]["deadLetters"]["unavailable"]


@pytest.mark.parametrize(
    "args",
    [
        ["top-up", "7", "0"],
        ["top-up", "7", "10000001"],
        ["show", "0"],
        ["create", "x", "--copies", "5", "--starts", "2026-12-24T12:00", "--ends", "+1h"],  # no zone
        ["create", "x", "--copies", "5", "--starts", "+2h", "--ends", "now"],  # ends first
        ["create", "x", "--copies", "5", "--starts", "2099-01-01T12:00Z", "--ends", "2099-01-01T11:00Z"],
        ["create", "", "--copies", "5", "--starts", "now", "--ends", "+1h"],
        ["change", "7"],  # nothing to change
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

    human, as_json = run(api, "reconcile", "7"), run(api, "reconcile", "7", output="json")

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

        found = CliRunner().invoke(app, ["--env", "dev", "--output", "json", "show", "7"])
        unknown = CliRunner().invoke(app, ["--env", "prod", "show", "7"])

    assert found.exit_code == 0, found.output
    assert as_the_api_sent(json.loads(found.stdout)) == COUPON
    assert unknown.exit_code == errors.UnknownEnvironmentError.exit_code
    assert unknown.stderr == "coupons: no environment 'prod' in eu-west-1 (no stack Coupons-prod); deployed here: dev\n"


def test_the_view_draws_each_figure_or_why_it_is_missing():
    minute = datetime(2026, 12, 24, 12, 1, tzinfo=UTC)
    answers = Answers({"SOLD_OUT": 410.5, "SUCCESS": 2.0}, minute)
    stack = StackFigures(
        answers, Latency(3.2, 41.0, minute), Unavailable("no OffsetLag datapoints in the last 5 minutes"), 3
    )
    read_at = datetime(2026, 12, 24, 12, 2, 5, tzinfo=UTC)
    frame = Frame(COUPON, stack, read_at, read_at, Rates(12.0, 11.5), "closed at 12:02:04 UTC")
    console = Console(record=True, width=120)

    console.print(render(frame, "dev"))
    screen = console.export_text()

    assert "coupon 7 · Black Friday · dev · 12:02:05 UTC" in screen
    assert re.search(r"state\s+OPEN", screen)
    assert re.search(r"stock left\s+45 of 100", screen)
    assert re.search(r"in flight\s+15", screen)
    assert re.search(r"answers/s \(all coupons, 12:01 UTC\)\s+SOLD_OUT 410.5  SUCCESS 2.0", screen)
    assert re.search(r"latency p50 / p99 \(12:01 UTC\)\s+3.2 ms / 41.0 ms", screen)
    assert re.search(r"this coupon, per second\s+\+12.0 reserved  \+11.5 issued", screen)
    assert re.search(r"worker lag\s+not available: no OffsetLag datapoints", screen)
    assert re.search(r"dead letters waiting\s+3", screen)
    assert "closed at 12:02:04 UTC" in screen


LONG = {**COUPON, "couponId": 9_223_372_036_854_775_807, "name": "A sale whose name is long enough to wrap " * 3,
        "totalQuantity": 10_000_000, "remainingQuantity": 9_999_999, "issued": 1, "reserved": 1,
        "issueStartsAt": "2026-12-24T12:00:00+09:00", "issueEndsAt": "2026-12-24T23:59:59+09:00"}  # fmt: skip
SOLD = {**COUPON, "couponId": 8, "remainingQuantity": 0, "issued": 100, "reserved": 100}


def _list_page(api, *coupons):
    api.answer(
        "GET", "/coupons?after=0&limit=100", Answer(200, {"status": "OK", "coupons": list(coupons), "next": None})
    )


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_a_table_never_cuts_an_id_a_count_or_a_time_and_says_what_it_left_out(api, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    _list_page(api, LONG, COUPON)

    result = run(api, "list")

    assert result.exit_code == 0, result.output
    shown = result.stdout
    assert "…" not in shown
    assert all(len(line) <= columns for line in shown.splitlines())
    header = next(line for line in shown.splitlines() if "│ id" in line or "┃ id" in line)
    cells = {"id": "9223372036854775807", "state": "NOT OPEN", "left": "9999999", "total": "10000000",
             "ends": "2026-12-24 14:59:59Z", "starts": "2026-12-24 03:00Z"}  # fmt: skip
    for column, value in cells.items():
        assert (value in shown) == (column in header), (value, column)
    if columns < 200:
        assert re.search(r"left out at \d+ columns: .*--output text or json", shown, flags=re.DOTALL)
    else:
        assert "left out" not in shown


def test_text_is_every_column_tab_separated_with_full_times(api):
    _list_page(api, LONG, SOLD)

    result = run(api, "list", output="text")

    assert result.exit_code == 0, result.output
    first, second = (line.split("\t") for line in result.stdout.splitlines())
    assert first == ["9223372036854775807", LONG["name"], "NOT OPEN", "9999999", "10000000", "1", "1",
                     "2026-12-24T12:00:00+09:00", "2026-12-24T23:59:59+09:00"]  # fmt: skip
    assert second[:3] == ["8", "Black Friday", "NOT OPEN"]


def test_the_output_form_is_read_from_coupons_output(api, monkeypatch):
    monkeypatch.setenv("COUPONS_OUTPUT", "json")
    api.answer("GET", "/coupons/7", Answer(200, COUPON))

    result = run(api, "show", "7")

    assert as_the_api_sent(json.loads(result.stdout)) == COUPON


@pytest.mark.parametrize(
    ("coupon", "at", "state"),
    [
        (COUPON, "2026-12-24T11:59:59+00:00", "NOT OPEN"),
        (COUPON, "2026-12-24T12:00:00+00:00", "OPEN"),
        (SOLD, "2026-12-24T13:00:00+00:00", "SOLD OUT"),
        ({**SOLD, "closed": True}, "2026-12-24T13:00:00+00:00", "CLOSED"),
        (SOLD, "2026-12-24T14:00:00+00:00", "ENDED"),
    ],
)
def test_each_coupon_says_its_state(coupon, at, state):
    assert sale.state(coupon, datetime.fromisoformat(at)) == state


def test_show_gives_the_state_in_every_form(api):
    api.answer("GET", "/coupons/8", Answer(200, {**SOLD, "issueStartsAt": "2026-01-01T00:00:00Z",
                                                  "issueEndsAt": "2027-01-01T00:00:00Z"}))  # fmt: skip

    table, text = run(api, "show", "8"), run(api, "show", "8", output="text")

    assert re.search(r"state\s+│\s+SOLD OUT", table.stdout)
    assert "state\tSOLD OUT\n" in text.stdout
    assert "stockLeft\t0\n" in text.stdout


def test_watch_says_sold_out_when_no_copy_is_left(api):
    api.answer("GET", "/coupons/8", Answer(200, {**SOLD, "issueStartsAt": "2026-01-01T00:00:00Z",
                                                  "issueEndsAt": "2027-01-01T00:00:00Z"}))  # fmt: skip

    result = run(api, "watch", "8", "--frames", "2", "--interval", "0.2", output="text")

    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert [line[1] for line in lines] == ["SOLD OUT", "SOLD OUT"]
    assert lines[0][7:9] == ["", ""]  # no rate from one read
    assert lines[1][7:9] == ["0.0", "0.0"]


def test_watch_gives_the_coupons_rates_from_its_counts(api):
    later = {**COUPON, "reserved": 75, "issued": 50}
    api.answer("GET", "/coupons/7", Answer(200, COUPON), Answer(200, later))

    result = run(api, "watch", "7", "--frames", "2", "--interval", "0.5", output="json")

    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert "unavailable" in first["perSecond"]
    seconds = (datetime.fromisoformat(second["readAt"]) - datetime.fromisoformat(first["readAt"])).total_seconds()
    assert second["perSecond"] == pytest.approx({"reserved": 20 / seconds, "issued": 10 / seconds})


def test_a_window_wholly_past_is_refused_unless_yes(api):
    api.answer("POST", "/coupons", Answer(201, {**COUPON, "status": "CREATED"}))
    past = ["create", "late", "--copies", "5", "--starts", "2020-01-01T00:00Z", "--ends", "2020-01-02T00:00Z"]

    refused, created = run(api, *past), run(api, *past, "--yes")

    assert refused.exit_code == 2
    assert "the window ended already" in refused.stderr
    assert created.exit_code == 0, created.output
    assert [s.path for s in api.sent] == ["/coupons"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["top-up", "7", "-5"], "copies must be at least 1"),
        (["top-up", "7", "10000001"], "copies must be at most 10,000,000"),
        (["show", "-3"], "a coupon id must be at least 1"),
        (["status", "7", "-1"], "a user id must be at least 1"),
        (["list", "--limit", "-2"], "--limit must be at least 1"),
    ],
)
def test_a_negative_number_reaches_the_check_and_is_said_in_words(api, args, said):
    result = run(api, *args)

    assert result.exit_code == 2
    assert said in result.stderr
    assert api.sent == []


def test_debug_shows_each_request_and_answer_without_a_secret(api, monkeypatch):
    monkeypatch.setenv("AWS_SESSION_TOKEN", "SESSIONTOKENSECRET")
    api.answer("GET", "/coupons/7", Answer(200, COUPON))

    result = run(api, "--debug", "show", "7")

    assert result.exit_code == 0, result.output
    trace = result.stderr
    assert f"debug: > GET {api.url}/coupons/7" in trace
    assert "debug: < 200 in " in trace
    assert re.search(r"Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/.*Signature=<redacted>", trace)
    assert "X-Amz-Security-Token: <redacted>" in trace
    signature = re.search(r"Signature=([0-9a-f]+)", api.sent[0].headers["Authorization"])[1]  # type: ignore[index]
    assert signature not in trace
    assert "SESSIONTOKENSECRET" not in trace
    assert "secret" not in trace.lower().replace("<redacted>", "")


def test_debug_redacts_a_cognito_token(api, tmp_path):
    api.answer("GET", "/coupons/7/issues/42", Answer(200, {"status": "NONE", "couponId": 7, "userId": 42}))
    token = tmp_path / "token"
    token.write_text("eyJ.secret-token\n")

    result = run(api, "--debug", "status", "7", "42", "--id-token-file", str(token))

    assert "Authorization: <redacted>" in result.stderr
    assert "eyJ" not in result.stderr


def test_ends_as_a_duration_counts_from_the_start(api):
    """The help's own example: a two-hour window from --starts, not two hours from now."""
    api.answer("POST", "/coupons", Answer(201, {**COUPON, "status": "CREATED"}))

    result = run(api, "create", "x", "--copies", "5", "--starts", "2099-12-24T12:00Z", "--ends", "+2h")

    assert result.exit_code == 0, result.output
    sent = json.loads(api.sent[0].body)
    assert (sent["issueStartsAt"], sent["issueEndsAt"]) == ("2099-12-24T12:00:00+00:00", "2099-12-24T14:00:00+00:00")


def test_change_counts_a_duration_from_its_own_starts(api):
    api.answer("PATCH", "/coupons/7", Answer(200, COUPON))

    result = run(api, "change", "7", "--starts", "2099-12-24T12:00Z", "--ends", "+90m")

    assert result.exit_code == 0, result.output
    assert json.loads(api.sent[0].body)["issueEndsAt"] == "2099-12-24T13:30:00+00:00"


@pytest.mark.parametrize(
    "args",
    [["show", "7", "--output", "json"], ["show", "--output=json", "7"], ["--output", "json", "show", "7"],
     ["show", "7", "--debug", "--output", "json"]],
)  # fmt: skip
def test_the_commands_options_are_taken_before_or_after_the_command(api, args):
    api.answer("GET", "/coupons/7", Answer(200, COUPON))

    result = CliRunner().invoke(app, ["--api-url", api.url, *args])

    assert result.exit_code == 0, result.output
    assert as_the_api_sent(json.loads(result.stdout)) == COUPON


def test_an_option_after_the_command_is_still_checked(api):
    result = CliRunner().invoke(app, ["show", "7", "--api-url", "http://[::1"])
    assert result.exit_code == 2
    assert "is not an http(s) URL" in result.output
    assert api.sent == []


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999/x", "https://x y.com/dev", "http://host:port/"])
def test_an_api_url_that_is_no_url_is_a_usage_error(api, url):
    result = CliRunner().invoke(app, ["--api-url", url, "show", "7"])
    assert result.exit_code == 2, result.output
    assert "is not an http(s) URL" in result.output
    assert api.sent == []


def test_json_carries_the_state_and_stock_left_the_table_shows(api):
    api.answer("GET", "/coupons/7", Answer(200, {**COUPON, "closed": True}))
    page = {"status": "OK", "coupons": [{**COUPON, "closed": True}], "next": None}
    api.answer("GET", "/coupons?after=0&limit=100", Answer(200, page))

    shown = json.loads(run(api, "show", "7", output="json").stdout)
    (listed,) = json.loads(run(api, "list", output="json").stdout)["coupons"]

    assert (shown["state"], shown["stockLeft"]) == ("CLOSED", 45)  # 100 - 55 reserved
    assert (listed["state"], listed["stockLeft"]) == ("CLOSED", 45)


OPENING, NOW = (
    int(datetime(2026, 12, 24, 12, tzinfo=UTC).timestamp()),
    int(datetime(2026, 12, 24, 13, tzinfo=UTC).timestamp()),
)


def _lines_logged(*lines: dict[str, object]) -> list[dict[str, object]]:
    return [{"message": json.dumps({"_aws": {}, "couponId": 7, **line})} for line in lines]


def _fairness_with_logs(api, monkeypatch, pages: list[list[dict[str, object]]] | str, *args: str):
    """``coupons --env dev fairness 7`` on a sale whose intake's log group pages are ``pages``
    (FilterLogEvents, asked for coupon 7's lines across its window up to now), or whose
    FilterLogEvents fails with the error code ``pages``."""
    logs = botocore.session.get_session().create_client("logs", region_name="eu-west-1",
                                                        aws_access_key_id="a", aws_secret_access_key="b")  # fmt: skip
    stubber = Stubber(logs)
    if isinstance(pages, str):
        stubber.add_client_error("filter_log_events", service_error_code=pages, service_message="said by AWS")
        pages = []
    for number, events in enumerate(pages):
        asked = {"logGroupName": "intake-logs", "startTime": OPENING * 1000 - 60_000, "endTime": NOW * 1000 + 60_000,
                 "filterPattern": "{ $.couponId = 7 }"} | ({"nextToken": f"t{number}"} if number else {})  # fmt: skip
        page = {"events": events} | ({"nextToken": f"t{number + 1}"} if number + 1 < len(pages) else {})
        stubber.add_response("filter_log_events", page, asked)
    made = boto3.session.Session.client

    def client(self, name, *client_args, **kwargs):
        return logs if name == "logs" else made(self, name, *client_args, **kwargs)

    monkeypatch.setattr(boto3.session.Session, "client", client)
    monkeypatch.setattr("coupon_client.cli._now", lambda: datetime.fromtimestamp(NOW, UTC))  # mid-window: up to now
    with mock_aws(), stubber:
        outputs = {"ApiUrl": {"Value": api.url}, "IntakeLogGroup": {"Value": "intake-logs"}}
        template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}, "Outputs": outputs}
        boto3.client("cloudformation", region_name="eu-west-1").create_stack(
            StackName="Coupons-dev", TemplateBody=json.dumps(template)
        )
        api.answer("GET", "/coupons/7", Answer(200, COUPON))
        result = CliRunner().invoke(app, ["--env", "dev", "fairness", "7", *args])
        stubber.assert_no_pending_responses()
    return result


def test_fairness_reads_every_page_of_the_sales_lines_and_prints_its_figures(api, monkeypatch):
    """A loser overtaken (its answer late), on two pages of the coupon's lines; one click's lost
    answer retried: one winner."""
    t = OPENING * 1000
    pages = [
        _lines_logged({"outcome": "SOLD_OUT", "arrivedAt": t + 100, "decidedAt": t + 400, "requestId": "l"},
                      {"outcome": "SUCCESS", "arrivedAt": t + 250, "decidedAt": t + 260, "requestId": "w"}),
        [],
        _lines_logged({"outcome": "SUCCESS", "arrivedAt": t + 900, "decidedAt": t + 900, "requestId": "w",
                       "replays": t + 260}),
    ]  # fmt: skip

    result = _fairness_with_logs(api, monkeypatch, pages, "--output", "json")

    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    counted = ("lines", "clicks", "winners", "losers", "inversionWindowMs", "earlyLosers")
    assert [printed[key] for key in counted] == [3, 2, 1, 1, 150, 1]
    assert printed["overtaken"] == [{"loserArrivedAt": t + 100, "loserDecidedAt": t + 400, "winnerArrivedAt": t + 250,
                                     "winnerTookAt": t + 260, "ms": 150}]  # fmt: skip


def test_fairness_of_a_sale_without_lines_says_it_cannot_measure(api, monkeypatch):
    result = _fairness_with_logs(api, monkeypatch, [[]])

    assert result.exit_code == errors.NothingToMeasureError.exit_code
    assert "no metrics line of coupon 7 in intake-logs" in result.stderr
    assert "nothing to measure" in result.stderr


def test_fairness_lists_the_overtaken_losers_it_was_asked_for_of_all_of_them(api, monkeypatch):
    t = OPENING * 1000
    pages = [
        _lines_logged({"outcome": "SOLD_OUT", "arrivedAt": t + 100, "decidedAt": t + 400, "requestId": "l1"},
                      {"outcome": "SOLD_OUT", "arrivedAt": t + 200, "decidedAt": t + 410, "requestId": "l2"},
                      {"outcome": "SUCCESS", "arrivedAt": t + 250, "decidedAt": t + 260, "requestId": "w"}),
    ]  # fmt: skip

    result = _fairness_with_logs(api, monkeypatch, pages, "--detail", "1")

    assert result.exit_code == 0, result.output
    assert "1 of 2" in result.stdout
    listed = [line.strip() for line in result.stdout.splitlines() if line.strip().startswith("loser arrived")]
    assert listed == ["loser arrived 12:00:00.100, decided 12:00:00.400; winner arrived 12:00:00.250 (+150 ms), "
                      "took its copy 12:00:00.260"]  # fmt: skip


@pytest.mark.parametrize(
    ("code", "error", "said"),
    [("ResourceNotFoundException", errors.NothingToMeasureError, "no log group intake-logs: nothing to measure"),
     ("ThrottlingException", errors.UnavailableError, "AWS throttled logs:FilterLogEvents"),
     ("AccessDeniedException", errors.ForbiddenError, "may not call logs:FilterLogEvents")],
)  # fmt: skip
def test_fairness_says_why_the_lines_cannot_be_read(api, monkeypatch, code, error, said):
    result = _fairness_with_logs(api, monkeypatch, code)

    assert result.exit_code == error.exit_code, result.output
    assert said in result.stderr
    assert "Traceback" not in result.output


def test_fairness_needs_the_intakes_log_group(api):
    result = run(api, "fairness", "7")

    assert result.exit_code == errors.UnknownEnvironmentError.exit_code
    assert "the intake's log group is unknown" in result.stderr
    assert api.sent == []
