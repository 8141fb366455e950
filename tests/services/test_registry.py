"""The registry of coupons on real Valkey: what the intake's lookup answers for a coupon whose state is missing,
the one claim a second on a build, and a load that a loss of Redis midway leaves incomplete."""

from __future__ import annotations

import time

from coupon_core.domain.reservations import MissingState
from lua_redis.issue_store import IssueStore
from lua_redis.keys import build_claim_key, registry_key
from lua_redis.registry import RedisCouponRegistry
from tests.services.support import HOUR_MS, now_ms

CLAIM_MS = 1000


def complete(registry: RedisCouponRegistry, expiries: dict[int, int]) -> None:
    token = registry.begin_load()
    assert token is not None
    assert registry.finish_load(token, expiries)


def test_a_complete_registry_tells_an_unknown_id_and_an_expired_coupon_without_a_claim(redis_client):
    registry = RedisCouponRegistry(redis_client)
    complete(registry, {1: now_ms() + HOUR_MS, 2: now_ms() - 1})

    assert IssueStore(redis_client).lookup(3, CLAIM_MS) is MissingState.COUPON_NOT_FOUND
    assert IssueStore(redis_client).lookup(2, CLAIM_MS) is MissingState.ENDED
    assert redis_client.keys("coupons:{registry}:build:*") == []


def test_one_caller_a_claim_has_a_live_coupon_built_and_the_others_wait(redis_client):
    registry = RedisCouponRegistry(redis_client)
    complete(registry, {1: now_ms() + HOUR_MS})

    answers = [IssueStore(redis_client).lookup(1, 200) for _ in range(5)]
    time.sleep(0.25)
    after_the_claim = IssueStore(redis_client).lookup(1, 200)

    assert answers == [MissingState.BUILD] + [MissingState.BUILDING] * 4
    assert after_the_claim is MissingState.BUILD


def test_an_incomplete_registry_rules_out_no_id_but_still_lets_one_caller_a_claim_ask(redis_client):
    """After a loss of Redis an unknown id may be a coupon created before it: it is built."""
    registry = RedisCouponRegistry(redis_client)
    registry.register({1: now_ms() + HOUR_MS})  # a create wrote its entry; no load has run

    assert [IssueStore(redis_client).lookup(7, CLAIM_MS) for _ in range(2)] == [
        MissingState.BUILD,
        MissingState.BUILDING,
    ]
    assert 0 < redis_client.pttl(build_claim_key(7)) <= CLAIM_MS


def test_a_load_adds_what_is_missing_and_keeps_what_a_writer_put(redis_client):
    registry = RedisCouponRegistry(redis_client, chunk_size=2)
    token = registry.begin_load()
    assert token is not None
    registry.register({2: 222})  # a change written while the load read the database

    assert registry.finish_load(token, {1: 111, 2: 999, 3: 333, 4: 444, 5: 555})
    assert registry.begin_load() is None  # complete: nothing to load
    entries = redis_client.hgetall(registry_key())
    assert {key: value for key, value in entries.items() if key.isdigit()} == {
        "1": "111", "2": "222", "3": "333", "4": "444", "5": "555"
    }  # fmt: skip


def test_a_load_that_redis_lost_midway_does_not_complete_the_registry(redis_client):
    """A coupon created between the loss and the load's read of the database might be missing."""
    registry = RedisCouponRegistry(redis_client)
    token = registry.begin_load()
    assert token is not None
    redis_client.flushall()

    assert not registry.finish_load(token, {1: now_ms() + HOUR_MS})
    assert IssueStore(redis_client).lookup(9, CLAIM_MS) is MissingState.BUILD  # an unknown id is not ruled out


def test_an_empty_database_completes_an_empty_registry(redis_client):
    registry = RedisCouponRegistry(redis_client)
    complete(registry, {})
    assert IssueStore(redis_client).lookup(1, CLAIM_MS) is MissingState.COUPON_NOT_FOUND
