"""An issued copy's life on the real services: used once, idempotent with a key, expired on time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from kafka import KafkaProducer
from sqlalchemy import text

from coupon_core.adapters.postgres.lifecycle import SqlIssueLifecycle
from coupon_core.domain.lifecycle import expire_all_due
from coupon_core.domain.records import IssueRecord, to_millis
from local.testkit.kafka_topics import client_options
from local.testkit.stores import WholeStore
from lua_redis.keys import meta_key
from tests.services.intake_support import after_a_second, call, create_coupon, issue
from tests.services.pipeline_support import rebuild


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
    coupon_id = issued(pipeline, users=(1, 2), validDays=1)
    assert use(coupon_id, 2).status_code == 200  # a used copy does not expire
    assert status(coupon_id, 1) == "ISSUED"
    with migrated_engine.begin() as connection:  # time passes both copies' validity, the used one's too
        connection.execute(
            text("UPDATE coupon_issues SET expires_at = now() - interval '1 second' WHERE coupon_id = :c"),
            {"c": coupon_id},
        )
    assert status(coupon_id, 1) == "EXPIRED"  # before the sweep
    assert (use(coupon_id, 1).status_code, use(coupon_id, 1).body["status"]) == (409, "EXPIRED")
    assert expire_all_due(SqlIssueLifecycle(migrated_engine), batch=1, max_batches=10) == 1
    assert expire_all_due(SqlIssueLifecycle(migrated_engine), batch=1, max_batches=10) == 0
    assert (status(coupon_id, 1), status(coupon_id, 2)) == ("EXPIRED", "USED")
    assert events(migrated_engine, coupon_id, "COUPON_EXPIRED") == 1


def cancel(coupon_id: int, user_id: int, key: str | None = None):
    headers = {"Idempotency-Key": key} if key else None
    return call("POST", f"/coupons/{coupon_id}/issues/{user_id}/cancel", headers=headers)


def redis_view(redis_client, coupon_id: int) -> tuple[int, int]:
    """(Redis's total, reservations held) of the coupon."""
    return int(redis_client.hget(meta_key(coupon_id), "total")), WholeStore(redis_client).reserved_count(coupon_id)


def remaining(engine, coupon_id: int) -> int:
    with engine.connect() as connection:
        return connection.execute(
            text("SELECT remaining_quantity FROM coupons WHERE id = :c"), {"c": coupon_id}
        ).scalar_one()


def test_a_cancel_returns_the_copy_to_stock_and_keeps_its_user_from_a_second_take(
    pipeline, migrated_engine, redis_client
):
    coupon_id = issued(pipeline, total=2, users=(1, 2))
    assert issue(coupon_id, 3).body["status"] == "SOLD_OUT"
    canceled = cancel(coupon_id, 1)
    assert (canceled.status_code, canceled.body["status"]) == (200, "CANCELED")
    assert remaining(migrated_engine, coupon_id) == 1
    assert redis_view(redis_client, coupon_id) == (3, 2)  # user 1's reservation stays, and blocks
    assert issue(coupon_id, 1).body["status"] == "DUPLICATE"
    after_a_second()  # user 3's SOLD_OUT is remembered until then
    assert issue(coupon_id, 3).body["status"] == "SUCCESS"
    assert issue(coupon_id, 4).body["status"] == "SOLD_OUT"
    pipeline.run_worker()
    assert (status(coupon_id, 1), status(coupon_id, 3)) == ("CANCELED", "ISSUED")
    assert remaining(migrated_engine, coupon_id) == 0
    assert events(migrated_engine, coupon_id, "COUPON_CANCELED") == 1
    # a reconcile rebuilds the same state from the database
    rebuild({"couponId": coupon_id})
    assert redis_view(redis_client, coupon_id) == (3, 3)


def test_where_a_second_take_is_allowed_the_reservation_is_released_and_the_user_takes_it_again(
    pipeline, migrated_engine, redis_client
):
    coupon_id = issued(pipeline, total=1, users=(1,), reissueAfterCancel=True)
    with migrated_engine.connect() as connection:
        request_id, reserved_at = connection.execute(
            text("SELECT request_id, reserved_at FROM coupon_issues WHERE coupon_id = :c"), {"c": coupon_id}
        ).one()
    assert cancel(coupon_id, 1).status_code == 200
    assert redis_view(redis_client, coupon_id) == (1, 0)
    # a replay of the canceled request stays canceled
    original = IssueRecord(coupon_id, 1, request_id, to_millis(reserved_at))
    producer = KafkaProducer(**client_options(pipeline.bootstrap_servers))
    producer.send(pipeline.topic, key=original.key, value=original.encode()).get(timeout=10)
    producer.close()
    pipeline.run_worker()
    assert status(coupon_id, 1) == "CANCELED"
    assert remaining(migrated_engine, coupon_id) == 1
    after_a_second()  # the intake remembers user 1's first success until then
    again = issue(coupon_id, 1)
    assert again.body["status"] == "SUCCESS"
    pipeline.run_worker()
    assert status(coupon_id, 1) == "ISSUED"
    assert remaining(migrated_engine, coupon_id) == 0
    with migrated_engine.connect() as connection:
        assert connection.execute(
            text("SELECT count(*), min(request_id::text) FROM coupon_issues WHERE coupon_id = :c"), {"c": coupon_id}
        ).one() == (1, again.body["requestId"])


def test_a_cancel_repeated_with_its_key_answers_the_same_and_what_cannot_be_canceled_says_why(pipeline):
    coupon_id = issued(pipeline, users=(1, 2))
    first, again, other = cancel(coupon_id, 1, "c-1"), cancel(coupon_id, 1, "c-1"), cancel(coupon_id, 1)
    assert (first.status_code, again.status_code, again.body) == (200, 200, first.body)
    assert (other.status_code, other.body["status"]) == (409, "ALREADY_CANCELED")
    assert use(coupon_id, 1).body["status"] == "CANCELED"
    assert use(coupon_id, 2).status_code == 200
    assert (cancel(coupon_id, 2).status_code, cancel(coupon_id, 2).body["status"]) == (409, "USED")
    assert cancel(coupon_id, 3).body["status"] == "NOT_ISSUED"


def test_cancels_at_once_return_one_copy(pipeline, migrated_engine, redis_client):
    coupon_id = issued(pipeline, total=3, users=(1, 2))
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: cancel(coupon_id, 1), range(8)))
    assert sorted(a.status_code for a in answers) == [200] + [409] * 7
    assert remaining(migrated_engine, coupon_id) == 2
    assert redis_view(redis_client, coupon_id) == (4, 2)
    assert events(migrated_engine, coupon_id, "COUPON_CANCELED") == 1


def test_cancels_racing_reconciles_leave_redis_as_the_database_says(pipeline, migrated_engine, redis_client):
    users = tuple(range(1, 11))
    coupon_id = issued(pipeline, total=10, users=users)
    with ThreadPoolExecutor(6) as pool:
        work = [pool.submit(cancel, coupon_id, user) for user in users[:5]]
        work += [pool.submit(rebuild, {"couponId": coupon_id}) for _ in range(5)]
        for future in work:
            future.result()
    rebuild({"couponId": coupon_id})  # what the database says, whatever the interleaving was
    settled = redis_view(redis_client, coupon_id)
    assert settled == (15, 10)
    assert remaining(migrated_engine, coupon_id) == 5
    assert [issue(coupon_id, user).body["status"] for user in (11, 12, 13, 14, 15, 16)] == ["SUCCESS"] * 5 + [
        "SOLD_OUT"
    ]
