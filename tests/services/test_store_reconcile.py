"""ReconcileStore.reconcile against real Valkey: the Redis half of a reconcile, without the database."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from coupon_core.domain.reservations import IssueOutcome
from coupon_core.errors import InvalidInputError
from local.testkit.stores import WholeStore
from lua_redis.keys import meta_key, reserved_key
from tests.services.support import now_ms, open_coupon


def reserve_all(store: WholeStore, coupon_id: int, users: range) -> dict[int, int]:
    reservations = {user: store.reserve(coupon_id, user) for user in users}
    assert all(r.outcome is IssueOutcome.SUCCESS for r in reservations.values())
    return {user: r.reserved_at for user, r in reservations.items()}


def test_missing_state_is_rebuilt_from_the_holders(store, redis_client):
    coupon = open_coupon(total=10)
    issued = {100: 1_000, 101: 2_000, 102: 3_000}

    report = store.reconcile(coupon, issued, release_before=None)

    assert report.installed
    assert (report.added, report.released, report.reserved) == (3, 0, 3)
    assert {
        int(u): int(s) for u, s in redis_client.zrange(reserved_key(1), 1, "+inf", byscore=True, withscores=True)
    } == issued
    meta = redis_client.hgetall(meta_key(1))
    assert meta.pop("holdersEpoch")  # a new filter, of these holders (tests/services/test_holders_filter.py)
    assert meta == {
        "total": "10",
        "startsAt": str(coupon.starts_at),
        "endsAt": str(coupon.ends_at),
        "expiresAt": str(coupon.expires_at),
        "closed": "0",
        "holdersAdded": "0",
        "holdersBits": "1024",
    }
    assert store.reserve(1, 100).outcome is IssueOutcome.DUPLICATE
    assert redis_client.keys("coupon:{1}:staging:*") == []


def test_holders_missing_from_redis_are_added_back(store, redis_client):
    coupon = open_coupon(total=10)
    store.reconcile(coupon, {}, release_before=None)
    reserve_all(store, 1, range(1, 4))

    report = store.reconcile(coupon, {1: 5, 50: 6, 51: 7}, release_before=None)

    assert not report.installed
    assert (report.added, report.released, report.deferred, report.reserved) == (2, 0, 0, 5)
    assert store.reserve(1, 50).outcome is IssueOutcome.DUPLICATE


def test_stray_reservations_older_than_the_cutoff_are_released_newer_ones_kept(store):
    coupon = open_coupon(total=10)
    store.reconcile(coupon, {}, release_before=None)
    old = reserve_all(store, 1, range(1, 3))  # user 1 holds a copy, user 2 is stray
    cutoff = max(old.values()) + 1
    while now_ms() <= cutoff:
        time.sleep(0.001)
    reserve_all(store, 1, range(3, 4))  # user 3 newer than the cutoff: maybe still on its way to Kafka

    report = store.reconcile(coupon, {1: old[1]}, release_before=cutoff)

    assert (report.released, report.added, report.stray, report.reserved) == (1, 0, 2, 2)
    assert store.reservation_time(1, 1) == old[1]
    assert store.reservation_time(1, 2) is None
    assert store.reservation_time(1, 3) is not None


def test_without_a_cutoff_nothing_is_released(store):
    coupon = open_coupon(total=10)
    store.reconcile(coupon, {}, release_before=None)
    reserve_all(store, 1, range(1, 4))

    report = store.reconcile(coupon, {}, release_before=None)

    assert (report.released, report.reserved) == (0, 3)


def test_reconcile_twice_changes_nothing_the_second_time(store, redis_client):
    coupon = open_coupon(total=10)
    store.reconcile(coupon, {}, release_before=None)
    times = reserve_all(store, 1, range(1, 6))
    issued = {1: times[1], 2: times[2], 90: 1}
    cutoff = max(times.values()) + 1

    first = store.reconcile(coupon, issued, release_before=cutoff)
    state = redis_client.zrange(reserved_key(1), 1, "+inf", byscore=True, withscores=True)
    second = store.reconcile(coupon, issued, release_before=cutoff)

    assert (first.added, first.released) == (1, 3)
    assert (second.added, second.released, second.reserved) == (0, 0, 3)
    assert redis_client.zrange(reserved_key(1), 1, "+inf", byscore=True, withscores=True) == state


def test_reconcile_never_pushes_redis_past_the_total(store):
    coupon = open_coupon(total=3)
    store.reconcile(coupon, {}, release_before=None)
    reserve_all(store, 1, range(1, 4))  # full, all in flight

    report = store.reconcile(coupon, {7: 1, 8: 2}, release_before=None)

    assert (report.added, report.deferred, report.reserved) == (0, 2, 3)


def test_a_surviving_reservation_set_is_merged_not_replaced(store, redis_client):
    coupon = open_coupon(total=10)
    store.reconcile(coupon, {}, release_before=None)
    times = reserve_all(store, 1, range(1, 3))
    redis_client.delete(meta_key(1))  # the meta hash lost alone (eviction, operator)

    report = store.reconcile(coupon, {5: 1}, release_before=None)

    assert not report.installed
    assert (report.added, report.reserved) == (1, 3)
    assert store.reservation_time(1, 1) == times[1]


def test_reconcile_handles_100_000_users_in_bounded_calls(redis_client):
    store = WholeStore(redis_client, chunk_size=1_000)
    coupon = open_coupon(total=150_000)
    issued = {user: 1_000 + user for user in range(1, 100_001)}

    installed = store.reconcile(coupon, issued, release_before=None)
    for user in range(1, 1_001):  # lost from Redis
        redis_client.zrem(reserved_key(1), user)
    redis_client.zadd(reserved_key(1), {str(user): 500 for user in range(200_001, 202_001)})  # leaked
    redis_client.slowlog_reset()
    redis_client.config_set("slowlog-log-slower-than", 50_000)
    repaired = store.reconcile(coupon, issued, release_before=10_000_000)

    assert (installed.installed, installed.reserved) == (True, 100_000)
    assert (repaired.added, repaired.released, repaired.reserved) == (1_000, 2_000, 100_000)
    assert redis_client.slowlog_get() == []  # no single call took 50 ms


@pytest.mark.parametrize(
    ("issued", "message"),
    [({0: 1}, "userId"), ({"1": 1}, "userId"), ({1: -1}, "reservedAt"), ({1: 1.5}, "reservedAt")],
)
def test_bad_holders_are_refused_before_redis(store, redis_client, issued, message):
    with pytest.raises(InvalidInputError, match=message):
        store.reconcile(open_coupon(), issued, release_before=None)
    assert redis_client.keys("*") == []


def test_bad_coupon_states_are_refused():
    with pytest.raises(InvalidInputError, match="endsAt must be after startsAt"):
        open_coupon(lasts_ms=0)
    with pytest.raises(InvalidInputError, match="totalQuantity"):
        open_coupon(total=0)


def test_update_state_rewrites_the_meta_of_a_state_and_never_creates_one(store, redis_client):
    coupon = open_coupon(total=10)
    assert store.update_state(coupon) is False  # no state: nothing half-created
    assert redis_client.keys("*") == []
    store.reconcile(coupon, {7: coupon.starts_at + 1}, release_before=None)
    closed = replace(coupon, total=12, closed=True, expires_at=coupon.expires_at + 60_000)
    assert store.update_state(closed) is True
    assert redis_client.hmget(meta_key(1), "total", "closed") == ["12", "1"]
    assert store.reserve(1, 8).outcome is IssueOutcome.CLOSED
    assert redis_client.pexpiretime(reserved_key(1)) == closed.expires_at
    assert store.reserved_count(1) == 1  # the reservations are left as they are
