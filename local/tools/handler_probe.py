"""The system's own cost of a request, without the local stand-ins in front of it.

The demo's requests go through LocalStack's API Gateway and Lambda service and our host
executor, each a Python program sharing this machine's two cores with the system. To say how
much of a request's time is theirs, the same intake handler, configured exactly as the
deployed function (its environment read from LocalStack), is called in this process against
the same servers, one request at a time, on a coupon of its own.
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import time

from local.testkit.lambda_events import InProcessContext, api_event


def handler_latencies(function_environment: dict[str, str], coupon_id: int, users: range) -> list[float]:
    """Seconds per request of the intake handler in-process, one per user, after one warm-up.
    The function's environment is this process's only meanwhile, and its wiring is dropped after."""
    saved = dict(os.environ)
    os.environ.update(function_environment)
    from functions.intake import app, dependencies  # noqa: PLC0415 - imported once the environment is set

    def request(user: int) -> float:
        event = api_event("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user})
        began = time.perf_counter()
        app.handler(event, InProcessContext())
        return time.perf_counter() - began

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the handler prints its metrics (EMF)
            request(users.start - 1)
            return [request(user) for user in users]
    finally:
        dependencies.reset()
        os.environ.clear()
        os.environ.update(saved)


def percentiles_ms(seconds: list[float]) -> dict[str, float]:
    """p50, p95 and p99 of ``seconds``, in milliseconds."""
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return {"p50": cuts[49] * 1000, "p95": cuts[94] * 1000, "p99": cuts[98] * 1000}
