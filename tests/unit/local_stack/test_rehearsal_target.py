"""make rehearse calls only the environment it is pointed at, and only within its bounds: every
refusal here happens before anything is called."""

from __future__ import annotations

import botocore.session
import pytest
from botocore.stub import Stubber

from local.stack import control
from local.tools.rehearsal_target import MAX_SECONDS, MAX_USERS, IntakeLog, TargetError, arrivals, parse_args, target

DEV_URL = "https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/dev"


def args(*argv: str):
    return parse_args(list(argv), "rehearse")


@pytest.fixture
def credentials(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--target", "dev"], "needs --url"),
        (["--target", "dev", "--url", DEV_URL], "and --region"),
        (["--target", "dev", "--url", DEV_URL.replace("/dev", "/prod"), "--region", "eu-west-1"],
         "must be the dev stage's execute-api URL in eu-west-1"),
        (["--target", "dev", "--url", DEV_URL, "--region", "us-east-1"], "must be the dev stage's"),
        (["--target", "dev", "--url", "https://shop.example.com/dev", "--region", "eu-west-1"], "execute-api URL"),
        (["--target", "dev", "--url", DEV_URL + "/../prod", "--region", "eu-west-1"], "execute-api URL"),
        (["--target", "prod", "--url", DEV_URL.replace("/dev", "/prod"), "--region", "eu-west-1"],
         "needs --id-tokens"),
        (["--target", "local", "--url", DEV_URL], "no --url, --id-tokens or --intake-log-group"),
        (["--target", "local", "--intake-log-group", "logs"], "no --url, --id-tokens or --intake-log-group"),
    ],
)  # fmt: skip
def test_a_target_that_is_not_exactly_one_environment_is_refused(argv, message, credentials):
    with pytest.raises(TargetError, match=message):
        target(args(*argv))


def test_the_local_target_must_be_running(monkeypatch):
    monkeypatch.setattr(control, "is_up", lambda: False)
    with pytest.raises(TargetError, match="start it with make up"):
        target(args("--target", "local"))


def test_dev_is_called_at_its_own_url_with_sigv4(credentials):
    chosen = target(args("--target", "dev", "--url", DEV_URL, "--region", "eu-west-1"))
    assert (chosen.name, chosen.url, len(chosen.public), chosen.intake_log) == ("dev", DEV_URL, 1, None)


def test_an_aws_targets_intake_lines_are_read_by_coupon_from_the_group_given(credentials):
    chosen = target(args("--target", "dev", "--url", DEV_URL, "--region", "eu-west-1", "--intake-log-group", "g"))
    assert chosen.intake_log is not None
    assert (chosen.intake_log.group, chosen.intake_log.by_coupon) == ("g", True)


def test_prod_has_one_client_per_id_token(tmp_path, credentials):
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("token-a\n\ntoken-b\n")
    url = DEV_URL.replace("/dev", "/prod")
    chosen = target(args("--target", "prod", "--url", url, "--region", "eu-west-1", "--id-tokens", str(tokens)))
    assert len(chosen.public) == 2


@pytest.mark.parametrize(
    "argv",
    [
        [],  # no target at all
        ["--target", "staging"],
        ["--target", "local", "--users", "0"],
        ["--target", "local", "--users", str(MAX_USERS + 1)],
        ["--target", "local", "--max-seconds", str(MAX_SECONDS + 1)],
        ["--target", "local", "--burst", "1.5"],
    ],
)
def test_a_rehearsal_out_of_bounds_does_not_start(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        args(*argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err


def test_the_burst_arrives_at_the_opening_and_the_rest_spread_until_late_seconds():
    times = arrivals(10, 0.8, 4.0)
    assert times[:8] == [0.0] * 8
    assert times[8:] == [2.0, 4.0]
    assert arrivals(3, 1.0, 5.0) == [0.0, 0.0, 0.0]


def test_an_aws_targets_lines_are_filtered_by_coupon_with_a_json_filter_pattern():
    """CloudWatch Logs' JSON filter pattern (``{ $.field = number }``, the Logs user guide's
    "filter patterns to match terms in JSON log events"), so that a large sale's other coupons
    are not paged through; LocalStack's group is read whole."""
    logs = botocore.session.get_session().create_client("logs", region_name="eu-west-1",
                                                        aws_access_key_id="a", aws_secret_access_key="b")  # fmt: skip
    lines = ['{"couponId": 42, "decidedAt": 1}']
    with Stubber(logs) as stubber:
        for pattern in ("{ $.couponId = 42 }", ""):
            asked = {"logGroupName": "g", "startTime": 100, "endTime": 200, "filterPattern": pattern}
            stubber.add_response("filter_log_events", {"events": [{"message": lines[0]}]}, asked)
        assert list(IntakeLog(logs, "g", by_coupon=True).lines((100, 200), 42)) == lines
        assert list(IntakeLog(logs, "g", by_coupon=False).lines((100, 200), 42)) == lines
