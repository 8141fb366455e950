"""The rebuild function against real Valkey, PostgreSQL and Tansu: its reconcile, through the whole pipeline."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text

from coupon_core.backend_errors import UnknownCouponsError
from functions.rebuild import build as builder_app
from functions.rebuild.event_parsing import InvalidRebuildEventError
from local.testkit.flash_sale import LoadPlan, lua_reserver, run_load
from local.testkit.lambda_events import InProcessContext
from lua_redis.keys import reserved_key
from lua_redis.store import rebuild_key
from tests.services.intake_support import (
    after_a_second,
    create_coupon,
    first_request_after_the_loss,
    issue,
    produces_under_way_have_ended,
)
from tests.services.pipeline_support import SCHEDULE_EVENT, rebuild


def database_state(engine, coupon_id: int) -> tuple[set[int], int, int, set[str], set[str]]:
    with engine.connect() as connection:
        issues = connection.execute(
            text("SELECT user_id, request_id FROM coupon_issues WHERE coupon_id = :c"), {"c": coupon_id}
        )
        issued = {row.user_id: str(row.request_id) for row in issues}
        failures = connection.execute(
            text("SELECT request_id FROM coupon_issue_failures WHERE coupon_id = :c AND released"), {"c": coupon_id}
        )
        failed = {str(row.request_id) for row in failures}
        total, remaining = connection.execute(
            text("SELECT total_quantity, remaining_quantity FROM coupons WHERE id = :c"), {"c": coupon_id}
        ).one()
    return set(issued), total, remaining, set(issued.values()), failed


def assert_invariants(engine, redis_client, coupon_id: int, successes: dict[str, int]) -> None:
    """I1 to I4 once the pipeline has drained and a reconcile has run."""
    issued, total, remaining, issued_requests, failed_requests = database_state(engine, coupon_id)
    reserved = {int(user) for user in redis_client.zrange(reserved_key(coupon_id), 1, "+inf", byscore=True)}
    assert len(issued) <= total  # I1 in the database
    assert len(reserved) <= total  # I1 in Redis
    assert len(successes) == len(set(successes.values()))  # I2: one SUCCESS per user at most
    for request_id in successes:  # I3: exactly one of an issue or a released, recorded failure
        assert (request_id in issued_requests) != (request_id in failed_requests), request_id
    assert reserved == issued  # I4
    assert remaining == total - len(issued)


def issue_once_rebuilt(coupon_id: int, user: int, *, idempotency_key: str | None = None) -> Any:
    """The request, sent again after each 503 while a lost state waits for its rebuild."""
    deadline = time.monotonic() + 60
    while (
        answer := issue(coupon_id, user, idempotency_key=idempotency_key)
    ).status_code == 503 and time.monotonic() < deadline:
        time.sleep(0.5)
    return answer


def sale(coupon_id: int, users: range) -> dict[str, int]:
    """Requests from ``users``; the request id of each SUCCESS, with its user."""
    answers = {user: issue(coupon_id, user) for user in users}
    return {a.body["requestId"]: user for user, a in answers.items() if a.status_code == 202}


@pytest.mark.parametrize("loss", ["flushall", "reservations evicted"])
def test_redis_state_lost_mid_sale_is_rebuilt_without_losing_a_reservation(
    pipeline, store, redis_client, migrated_engine, loss
):
    """Half the SUCCESS records persisted, half still in Kafka, when Redis loses the coupon's
    state (all of it, or only the reservation set while the meta hash survives). The state is
    rebuilt from the database and the unconsumed records: no user who reserved can reserve
    again, and the SUCCESS answers never exceed the copies."""
    coupon_id = create_coupon(100)
    successes = sale(coupon_id, range(1, 151))
    assert len(successes) == 100
    pipeline.run_worker(limit=50)  # half persisted, half still in Kafka

    if loss == "flushall":
        redis_client.flushall()
    else:
        redis_client.delete(reserved_key(coupon_id))
    after_a_second()  # what the intake remembers of the sale before the loss is forgotten
    first_request_after_the_loss(redis_client, coupon_id, 1)  # produces under way end before Kafka is read
    again = {user: issue_once_rebuilt(coupon_id, user) for user in (1, 75, 150)}  # reserved before the loss
    late = sale(coupon_id, range(151, 301))

    assert {user: a.body["status"] for user, a in again.items()} == {1: "DUPLICATE", 75: "DUPLICATE", 150: "SOLD_OUT"}
    assert late == {}  # every copy was taken before the loss
    pipeline.drain()
    report = rebuild({"couponId": coupon_id})

    assert report["failed"] == []
    assert_invariants(migrated_engine, redis_client, coupon_id, successes)
    assert len(database_state(migrated_engine, coupon_id)[0]) == 100


@pytest.mark.parametrize("rebuilt_by", ["the intake", "the rebuild function"])
def test_after_a_lost_state_is_rebuilt_a_retry_with_its_idempotency_key_answers_its_own_success(
    pipeline, redis_client, rebuilt_by
):
    """The retry protocol's promise (the same key answers the same SUCCESS) holds after the fault
    it is for: the rebuild gives holders back their request ids, from the issued rows and from the
    records still in Kafka, and a retry is not told DUPLICATE about its own reservation."""
    coupon_id = create_coupon(10)
    first = {user: issue(coupon_id, user, idempotency_key=f"key-{user}") for user in range(1, 7)}
    assert {a.status_code for a in first.values()} == {202}
    pipeline.run_worker(limit=3)  # three persisted, three still in Kafka
    redis_client.flushall()
    after_a_second()  # the intake no longer remembers their successes: each asks Redis
    if rebuilt_by == "the rebuild function":  # the first run starts the wait for produces under way
        (lost,) = rebuild({"couponId": coupon_id})["failed"]
        assert "StateLostError" in lost["error"]
        assert produces_under_way_have_ended(redis_client, coupon_id)
        assert rebuild({"couponId": coupon_id})["failed"] == []
    else:  # the first retry starts it
        first_request_after_the_loss(redis_client, coupon_id, 1, idempotency_key="key-1")

    again = {user: issue_once_rebuilt(coupon_id, user, idempotency_key=f"key-{user}") for user in first}
    another_key = issue(coupon_id, 1, idempotency_key="another-key")

    assert {user: (a.status_code, a.body) for user, a in again.items()} == {
        user: (202, a.body) for user, a in first.items()
    }  # the same requestId and reservedAt, persisted or in flight
    assert another_key.body["status"] == "DUPLICATE"  # a new request of a holder is still one too many


def test_a_reservation_that_never_reached_kafka_is_released_by_the_next_reconcile_without_traffic(
    pipeline, store, redis_client
):
    """The end of a sale: the last intake died between reserve and produce, nothing comes after.
    The production default skew (15 s) applies; time is controlled through reservation times."""
    coupon_id = create_coupon(10)
    assert issue(coupon_id, 1).status_code == 202
    assert issue(coupon_id, 2).status_code == 202
    pipeline.run_worker(limit=1)  # user 1 persisted; user 2's record is still in Kafka, unconsumed
    now = store.server_time_ms()
    redis_client.zadd(reserved_key(coupon_id), {"900": now - 20_000, "901": now - 5_000})  # never produced
    redis_client.zadd(reserved_key(coupon_id), {"2": now - 20_000}, xx=True)  # a lagging worker: old, in flight

    report = rebuild({"couponId": coupon_id})

    (reconciled,) = report["reconciled"]
    assert report["inFlightError"] is None
    assert (reconciled["inFlight"], reconciled["stray"], reconciled["released"]) == (1, 2, 1)
    assert store.reservation_time(coupon_id, 900) is None  # older than the skew, in neither Kafka nor the database
    assert store.reservation_time(coupon_id, 901) == now - 5_000  # too recent to tell: the next run decides
    assert store.reservation_time(coupon_id, 2) == now - 20_000  # its record is on its way to the worker
    assert store.reservation_time(coupon_id, 1) is not None


def test_an_issued_user_missing_from_redis_is_added_back(pipeline, store, redis_client):
    coupon_id = create_coupon(10)
    issue(coupon_id, 1)
    pipeline.drain()
    redis_client.zrem(reserved_key(coupon_id), "1")
    after_a_second()
    assert issue(coupon_id, 1).status_code == 202  # Redis forgot: the database will refuse this one
    pipeline.drain()

    report = rebuild({"couponId": coupon_id})

    assert report["reconciled"][0]["reserved"] == 1
    answer = issue(coupon_id, 1)
    assert (answer.status_code, answer.body["status"]) == (409, "DUPLICATE")


def test_the_schedule_reconciles_coupons_near_their_window_and_rebuilds_missing_state(pipeline, store, redis_client):
    open_now = create_coupon(10)
    soon = create_coupon(10, starts_in=timedelta(minutes=30))
    long_ago = create_coupon(10, starts_in=timedelta(days=-10), lasts=timedelta(hours=1))
    redis_client.flushall()  # Redis lost every state

    report = rebuild(SCHEDULE_EVENT)

    assert [(c["couponId"], c["installed"]) for c in report["reconciled"]] == [(soon, True)]
    assert store.has_state(soon)  # ready before the sale opens
    (lost,) = report["failed"]  # mid-sale: rebuilt once the produces under way have ended
    assert lost["couponId"] == open_now
    assert "StateLostError" in lost["error"]
    assert not store.has_state(long_ago)
    assert produces_under_way_have_ended(redis_client, open_now)
    (rebuilt,) = rebuild({"couponId": open_now})["reconciled"]
    assert rebuilt["installed"]


def test_the_wait_before_a_lost_states_rebuild_runs_out_on_the_servers_clock(store, redis_client):
    """The gate's wait, which the other lost-state tests end at once (``produces_under_way_have_ended``),
    runs out by itself: the first caller starts it, the callers after it are told what is left
    (a longer wait of theirs does not extend it), and it opens once Valkey's clock has passed it.
    What is left is bounded by Valkey's clock read around the call, so a pause of the machine
    between two calls changes the figure, never the verdict."""
    wait_ms = 1_000
    started = store.server_time_ms()
    assert store.rebuild_wait_ms(5, wait_ms) == wait_ms
    opens_at = int(redis_client.get(rebuild_key(5)))
    assert started + wait_ms <= opens_at <= store.server_time_ms() + wait_ms
    asked_at = store.server_time_ms()
    left = [store.rebuild_wait_ms(5, 60_000)]
    assert max(0, opens_at - store.server_time_ms()) <= left[0] <= max(0, opens_at - asked_at)
    deadline = time.monotonic() + 30
    while left[-1] and time.monotonic() < deadline:
        time.sleep(0.05)
        left.append(store.rebuild_wait_ms(5, wait_ms))

    assert left == sorted(left, reverse=True)
    assert left[-1] == 0
    assert store.server_time_ms() >= opens_at


def test_concurrent_reconciles_during_a_sale_keep_i1_and_i2(pipeline, store, redis_client, redis_url, migrated_engine):
    coupon_id = create_coupon(500)
    sale(coupon_id, range(1, 101))
    pipeline.drain()
    for user in range(1, 101, 2):  # drift: half of the issued users lost from Redis
        redis_client.zrem(reserved_key(coupon_id), str(user))
    stop = threading.Event()
    reports: dict[int, list[dict]] = {0: [], 1: []}

    def reconcile_repeatedly(reconciler: int) -> None:
        while not stop.is_set():
            reports[reconciler].append(rebuild({"couponId": coupon_id}))

    reconcilers = [threading.Thread(target=reconcile_repeatedly, args=(reconciler,)) for reconciler in reports]
    for thread in reconcilers:
        thread.start()
    result = run_load(
        lua_reserver, redis_url, LoadPlan(coupon_id, users=1_000, clicks=2, first_user_id=1_001, processes=2, threads=4)
    )
    stop.set()
    for thread in reconcilers:
        thread.join()
    final = rebuild({"couponId": coupon_id})

    # A run that found the state lock held past its second leaves the coupon to the next run (a
    # pause of a loaded machine may stretch the other's hold); no run fails otherwise.
    failures = [f["error"] for runs in reports.values() for r in runs for f in r["failed"]]
    assert all(error.startswith("LockUnavailableError") for error in failures), failures
    assert all(any(r["reconciled"] for r in runs) for runs in reports.values())  # both ran, at once
    assert final["failed"] == []
    assert result.requests == 2_000
    assert max(result.successes.values()) == 1  # I2: every user clicked twice, at once
    reserved = {int(u) for u in redis_client.zrange(reserved_key(coupon_id), 1, "+inf", byscore=True)}
    assert len(reserved) <= 500  # I1, whatever order the reconciles and the reserves ran in
    missing = set(range(1, 101)) - reserved  # issued users a full set could not take back
    assert len(missing) == final["reconciled"][0]["deferred"]
    assert len(reserved) == 500
    assert result.outcomes["SUCCESS"] + 100 - len(missing) == 500


def builder(event: Any) -> Any:
    return builder_app.handler(event, InProcessContext())


@pytest.mark.parametrize(
    ("function", "event", "message"),
    [
        (rebuild, {"couponId": "1"}, "couponId"),
        (rebuild, {"couponId": 0}, "greater than or equal to 1"),
        (rebuild, {"couponId": []}, "at least 1 item"),
        (rebuild, {"couponId": [1, "x"]}, "couponId"),
        (rebuild, {"couponId": 1, "extra": True}, "Extra inputs are not permitted"),
        (rebuild, {"source": "aws.events"}, "expected a scheduled EventBridge event"),
        (rebuild, "rebuild everything", "expected a scheduled EventBridge event"),
        (rebuild, {"stateMissing": 1}, "expected a scheduled EventBridge event"),  # the builder's, not the rebuild's
        (builder, SCHEDULE_EVENT, 'expected {"stateMissing": N}'),  # the schedule's, never the builder's
        (builder, {"couponId": 1}, 'expected {"stateMissing": N}'),
        (builder, {"stateMissing": "1"}, "stateMissing"),
        (builder, {"stateMissing": 1, "extra": True}, "Extra inputs are not permitted"),
    ],
    ids=lambda value: value.__name__ if callable(value) else None,
)
def test_bad_events_are_refused_and_change_nothing(pipeline, redis_client, function, event, message):
    """Each function of the rebuild code takes its own events only: no public request, which can
    reach the builder alone, runs a reconcile, and the schedule never runs as a build."""
    coupon_id = create_coupon(10)
    issue(coupon_id, 1)
    before = {key: redis_client.dump(key) for key in redis_client.keys("coupon*")}

    with pytest.raises(InvalidRebuildEventError, match=message):
        function(event)

    assert {key: redis_client.dump(key) for key in redis_client.keys("coupon*")} == before


def test_unknown_coupons_are_refused_before_anything_changes(pipeline, redis_client, store):
    coupon_id = create_coupon(10)
    issue(coupon_id, 1)
    redis_client.zrem(reserved_key(coupon_id), "1")

    with pytest.raises(UnknownCouponsError, match=r"no coupon with id 424242, 525252"):
        rebuild({"couponId": [coupon_id, 424242, 525252]})

    assert store.reserved_count(coupon_id) == 0
