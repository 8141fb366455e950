"""Every function honours the variables Powertools documents for its Logger: each is set, for
each function's handler, in a fresh interpreter (Powertools reads them when the logger and the
decorators are made), and its effect is read from the lines the handler logs. The handlers are
given events they refuse or cannot serve here (no servers): what the variables govern happens
around the handler's own work. The intake's metrics line and its Metrics variables are held to
Powertools in ``intake/test_observability.py``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

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
_INVOKE = """
import contextlib, importlib, io, json, sys
from coupon_core.observability import logger
from local.testkit.lambda_events import InProcessContext
module, name, event = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
handler = getattr(importlib.import_module(module), name)
logged = io.StringIO()
logger.registered_handler.setStream(logged)
with contextlib.suppress(Exception):
    handler(event, InProcessContext())
lines = [json.loads(line) for line in logged.getvalue().splitlines() if line.startswith("{")]
print(json.dumps({"lines": lines, "level": logger.log_level}))
"""


def invoked(function: str, variables: dict[str, str]) -> dict[str, Any]:
    """What ``function``'s handler logged, and its logger's level, with ``variables`` set."""
    module, name, event = HANDLERS[function]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("POWERTOOLS_")}
    environment |= {"PYTHONPATH": os.pathsep.join(sys.path), "POWERTOOLS_METRICS_NAMESPACE": "Probe", **variables}
    run = subprocess.run(
        [sys.executable, "-c", _INVOKE, module, name, json.dumps(event)],
        capture_output=True, text=True, check=True, env=environment,
    )  # fmt: skip
    return json.loads(run.stdout.splitlines()[-1])


SAMPLED = {
    "POWERTOOLS_SERVICE_NAME": "probe",
    "POWERTOOLS_LOGGER_LOG_EVENT": "true",
    "POWERTOOLS_LOGGER_SAMPLE_RATE": "1",
}
AT_ERROR = {"POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_LOGGER_LOG_EVENT": "true"}


@pytest.fixture(scope="module")
def seen() -> dict[tuple[str, str], dict[str, Any]]:
    """Every function with each set of variables, its fresh interpreters run as many at a time as
    the machine has cores."""
    runs = [(function, name, variables) for function in HANDLERS
            for name, variables in (("sampled", SAMPLED), ("at error", AT_ERROR))]  # fmt: skip
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = pool.map(lambda run: invoked(run[0], run[2]), runs)
        return {(function, name): result for (function, name, _), result in zip(runs, results, strict=True)}


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
