"""The holders' filter on real Valkey: the scripts keep it (reserve, add_holders, install), Python
reads it with the same hash, and reserve says which refusals stand for every caller."""

from __future__ import annotations

from dataclasses import replace

import pytest

from coupon_core.domain.reservations import IssueOutcome, Reservation
from local.testkit.redis_monitor import issue_requests_load, monitored
from lua_redis.issue_store import NO_EDGE_MS
from lua_redis.keys import holders_key, idempotency_key, meta_key, reserved_key
from lua_redis.store import build_filter, size_bits
from tests.services.support import HOUR_MS, command_calls, install, open_coupon


def _bytes(redis_client, coupon_id: int) -> bytes:
    """The filter as Redis keeps it, bit by bit (GETBIT, so that no decoding is involved)."""
    size = int(redis_client.hget(meta_key(coupon_id), "holdersBits"))
    pipe = redis_client.pipeline(transaction=False)
    for position in range(size):
        pipe.getbit(holders_key(coupon_id), position)
    bits = pipe.execute()
    return bytes(int("".join(map(str, bits[i : i + 8])), 2) for i in range(0, size, 8))


def timed_reserve(store, user_id: int) -> tuple[Reservation, int]:
    """Coupon 1's answer to ``user_id`` and when Valkey decided it, checked against its clock
    read around the call: a refusal stands from that moment, which no reading of a clock after
    the answer can time exactly."""
    before = store.server_time_ms()
    answer = store.reserve(1, user_id)
    assert answer.decided_at is not None
    assert before <= answer.decided_at <= store.server_time_ms()
    return answer, answer.decided_at


def test_the_scripts_set_the_bits_python_computes(store, redis_client):
    install(store, total=50)
    store.reserve(1, 7)
    store.reserve(1, 8, idempotency_key="key-of-8")

    bits = size_bits(50)
    assert _bytes(redis_client, 1) == build_filter(["7", "8", "key-of-8"], bits)
    assert redis_client.hget(meta_key(1), "holdersAdded") == "3"


def test_every_holder_is_in_the_filter_the_store_reads_and_few_others(store, redis_client):
    install(store, total=300)
    for user in range(1, 301):
        key = f"k{user}" if user % 2 else ""
        assert store.reserve(1, user, idempotency_key=key).outcome is IssueOutcome.SUCCESS

    refused = store.reserve(1, 10_000)

    assert refused.outcome is IssueOutcome.SOLD_OUT
    assert refused.holders is not None
    assert all(refused.holders.may_hold(user, "") for user in range(1, 301))
    assert all(refused.holders.may_hold(10_000, f"k{user}") for user in range(1, 301, 2))
    strangers = [user for user in range(10_001, 20_001) if refused.holders.may_hold(user, "")]
    assert len(strangers) < 150  # about 0.5 % expected; a wrong hash would be all or nothing


def test_a_sold_out_refusal_stands_until_the_window_ends_with_the_filter(store):
    coupon = open_coupon(total=1, starts_in_ms=-HOUR_MS, lasts_ms=2 * HOUR_MS)
    store.reconcile(coupon, {}, release_before=None)
    store.reserve(1, 7)

    refused, decided_at = timed_reserve(store, 8)

    assert refused.outcome is IssueOutcome.SOLD_OUT
    assert refused.stands_ms == coupon.ends_at - decided_at
    assert refused.holders is not None
    assert refused.holders.may_hold(7, "")


@pytest.mark.parametrize(
    ("coupon", "outcome", "stands"),
    [
        (open_coupon(starts_in_ms=HOUR_MS), IssueOutcome.NOT_OPEN, "until it opens"),
        (open_coupon(starts_in_ms=-2 * HOUR_MS, lasts_ms=HOUR_MS), IssueOutcome.ENDED, NO_EDGE_MS),
    ],
)
def test_a_window_refusal_stands_until_its_edge(store, coupon, outcome, stands):
    store.reconcile(coupon, {}, release_before=None)

    refused, decided_at = timed_reserve(store, 7)

    assert refused.outcome is outcome
    if stands == "until it opens":
        assert refused.stands_ms == coupon.starts_at - decided_at
    else:
        assert refused.stands_ms == stands
    assert refused.holders is None


def test_a_closed_coupons_refusal_stands(store):
    coupon = open_coupon()
    store.reconcile(coupon, {}, release_before=None)
    store.update_state(replace(coupon, closed=True))

    assert store.reserve(1, 7).stands_ms == NO_EDGE_MS


def test_the_filter_is_read_again_only_when_its_version_changes(store, redis_client):
    install(store, total=2)
    store.reserve(1, 1)
    store.reserve(1, 2)
    redis_client.config_resetstat()

    first = store.reserve(1, 3)
    second = store.reserve(1, 4)
    store.release(1, 2, store.reservation_time(1, 2))
    assert store.reserve(1, 5).outcome is IssueOutcome.SUCCESS  # the version moves
    third = store.reserve(1, 6)

    assert command_calls(redis_client).get("get") == 2  # the first SOLD_OUT, and after the add
    assert first.holders is second.holders
    assert third.holders is not None
    assert third.holders is not first.holders
    assert third.holders.may_hold(5, "")


def test_a_filter_lost_alone_is_never_read_half_empty(store, redis_client):
    install(store, total=2)
    store.reserve(1, 1)
    redis_client.delete(holders_key(1))  # evicted alone

    store.reserve(1, 2)  # would have added to an empty filter: drops it instead
    refused = store.reserve(1, 3)

    assert refused.outcome is IssueOutcome.SOLD_OUT
    assert (refused.stands_ms, refused.holders) == (0, None)  # the caller's alone: nothing remembered
    assert not redis_client.exists(holders_key(1))


def test_a_rebuilt_state_has_a_filter_of_its_holders_and_the_keys_still_known(store, redis_client):
    install(store, total=3)
    store.reserve(1, 1, idempotency_key="first")
    store.reserve(1, 2)
    epoch = redis_client.hget(meta_key(1), "holdersEpoch")
    redis_client.delete(reserved_key(1))  # the set lost; the idempotency hash kept

    report = store.reconcile(open_coupon(total=3), {1: 1_000, 2: 2_000, 9: 3_000}, release_before=None)

    assert report.installed
    assert redis_client.hget(meta_key(1), "holdersEpoch") not in (None, epoch)
    assert redis_client.hgetall(idempotency_key(1)) == {"first": "1"}
    expected = build_filter(["1", "2", "9", "first"], size_bits(3))
    assert _bytes(redis_client, 1) == expected
    refused = store.reserve(1, 4)
    assert refused.holders is not None
    assert refused.holders.may_hold(4, "first")


def test_holders_added_back_by_a_reconcile_go_into_the_filter(store, redis_client):
    install(store, total=3)
    store.reserve(1, 1)

    store.reconcile(open_coupon(total=3), {1: 5, 50: 6, 51: 7}, release_before=None)

    refused = store.reserve(1, 4)
    assert refused.outcome is IssueOutcome.SOLD_OUT
    assert refused.holders is not None
    assert all(refused.holders.may_hold(user, "") for user in (1, 50, 51))
    assert redis_client.hget(meta_key(1), "holdersAdded") == "3"


def test_a_binary_filter_reaches_the_store_byte_for_byte(store, redis_client):
    """redis-py's NEVER_DECODE (the store reads the filter through it; redis is pinned): a
    filter's bytes are not UTF-8, and a decoding client would fail or change them."""
    install(store, total=40)
    for user in range(1, 41):
        store.reserve(1, user)

    refused = store.reserve(1, 99)

    data = _bytes(redis_client, 1)
    assert any(byte >= 0x80 for byte in data)
    assert refused.holders is not None
    assert refused.holders.data == data


def test_the_load_of_issue_requests_is_counted_from_monitor_apart_from_other_clients(store, redis_client):
    """``issue_requests_load``, which the demo's report and the benchmark print: a SUCCESS (the
    script and its 11 calls), a SOLD_OUT that reads the filter (6 calls, and a GET), and another
    client's command, not counted."""
    install(store, total=1)

    seen = monitored(redis_client, lambda: (store.reserve(1, 1), store.reserve(1, 2), redis_client.set("x", "y")))

    assert issue_requests_load(seen, 1) == (3, 12 + 7 + 1)
    assert issue_requests_load(seen, 2) == (0, 0)
