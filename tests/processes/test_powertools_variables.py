"""Every function honours the variables Powertools documents for its Logger: each is set, for
each function's handler, in a process that has imported neither Powertools nor our modules
(Powertools reads them when the logger and the decorators are made), and its effect is read from
the lines the handler logs. The handlers are given events they refuse or cannot serve here (no
servers): what the variables govern happens around the handler's own work. The intake's metrics
line and its Metrics variables are held to Powertools in ``intake/test_observability.py``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.forked import LIBRARIES, environment_without, run_forked

HANDLERS = {  # function -> (module, handler, an event it takes without servers)
    "intake": ("functions.intake.app", "handler", {"httpMethod": "POST", "path": "/coupon-issues", "body": "{}"}),
    "coupons": ("functions.coupons.app", "handler", {"httpMethod": "GET", "path": "/nowhere"}),
    "worker": ("functions.worker.app", "handler", {"eventSource": "aws:kafka", "records": {}}),
    "dlq": ("functions.worker.dlq", "handler", {"Records": []}),
    "builder": ("functions.rebuild.build", "handler", {"unknown": 1}),
    "rebuild": ("functions.rebuild.app", "handler", {"unknown": 1}),
    "relay": ("functions.relay.app", "handler", {"unknown": 1}),
    "migrate": ("functions.migrate.app", "handler", {}),
    "topic": ("functions.topic.app", "handler", {"RequestType": "Create"}),
}
# The handlers' shared libraries are imported once (tests/forked.py); each run's child sets its
# variables before the first import of Powertools or of ours, so every Logger and decorator is
# made with them, as in a fresh container.
_SHARED = (*LIBRARIES, "pg8000", "aws_xray_sdk.core")
_INVOKE = """
import contextlib, importlib, io, json, os, sys
assert not [name for name in sys.modules if name.split(".")[0] in ("aws_lambda_powertools", "coupon_core")]
os.environ.update({variables!r})
from coupon_core.observability import logger
from local.testkit.lambda_events import InProcessContext
handler = getattr(importlib.import_module({module!r}), {handler!r})
logged = io.StringIO()
logger.registered_handler.setStream(logged)
with contextlib.suppress(Exception):
    handler({event!r}, InProcessContext())
lines = [json.loads(line) for line in logged.getvalue().splitlines() if line.startswith("{{")]
print(json.dumps({{"lines": lines, "level": logger.log_level}}))
"""


def invoked(runs: list[tuple[str, dict[str, str]]]) -> list[dict[str, Any]]:
    """What each ``(function, variables)`` run's handler logged, and its logger's level."""
    programs = [
        _INVOKE.format(module=HANDLERS[function][0], handler=HANDLERS[function][1], event=HANDLERS[function][2],
                       variables={"POWERTOOLS_METRICS_NAMESPACE": "Probe", **variables})
        for function, variables in runs
    ]  # fmt: skip
    environment = environment_without(["POWERTOOLS_"]) | {"PYTHONPATH": os.pathsep.join(sys.path)}
    ran = run_forked(programs, shared=_SHARED, env=environment, cwd=Path.cwd())
    assert all(run.code == 0 for run in ran), [run.output for run in ran]
    return [json.loads(run.output.splitlines()[-1]) for run in ran]


SAMPLED = {
    "POWERTOOLS_SERVICE_NAME": "probe",
    "POWERTOOLS_LOGGER_LOG_EVENT": "true",
    "POWERTOOLS_LOGGER_SAMPLE_RATE": "1",
}
AT_ERROR = {"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_LOGGER_LOG_EVENT": "true"}
VARIABLES = {"sampled": SAMPLED, "at error": AT_ERROR}


@pytest.fixture(scope="module")
def seen() -> dict[tuple[str, str], dict[str, Any]]:
    """Every function with each set of variables."""
    runs = [(function, name) for function in HANDLERS for name in VARIABLES]
    results = invoked([(function, VARIABLES[name]) for function, name in runs])
    return dict(zip(runs, results, strict=True))


@pytest.mark.parametrize("function", HANDLERS)
def test_the_service_name_the_logged_event_and_sampling(function, seen):
    logged = seen[function, "sampled"]
    event = HANDLERS[function][2]
    assert [line["message"] for line in logged["lines"]][:1] == [event]  # the event, first
    assert {line["service"] for line in logged["lines"]} == {"probe"}
    assert logged["level"] == logging.DEBUG  # sampled: every invocation at debug


@pytest.mark.parametrize("function", HANDLERS)
def test_the_log_level(function, seen):
    logged = seen[function, "at error"]
    assert logged["level"] == logging.ERROR
    assert all(line["level"] in {"ERROR", "CRITICAL"} for line in logged["lines"])  # the event not logged at info
