"""A dead-lettered request and the state rebuilds, on the real servers, in the orderings that put
its released holder back in Redis.

The mapping commits the worker group's offsets past a record on its own schedule, so a record it
dead-lettered stays after the committed offsets, *in flight* to a reconcile's eyes, for a while
after the DLQ handler recorded its failure and released its reservation. A reconcile (or the
intake's rebuild of a lost state) in that while must not count it as a holder: that user would
hold a copy in Redis and nothing in the database, be answered DUPLICATE, and near a sale's end
the copy would go unsold.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis

from coupon_core.adapters.postgres.catalog import SqlCouponCatalog
from local.testkit.stores import WholeStore
from tests.services.intake_support import after_a_second, create_coupon, first_request_after_the_loss, issue
from tests.services.pipeline_support import Pipeline, rebuild
from tests.services.test_rebuild import assert_invariants, database_state, issue_once_rebuilt

USER = 7


def dead_lettered(pipeline: Pipeline, store: WholeStore, coupon_id: int) -> str:
    """A SUCCESS whose record the mapping gave up on, settled by the DLQ handler, before the
    group's offsets moved past it; its request id."""
    answer = issue(coupon_id, USER)
    assert answer.body["status"] == "SUCCESS", answer
    assert pipeline.exhaust_retries(commit=False) == 1
    assert pipeline.run_dlq_handler() == 1
    assert store.reservation_time(coupon_id, USER) is None  # recorded and released
    return str(answer.body["requestId"])


def the_user_may_take_the_coupon_again(pipeline, store, redis_client, migrated_engine, coupon_id, failed) -> None:
    assert store.reservation_time(coupon_id, USER) is None
    after_a_second()  # the intake remembers the user's first success until then
    again = issue(coupon_id, USER)
    assert again.body["status"] == "SUCCESS", again  # not DUPLICATE
    pipeline.drain()
    rebuild({"couponId": coupon_id})
    assert failed in database_state(migrated_engine, coupon_id)[4]  # the first request: failed, released
    assert_invariants(migrated_engine, redis_client, coupon_id, {again.body["requestId"]: USER})


@pytest.mark.parametrize("rebuilt_by", ["the reconcile", "the intake after a loss"])
def test_a_state_rebuilt_before_the_group_moves_past_a_dead_lettered_record_leaves_its_holder_out(
    pipeline, store, redis_client, migrated_engine, rebuilt_by
):
    """The mapping dead-letters the record; the DLQ handler records the failure and releases;
    the state is rebuilt while the record is still after the committed offsets; then the commit."""
    coupon_id = create_coupon(5)
    failed = dead_lettered(pipeline, store, coupon_id)

    if rebuilt_by == "the reconcile":
        report = rebuild({"couponId": coupon_id})
        assert report["reconciled"][0]["added"] == 0, report
    else:
        redis_client.flushall()
        first_request_after_the_loss(redis_client, coupon_id, 8)
        assert issue_once_rebuilt(coupon_id, 8).body["status"] == "SUCCESS"  # its retry rebuilds
    pipeline.commit()

    assert store.reservation_time(coupon_id, USER) is None
    if rebuilt_by == "the intake after a loss":
        pipeline.drain()  # user 8's request
    the_user_may_take_the_coupon_again(pipeline, store, redis_client, migrated_engine, coupon_id, failed)


def blocked_on_a_lock(client: redis.Redis) -> bool:
    """Whether a client waits on a lock's signal list (python-redis-lock's BLPOP)."""
    return any("b" in entry["flags"] for entry in client.client_list())


def test_a_release_after_a_reconciles_snapshot_waits_until_its_changes_are_made(
    pipeline, store, redis_client, migrated_engine, monkeypatch
):
    """The reconcile reads the database before the DLQ handler records the failure, and the
    handler's release comes before the reconcile writes Redis: the release waits for the
    reconcile's state lock, so the reconcile cannot put back what the release removed."""
    coupon_id = create_coupon(5)
    answer = issue(coupon_id, USER)
    assert pipeline.exhaust_retries(commit=False) == 1
    handler = threading.Thread(target=pipeline.run_dlq_handler)
    snapshot_of = SqlCouponCatalog.issued_users

    def dead_letter_settled_after_the_snapshot(catalog: SqlCouponCatalog, coupon: int) -> Any:
        snapshot = snapshot_of(catalog, coupon)
        handler.start()  # the handler records the failure, then releases or waits for the lock
        wait_until(lambda: not handler.is_alive() or blocked_on_a_lock(redis_client))
        return snapshot

    monkeypatch.setattr(SqlCouponCatalog, "issued_users", dead_letter_settled_after_the_snapshot)
    rebuild({"couponId": coupon_id})
    monkeypatch.setattr(SqlCouponCatalog, "issued_users", snapshot_of)
    handler.join()
    pipeline.commit()

    assert str(answer.body["requestId"]) in database_state(migrated_engine, coupon_id)[4]
    the_user_may_take_the_coupon_again(
        pipeline, store, redis_client, migrated_engine, coupon_id, str(answer.body["requestId"])
    )


def wait_until(condition: Callable[[], bool], timeout_s: float = 60) -> None:
    """Until ``condition`` holds (each side of the race it waits for ends by itself)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "neither side of the race came"
        time.sleep(0.01)
