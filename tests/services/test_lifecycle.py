"""An issued copy's life on the real services: used once, idempotent with a key, expired on time."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from sqlalchemy import text

from coupon_core.adapters.postgres.lifecycle import SqlIssueLifecycle
from coupon_core.domain.lifecycle import expire_all_due
from tests.services.intake_support import call, create_coupon, issue


def issued(pipeline, total: int = 5, users: tuple[int, ...] = (1,), **validity: object) -> int:
    coupon_id = create_coupon(total, **validity)
    for user in users:
        assert issue(coupon_id, user).status_code == 202
    pipeline.run_worker()
    return coupon_id


def use(coupon_id: int, user_id: int, key: str | None = None):
    headers = {"Idempotency-Key": key} if key else None
    return call("POST", f"/coupons/{coupon_id}/issues/{user_id}/use", headers=headers)


def events(engine, coupon_id: int, kind: str) -> int:
    with engine.connect() as connection:
        return connection.execute(
            text("SELECT count(*) FROM outbox WHERE coupon_id = :c AND event_type = :t"), {"c": coupon_id, "t": kind}
        ).scalar_one()


def status(coupon_id: int, user_id: int) -> str:
    return call("GET", f"/coupons/{coupon_id}/issues/{user_id}").body["status"]


def test_a_copy_is_used_once_and_a_second_use_is_refused(pipeline, migrated_engine):
    coupon_id = issued(pipeline)
    first = use(coupon_id, 1)
    second = use(coupon_id, 1)
    assert (first.status_code, first.body["status"]) == (200, "USED")
    assert (second.status_code, second.body["status"]) == (409, "ALREADY_USED")
    assert status(coupon_id, 1) == "USED"
    assert events(migrated_engine, coupon_id, "COUPON_USED") == 1


def test_a_use_repeated_with_its_idempotency_key_answers_the_same(pipeline, migrated_engine):
    coupon_id = issued(pipeline)
    first, again, other = use(coupon_id, 1, "k-1"), use(coupon_id, 1, "k-1"), use(coupon_id, 1, "k-2")
    assert (first.status_code, again.status_code, other.status_code) == (200, 200, 409)
    assert again.body == first.body
    assert other.body["status"] == "ALREADY_USED"
    assert events(migrated_engine, coupon_id, "COUPON_USED") == 1


def test_uses_at_once_use_the_copy_once(pipeline, migrated_engine):
    coupon_id = issued(pipeline)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: use(coupon_id, 1), range(8)))
    assert sorted(a.status_code for a in answers) == [200] + [409] * 7
    assert events(migrated_engine, coupon_id, "COUPON_USED") == 1


def test_what_cannot_be_used_says_why_and_changes_nothing(pipeline, migrated_engine):
    coupon_id = issued(pipeline)
    assert issue(coupon_id, 2).status_code == 202  # reserved, the worker has not run
    pending, never, unknown, malformed = use(coupon_id, 2), use(coupon_id, 3), use(999_999, 1), use(coupon_id, 0)
    assert (pending.status_code, pending.body["status"]) == (409, "PENDING")
    assert (never.status_code, never.body["status"]) == (409, "NOT_ISSUED")
    assert (unknown.status_code, unknown.body["status"]) == (404, "COUPON_NOT_FOUND")
    assert (malformed.status_code, malformed.body["status"]) == (422, "INVALID_REQUEST")
    assert status(coupon_id, 1) == "ISSUED"
    assert events(migrated_engine, coupon_id, "COUPON_USED") == 0


def test_a_copy_expires_at_the_earlier_of_its_validities(pipeline, migrated_engine):
    soon = datetime.now(UTC) + timedelta(days=1)
    by_date = issued(pipeline, validUntil=soon.isoformat(), validDays=3)
    by_days = issued(pipeline, validDays=3)
    with migrated_engine.connect() as connection:
        expiries = dict(
            connection.execute(
                text("SELECT coupon_id, expires_at - issued_at FROM coupon_issues WHERE coupon_id IN (:a, :b)"),
                {"a": by_date, "b": by_days},
            ).all()
        )
    assert abs(expiries[by_date] - timedelta(days=1)) < timedelta(minutes=1)
    assert expiries[by_days] == timedelta(days=3)


def test_an_expired_copy_reads_expired_at_once_and_the_sweep_records_it_with_its_event(pipeline, migrated_engine):
    coupon_id = issued(pipeline, users=(1, 2), validUntil=(datetime.now(UTC) + timedelta(seconds=2)).isoformat())
    assert use(coupon_id, 2).status_code == 200  # a used copy does not expire
    time.sleep(2.5)
    assert status(coupon_id, 1) == "EXPIRED"  # before the sweep
    assert (use(coupon_id, 1).status_code, use(coupon_id, 1).body["status"]) == (409, "EXPIRED")
    assert expire_all_due(SqlIssueLifecycle(migrated_engine), batch=1, max_batches=10) == 1
    assert expire_all_due(SqlIssueLifecycle(migrated_engine), batch=1, max_batches=10) == 0
    assert (status(coupon_id, 1), status(coupon_id, 2)) == ("EXPIRED", "USED")
    assert events(migrated_engine, coupon_id, "COUPON_EXPIRED") == 1
