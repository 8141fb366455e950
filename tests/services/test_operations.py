"""The operators' routes on the real services: pages, CSV, renames and windows, the kill
switch and top-ups, with the database and Redis agreeing after each."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from functions.coupons import dependencies
from lua_redis.keys import reserved_key
from tests.services.intake_support import after_a_second, call, create_coupon, first_request_after_the_loss, issue

# A lost state is rebuilt once the produces under way have had their time (6 s here, unless the
# test ends the wait) and the first request's claim on its build has passed (a second).
SETTLE_S = 15


def until_settled(answer: Callable[[], str]) -> str:
    """The answer once it is no longer UNAVAILABLE (the rebuild's wait), as a client retries."""
    deadline = time.monotonic() + SETTLE_S
    while (status := answer()) == "UNAVAILABLE" and time.monotonic() < deadline:
        time.sleep(0.5)
    return status


def test_coupons_come_a_page_at_a_time(pipeline):
    ids = [create_coupon(5) for _ in range(3)]
    for user in (1, 2):
        issue(ids[1], user)
    pipeline.run_worker()
    first = call("GET", "/coupons", query={"limit": "2"})
    assert [(c["couponId"], c["issued"], c["remainingQuantity"]) for c in first.body["coupons"]] == [
        (ids[0], 0, 5),
        (ids[1], 2, 3),
    ]
    second = call("GET", "/coupons", query={"limit": "2", "after": str(first.body["next"])})
    assert ([c["couponId"] for c in second.body["coupons"]], second.body["next"]) == (ids[2:], None)
    refused = call("GET", "/coupons", query={"limit": "0"})
    assert (refused.status_code, refused.body["status"]) == (422, "INVALID_REQUEST")


def test_a_moved_window_and_a_new_name_hold_at_once(pipeline):
    coupon_id = create_coupon(5)
    later = datetime.now(UTC) + timedelta(hours=1)
    window = {"issueStartsAt": later.isoformat(), "issueEndsAt": (later + timedelta(hours=1)).isoformat()}
    moved = call("PATCH", f"/coupons/{coupon_id}", {"name": "moved", **window})
    assert (moved.status_code, moved.body["name"]) == (200, "moved")
    assert issue(coupon_id, 1).body["status"] == "NOT_OPEN"
    back = call(
        "PATCH", f"/coupons/{coupon_id}", {"issueStartsAt": (datetime.now(UTC) - timedelta(minutes=1)).isoformat()}
    )
    assert back.status_code == 200
    after_a_second()  # the container remembers NOT_OPEN until then (docs/design.md)
    assert issue(coupon_id, 1).body["status"] == "SUCCESS"


def test_a_change_that_breaks_a_rule_is_refused_and_changes_nothing(pipeline):
    coupon_id = create_coupon(5)
    before = call("GET", f"/coupons/{coupon_id}").body
    backwards = call("PATCH", f"/coupons/{coupon_id}", {"issueEndsAt": "2000-01-01T00:00:00Z"})
    empty = call("PATCH", f"/coupons/{coupon_id}", {})
    unknown = call("PATCH", "/coupons/999999", {"name": "x"})
    assert (backwards.status_code, backwards.body["error"]) == (422, "issueEndsAt must be after issueStartsAt")
    assert (empty.status_code, unknown.status_code) == (422, 404)
    assert call("GET", f"/coupons/{coupon_id}").body == before


def test_the_kill_switch_answers_closed_until_reopened_even_across_a_lost_state(pipeline, redis_client):
    coupon_id = create_coupon(5)
    assert issue(coupon_id, 1).body["status"] == "SUCCESS"
    assert call("POST", f"/coupons/{coupon_id}/close").body["closed"] is True
    closed = issue(coupon_id, 2)
    assert (closed.status_code, closed.body["status"]) == (409, "CLOSED")
    redis_client.flushall()  # the state is rebuilt from the database, closed
    pipeline.run_worker()
    after_a_second()  # past the container's memory of CLOSED: the request finds the state lost
    first_request_after_the_loss(redis_client, coupon_id, 2)
    assert until_settled(lambda: issue(coupon_id, 2).body["status"]) == "CLOSED"
    assert call("POST", f"/coupons/{coupon_id}/reopen").body["closed"] is False
    after_a_second()
    assert issue(coupon_id, 2).body["status"] == "SUCCESS"


def test_a_top_up_sells_exactly_the_new_copies_while_requests_race_it(pipeline):
    coupon_id = create_coupon(1)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda user: issue(coupon_id, user).body["status"], range(1, 21)))
        ups = list(
            pool.map(lambda _: call("POST", f"/coupons/{coupon_id}/top-up", {"copies": 1}).status_code, range(4))
        )
    assert ups == [200] * 4
    after_a_second()  # the container may remember SOLD_OUT until then
    later = [issue(coupon_id, user).body["status"] for user in range(21, 31)]
    assert (answers + later).count("SUCCESS") == 5
    pipeline.run_worker()
    coupon = call("GET", f"/coupons/{coupon_id}").body
    assert (coupon["totalQuantity"], coupon["issued"], coupon["remainingQuantity"], coupon["reserved"]) == (5, 5, 0, 5)


def test_a_coupons_issues_come_as_json_pages_or_csv(pipeline):
    coupon_id = create_coupon(5)
    for user in (7, 8, 9):
        issue(coupon_id, user)
    pipeline.run_worker()
    page = call("GET", f"/coupons/{coupon_id}/issues", query={"limit": "2"})
    assert [(i["userId"], i["status"]) for i in page.body["issues"]] == [(7, "ISSUED"), (8, "ISSUED")]
    rest = call("GET", f"/coupons/{coupon_id}/issues", query={"after": str(page.body["next"])})
    assert [i["userId"] for i in rest.body["issues"]] == [9]
    exported = call("GET", f"/coupons/{coupon_id}/issues", query={"format": "csv", "limit": "2"}, raw=True)
    rows = list(csv.DictReader(io.StringIO(exported.body)))
    assert [(row["userId"], row["status"]) for row in rows] == [("7", "ISSUED"), ("8", "ISSUED")]
    assert exported.headers["Content-Type"] == "text/csv"
    assert exported.headers["X-Next-After"] == str(page.body["next"])
    assert call("GET", "/coupons/999999/issues").status_code == 404


def test_an_operator_reconciles_a_coupon_now_and_reads_the_report(pipeline, redis_client, lambda_service):
    coupon_id = create_coupon(5)
    for user in (1, 2):
        issue(coupon_id, user)
    pipeline.run_worker()
    redis_client.zrem(reserved_key(coupon_id), "1")  # a holder Redis lost
    answer = call("POST", f"/coupons/{coupon_id}/reconcile")
    assert (answer.status_code, answer.body["couponId"]) == (200, coupon_id)
    (report,) = answer.body["report"]["reconciled"]
    assert (report["couponId"], report["added"], report["reserved"]) == (coupon_id, 1, 2)
    assert ("rebuild", {"couponId": coupon_id}) in lambda_service.invocations  # through Lambda's API
    assert call("POST", "/coupons/999999/reconcile").status_code == 404


def test_without_a_rebuild_function_the_reconcile_route_is_unavailable(pipeline, monkeypatch):
    monkeypatch.delenv("REBUILD_FUNCTION")
    dependencies.reset()
    coupon_id = create_coupon(5)
    answer = call("POST", f"/coupons/{coupon_id}/reconcile")
    assert (answer.status_code, answer.body["status"]) == (503, "UNAVAILABLE")
