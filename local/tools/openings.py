"""Two openings side by side, in one demo run: the same burst at a coupon's opening, once on
intake environments started anew (cold: each first request waits for its environment's INIT),
once on environments warmed before the opening; each with its arrival order
(``coupon_client.fairness``, docs/design.md section 10: a cold start is one of what reorders a
request, and the warm-up is what bounds it).

Both start from new environments: the intake's configuration is changed (a variable no setting
reads), so that LocalStack replaces its environments, as a deploy does on AWS. The warmed one then
sends one request per client before the opening (answered NOT_OPEN), which leaves that many
environments initialised, as ``concurrency.warmup``'s provisioned concurrency does on AWS.
Both are measured from the intake's lines, as every report is.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from coupon_client.api_client import ApiClient
from coupon_client.fairness import LOSER, WINNER, Fairness, measure, read_lines
from coupon_client.retry import Claim
from local.testkit.intake_lines import sale_lines, span_since

COPIES, USERS = 10, 24  # an opening's stock and its users, each clicking once
SPACING_MS = 20  # between two users' arrivals: the opening's burst, spread over half a second
OPENS_IN_S = 4.0  # after the coupon is created: time for the warm-up's requests
FIRST_USER = 10_000_000  # above the demo's sale's users


def compare(api_url: str, lambda_: Any, logs: Any, env: dict[str, str], clients: int) -> list[tuple[str, str]]:
    """The report's rows: the arrival order of a cold opening and of a warmed one."""
    rows = []
    for number, warmed in enumerate((False, True)):
        figures = opening(api_url, lambda_, logs, env, clients, warmed=warmed, first_user=FIRST_USER + number * USERS)
        rows.append((f"opening, {'warmed' if warmed else 'cold'} environments", said(figures)))
    return rows


def said(figures: Fairness) -> str:
    waits = figures.waits.get(WINNER) or figures.waits.get(LOSER)
    decided = f"; arrival to decision p50 {waits.p50_ms:,} ms, max {waits.max_ms:,} ms" if waits else ""
    return (f"inversion window {figures.inversion_window_ms:,} ms, {figures.early_losers} of {figures.losers} "
            f"losers overtaken by a later arrival{decided}")  # fmt: skip


def opening(
    api_url: str, lambda_: Any, logs: Any, env: dict[str, str], clients: int, *, warmed: bool, first_user: int
) -> Fairness:
    """One opening on new intake environments (``clients`` of them warmed first if ``warmed``):
    ``USERS`` users arriving ``SPACING_MS`` apart, each on its own, as a sale's shoppers do (not
    a client waiting for one answer before the next click); its arrival order."""
    renew_environments(lambda_, env["INTAKE_FUNCTION"])
    admin, api = ApiClient(api_url), ApiClient(api_url, connections=USERS)
    opens = datetime.now(UTC) + timedelta(seconds=OPENS_IN_S)
    window = {"issueStartsAt": opens.isoformat(), "issueEndsAt": (opens + timedelta(hours=1)).isoformat()}
    created = admin.request("POST", "/coupons", {"name": "opening", "totalQuantity": COPIES, **window})
    coupon_id = int(created.body["couponId"])
    began_ms = time.time_ns() // 1_000_000
    claims: list[Claim] = []
    lock = threading.Lock()

    def click(user: int) -> None:
        claim = api.request_coupon(coupon_id, user)
        with lock:
            claims.append(claim)

    if warmed:
        _all_at_once(clients, lambda lane: click(first_user + lane))  # NOT_OPEN
    time.sleep(max(opens.timestamp() - time.time(), 0) + 0.05)  # the window is Redis' clock: this host's

    def shopper(index: int) -> None:
        time.sleep(index * SPACING_MS / 1000)
        click(first_user + index)

    _all_at_once(USERS, shopper)
    group = env["INTAKE_LOG_GROUP"]
    answers = sum(claim.attempts for claim in claims)
    return measure(sale_lines(lambda: read_lines(logs, group, span_since(began_ms)), coupon_id, answers))


def renew_environments(lambda_: Any, function: str) -> None:
    """Have Lambda replace the function's environments: a change of its configuration."""
    variables = lambda_.get_function_configuration(FunctionName=function)["Environment"]["Variables"]
    variables["DEMO_ENVIRONMENTS"] = uuid.uuid4().hex  # read by nothing: a new configuration
    lambda_.update_function_configuration(FunctionName=function, Environment={"Variables": variables})
    lambda_.get_waiter("function_updated").wait(FunctionName=function)


def _all_at_once(clients: int, work: Any) -> None:
    threads = [threading.Thread(target=work, args=(index,)) for index in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
