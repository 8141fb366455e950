"""One cold start of the intake, in this fresh interpreter: ``python -m bench.cold_start COUPON USER``.

Run by ``bench/intake.py`` as a subprocess against live servers. Prints JSON: the seconds to
import the handler module (with ``AWS_LAMBDA_INITIALIZATION_TYPE`` set, as in Lambda, that
import also opens the connections), the first request after it, and the median of the next 50.
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
import time

started = time.perf_counter()
from functions.intake import app  # noqa: E402 - the import is what is measured
from local.testkit.lambda_events import InProcessContext, api_event  # noqa: E402

imported = time.perf_counter()


def _request(coupon_id: int, user_id: int) -> tuple[float, int]:
    event = api_event("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user_id})
    with contextlib.redirect_stdout(io.StringIO()):
        began = time.perf_counter()
        status = app.handler(event, InProcessContext())["statusCode"]
        return time.perf_counter() - began, int(status)


def main() -> None:
    coupon_id, first_user = int(sys.argv[1]), int(sys.argv[2])
    first, status = _request(coupon_id, first_user)
    warm = [_request(coupon_id, first_user + n)[0] for n in range(1, 51)]
    print(json.dumps({"import": imported - started, "first": first, "warm": statistics.median(warm), "status": status}))


if __name__ == "__main__":
    main()
