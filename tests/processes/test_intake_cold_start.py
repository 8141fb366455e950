"""The hot path's cold start: what importing the handler and answering an issue request load."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.unit.functions.intake.test_app import ENV

# An issue request answered by a stand-in service, then which of the modules it does not need got
# loaded: the resolver, the other bodies' models, the database stack, the SDK (a missing state's
# ask to the rebuild function loads it), the tracer, the coupon and dead-letter models, and
# reading Kafka back; and which classes of other functions our modules built (each dataclass
# costs about a millisecond to create): the other functions' settings, the records as read back,
# the worker's write limit.
ANSWER_ONE_REQUEST = """
import json, sys, uuid
from coupon_core.settings.intake import IntakeSettings
from coupon_core.domain.issuing import IssueResult
from coupon_core.domain.reservations import IssueOutcome
from functions.intake import app, dependencies
from local.testkit.lambda_events import InProcessContext, api_event

class Service:
    def issue(self, coupon_id, user_id, key=None):
        return IssueResult(IssueOutcome.SOLD_OUT)

wiring = dependencies.Wiring(IntakeSettings.from_env(), None, None, Service())  # no server reached
dependencies.wiring = lambda: wiring
answer = app.handler(api_event("POST", "/coupon-issues", {"couponId": 3, "userId": 7}), InProcessContext())
unneeded = ("sqlalchemy", "alembic", "pg8000", "aws_xray_sdk", "boto3",
            "aws_lambda_powertools.event_handler", "functions.coupons", "functions.http_api.schemas",
            "coupon_core.domain.coupons", "coupon_core.domain.dead_letters", "coupon_core.adapters.kafka.in_flight")
others = ("WorkerSettings", "DlqHandlerSettings", "RebuildSettings", "RelaySettings",
          "Delivered", "InFlight", "WriteRate")
ours = [vars(module) for name, module in list(sys.modules.items())
        if name.split(".")[0] in ("coupon_core", "lua_redis", "functions")]
built = sorted({name for namespace in ours for name in others if name in namespace})
loaded = sorted(m for m in unneeded if m in sys.modules)
print(json.dumps({"status": answer["statusCode"], "loaded": loaded, "built": built}))
"""


def _run(code: str, **environment: str) -> subprocess.CompletedProcess[str]:
    variables = {**os.environ, **ENV, **environment, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=variables)


def test_an_issue_request_loads_nothing_it_does_not_need():
    result = json.loads(_run(ANSWER_ONE_REQUEST).stdout.splitlines()[-1])
    assert result == {"status": 409, "loaded": [], "built": []}


def test_in_a_lambda_init_an_unreachable_server_is_logged_and_the_container_still_starts():
    # ENV's servers are on port 1: nothing listens, and the connections fail during the import.
    done = _run("import functions.intake.app", AWS_LAMBDA_INITIALIZATION_TYPE="on-demand", LOG_LEVEL="WARNING")
    assert "could not connect while initialising; the first request will" in done.stdout + done.stderr
