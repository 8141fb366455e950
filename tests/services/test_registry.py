"""The registry of coupons on real Valkey, beyond the contract both its implementations keep
(``test_port_contracts.py``): the claim is a key with its lease, answered lookups leave none, a
load is written in chunks, and a load that a loss of Redis midway cut short leaves it incomplete."""

from __future__ import annotations

from coupon_core.domain.reservations import MissingState
from lua_redis.issue_store import IssueStore
from lua_redis.keys import REGISTRY_KEY, build_claim_key
from lua_redis.registry import RedisCouponRegistry
from tests.services.support import HOUR_MS, now_ms

CLAIM_MS = 60_000  # outlasts any pause between the lookup and the PTTL read


def test_a_claim_is_a_key_with_its_lease_and_an_answered_lookup_leaves_none(redis_client):
    registry = RedisCouponRegistry(redis_client)
    token = registry.begin_load()
    assert token is not None
    assert registry.finish_load(token, {1: now_ms() + HOUR_MS, 2: now_ms() - 1})

    assert [IssueStore(redis_client).lookup(coupon, CLAIM_MS) for coupon in (3, 2)] == [
        MissingState.COUPON_NOT_FOUND,
        MissingState.ENDED,
    ]
    assert redis_client.keys("coupons:{registry}:build:*") == []
    assert IssueStore(redis_client).lookup(1, CLAIM_MS) is MissingState.BUILD
    assert CLAIM_MS - 10_000 < redis_client.pttl(build_claim_key(1)) <= CLAIM_MS


def test_a_load_in_chunks_writes_every_entry(redis_client):
    registry = RedisCouponRegistry(redis_client, chunk_size=2)
    token = registry.begin_load()
    assert token is not None
    registry.register({2: 222})  # a change written while the load read the database

    assert registry.finish_load(token, {1: 111, 2: 999, 3: 333, 4: 444, 5: 555})
    entries = redis_client.hgetall(REGISTRY_KEY)
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
