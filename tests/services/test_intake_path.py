"""How far a reader walks: the project files one warm SUCCESS of ``POST /coupon-issues`` executes,
traced with a profiler hook through ``functions.intake.app.handler`` on the real servers (the
Lambda context the test passes, ``local/testkit``, is not the project's path).
At most 13, one job each: the handler, which counts the answer (``functions/intake/app.py``),
what both HTTP functions read of an event (``functions/http_api/request.py``), the intake's request
(``functions/intake/request.py``) and the body's one reader (``untrusted_json.py``), the
answers (``functions/http_api/answers.py``), the domain service
(``domain/issuing.py``), the record and the ids it carries (``domain/records.py``), the
reservation store with its Lua (``lua_redis/issue_store.py``) and its key names
(``lua_redis/keys.py``), the Redis client whose connection renews itself
(``lua_redis/client.py``), the one mapping of a driver's errors (``errors.py``), the publisher
and the kafka-python internals it needs (``publisher.PRODUCER_PATHS``)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from local.testkit.lambda_events import InProcessContext, api_event
from tests.services.intake_support import create_coupon, issue

ROOT = Path(__file__).resolve().parents[2]
AT_MOST = 13


def executed_files(call: Any) -> set[str]:
    """The project's files (not the tests', not a library's) whose code runs during ``call()``."""
    seen: set[str] = set()

    def hook(frame: FrameType, event: str, _: Any) -> None:
        if event == "call":
            seen.add(frame.f_code.co_filename)

    sys.setprofile(hook)
    try:
        call()
    finally:
        sys.setprofile(None)
    project = {Path(name).resolve() for name in seen if name.startswith(str(ROOT))}
    return {
        str(path.relative_to(ROOT))
        for path in project
        if ".venv" not in path.parts and path.parts[len(ROOT.parts)] != "tests" and "testkit" not in path.parts
    }


def test_a_warm_success_walks_no_more_project_files_than_the_bound(pipeline):
    from functions.intake.app import handler  # noqa: PLC0415 - after the pipeline set the environment

    coupon_id = create_coupon(10)
    assert issue(coupon_id, 1).status == "SUCCESS"  # the container is warm: wired, connected
    event = api_event("POST", "/coupon-issues", {"couponId": coupon_id, "userId": 2})
    answers: list[dict[str, Any]] = []

    files = executed_files(lambda: answers.append(handler(event, InProcessContext())))

    assert answers[0]["statusCode"] == 202
    assert len(files) <= AT_MOST, "\n".join(sorted(files))
