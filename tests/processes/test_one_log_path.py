"""One observability path: a domain module's log line goes through the functions' Powertools
Logger, as JSON with the invocation's keys (the correlation id), and obeys POWERTOOLS_LOG_LEVEL.
In a fresh interpreter each, so that the Logger reads the variables as a cold start does."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# A domain service logs a warning (a publish whose acknowledgement never came) inside an
# invocation wrapped as the intake's handler is; the fakes are the domain's unit-test ones.
_INVOCATION = """
from coupon_core.observability import logger
from coupon_core.domain.issuing import IssueService
from coupon_core.domain.reservations import IssueOutcome, Reservation
from coupon_core.errors import PublishUnconfirmedError
from local.testkit.lambda_events import InProcessContext
from tests.unit.domain import fakes

@logger.inject_lambda_context(correlation_id_path="id", clear_state=True)
def handler(event, context):
    store = fakes.Reservations([Reservation(IssueOutcome.SUCCESS, 1_000)])
    never_acknowledged = fakes.Publisher(fails=PublishUnconfirmedError)
    service = IssueService(store, never_acknowledged.publish, fakes.Builder().build, lookup=fakes.Registry().lookup)
    return {"outcome": service.issue(7, 1).outcome}

handler({"id": "request-42"}, InProcessContext())
"""


def lines(level: str) -> list[dict]:
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path), "POWERTOOLS_LOG_LEVEL": level,
                        "POWERTOOLS_SERVICE_NAME": "coupon-intake"}  # fmt: skip
    run = subprocess.run([sys.executable, "-c", _INVOCATION], capture_output=True, text=True, env=env, check=True)
    assert run.stderr == ""  # nothing through the standard library's own handlers
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def test_a_domain_modules_line_is_the_loggers_json_with_the_invocations_keys():
    (line,) = [line for line in lines("INFO") if line["message"].startswith("publish unconfirmed")]

    assert line["level"] == "WARNING"
    assert line["correlation_id"] == "request-42"
    assert line["service"] == "coupon-intake"
    assert line["couponId"] == 7


@pytest.mark.parametrize("level", ["ERROR", "CRITICAL"])
def test_the_domains_lines_obey_powertools_log_level(level):
    assert [line for line in lines(level) if line["message"].startswith("publish unconfirmed")] == []
