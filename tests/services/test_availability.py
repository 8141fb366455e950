"""A sale as a page reads it, on real Valkey: the script's numbers, the state reserve.lua would
answer, a coupon without a state told apart by the registry (and no build claimed), and one
round trip per coupon per second however many pages poll."""

from __future__ import annotations

import dataclasses

import pytest

from coupon_core.domain.availability import AvailabilityService, NoSale, Sale, SaleState, Unread
from coupon_core.domain.reservations import IssueOutcome
from lua_redis.availability import RedisSaleReader
from lua_redis.keys import requests_key, reserved_key
from lua_redis.registry import RedisCouponRegistry
from tests.services.support import HOUR_MS, command_calls, install, now_ms, open_coupon


def one_read(times: int) -> dict[str, int]:
    """The calls of ``times`` reads: one EVALSHA each, and the script's own commands in it."""
    return {"evalsha": times, "time": times, "hmget": times, "zscore": times, "hexists": times, "zcard": times}


def test_the_read_is_redis_count_and_window_at_its_time_in_one_round_trip(redis_client, store):
    coupon = open_coupon(7, total=5)
    store.reconcile(coupon, {}, release_before=None)
    for user in (11, 12, 13):
        store.reserve(7, user)
    reader = RedisSaleReader(redis_client)
    reader.read(7)  # the script loaded (a first EVALSHA is answered NOSCRIPT)
    redis_client.config_resetstat()
    before = now_ms()

    read = reader.read(7)

    assert isinstance(read, Sale)
    assert (read.total, read.starts_at, read.ends_at, read.closed, read.taken, read.left) == (
        5, coupon.starts_at, coupon.ends_at, False, 3, 2
    )  # fmt: skip
    assert before - 5 <= read.read_at <= now_ms() + 5  # Redis' TIME (the same host's clock)
    assert command_calls(redis_client) == one_read(1)


@pytest.mark.parametrize(
    ("changes", "taken"),
    [
        ({}, 0),
        ({}, 3),  # sold out
        ({"starts_in_ms": HOUR_MS}, 0),
        ({"starts_in_ms": -3 * HOUR_MS}, 0),  # ended an hour ago
        ({"starts_in_ms": -3 * HOUR_MS}, 3),  # sold out, then ended
        ({"closed": True}, 1),
        ({"closed": True, "starts_in_ms": HOUR_MS}, 0),
    ],
)
def test_the_state_is_what_reserve_answers_a_new_user(redis_client, store, changes, taken):
    closed = changes.pop("closed", False)
    coupon = dataclasses.replace(open_coupon(3, total=3, **changes), closed=False)
    store.reconcile(coupon, dict.fromkeys(range(1, taken + 1), coupon.starts_at + 1), release_before=None)
    store.update_state(dataclasses.replace(coupon, closed=closed))

    read = RedisSaleReader(redis_client).read(3)
    assert isinstance(read, Sale)
    outcome = store.reserve(3, 99).outcome

    expected = SaleState.OPEN if outcome is IssueOutcome.SUCCESS else SaleState(outcome.value)
    assert read.state_at(read.read_at) is expected


def test_a_coupon_without_a_state_is_told_apart_by_the_registry_without_claiming_a_build(redis_client, store):
    registry = RedisCouponRegistry(redis_client)
    reader = RedisSaleReader(redis_client)
    token = registry.begin_load()
    assert token is not None
    assert reader.read(9).why is NoSale.UNAVAILABLE  # an incomplete registry cannot rule 9 out
    registry.finish_load(token, {1: now_ms() + HOUR_MS, 2: now_ms() - 1, 3: now_ms() + HOUR_MS})
    for coupon in (1, 3):
        install(store, coupon_id=coupon)
    redis_client.delete(reserved_key(1))  # its state lost, as reserve.lua would see it ...
    redis_client.delete(requests_key(3))  # ... or by its other sentinel: the claim route rebuilds it

    reads = {coupon: reader.read(coupon) for coupon in (1, 2, 3, 9)}

    assert {coupon: read.why for coupon, read in reads.items() if isinstance(read, Unread)} == {
        1: NoSale.UNAVAILABLE, 2: NoSale.ENDED, 3: NoSale.UNAVAILABLE, 9: NoSale.COUPON_NOT_FOUND
    }  # fmt: skip
    assert [store.reserve(coupon, 5).outcome for coupon in (1, 3)] == [IssueOutcome.STATE_MISSING] * 2
    assert redis_client.keys("coupons:{registry}:build:*") == []


def test_a_thousand_polls_in_a_second_are_one_read(redis_client, store):
    install(store, coupon_id=4)
    seconds = [0.0]
    reader = RedisSaleReader(redis_client)
    reader.read(4)  # the script loaded
    service = AvailabilityService(reader, clock=lambda: seconds[0])
    redis_client.config_resetstat()

    for poll in range(1000):
        seconds[0] = poll / 1000
        service.availability(4)
    first_second = command_calls(redis_client)
    seconds[0] = 1.0
    service.availability(4)

    assert first_second == one_read(1)
    assert command_calls(redis_client) == one_read(2)


def test_a_made_up_id_costs_what_it_costs_the_claim_route_and_again_nothing_within_the_second(redis_client):
    """Two round trips for a new id (the script, then the registry), as reserve and its lookup
    are for the claim route; the same id again within the second, none."""
    registry = RedisCouponRegistry(redis_client)
    token = registry.begin_load()
    assert token is not None
    registry.finish_load(token, {1: now_ms() + HOUR_MS})  # complete: an id outside it names nothing
    reader = RedisSaleReader(redis_client)
    reader.read(1)  # the script loaded
    seconds = [0.0]
    service = AvailabilityService(reader, clock=lambda: seconds[0])
    redis_client.config_resetstat()

    for made_up in range(1000, 1010):
        assert service.availability(made_up) is None
    first = command_calls(redis_client)
    seconds[0] = 0.5
    for made_up in range(1000, 1010):
        assert service.availability(made_up) is None

    assert (first["evalsha"], first["hmget"] - first["evalsha"]) == (10, 10)  # the script's HMGET apart
    assert command_calls(redis_client) == first
