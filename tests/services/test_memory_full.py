"""A full Valkey under ``noeviction`` (the policy the stack sets): reserve is refused as
unavailable, nothing is half written, and the intake answers 503 with Retry-After."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis

from coupon_core.domain.reservations import IssueOutcome
from coupon_core.errors import StateUnavailableError
from local.testkit.stores import WholeStore
from lua_redis.keys import reserved_key
from tests.services.intake_support import call, create_coupon
from tests.services.support import open_coupon


@pytest.fixture
def noeviction(redis_client: redis.Redis) -> Iterator[redis.Redis]:
    policy = redis_client.config_get("maxmemory-policy")["maxmemory-policy"]
    redis_client.config_set("maxmemory-policy", "noeviction")
    # About 1 MB of ballast, so that the cap below stays above the server's floor; in small values,
    # because one big argument leaves a query buffer of its size that the server frees later.
    redis_client.mset({f"ballast:{n}": "x" * 10_000 for n in range(100)})
    yield redis_client
    redis_client.config_set("maxmemory", 0)
    redis_client.config_set("maxmemory-policy", policy)


def settled_memory(client: redis.Redis) -> int:
    """Used memory once nothing is being freed: Valkey 8 flushes lazily (FLUSHALL frees in the
    background), so a figure read too early can fall by megabytes a moment later."""
    readings: list[int] = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        memory = client.info("memory")
        readings = [*readings[-2:], int(memory["used_memory"])] if memory["lazyfree_pending_objects"] == 0 else []
        if len(readings) == 3 and max(readings) - min(readings) < 50_000:
            return readings[-1]
        time.sleep(0.1)
    raise AssertionError(f"Valkey's memory did not settle: {readings}")


def fill_up(client: redis.Redis) -> None:
    """Memory capped below what is used now: the next write that needs memory fails."""
    client.config_set("maxmemory", settled_memory(client) - 500_000)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        client.set("probe", "x")


def test_a_full_cache_refuses_the_reservation_as_unavailable_and_writes_nothing(store: WholeStore, noeviction):
    store.reconcile(open_coupon(total=10), {}, release_before=None)
    assert store.reserve(1, 10).outcome is IssueOutcome.SUCCESS
    before = noeviction.zrange(reserved_key(1), 0, -1, withscores=True)
    fill_up(noeviction)
    with pytest.raises(StateUnavailableError, match=r"Redis unavailable: .*OutOfMemoryError"):
        store.reserve(1, 11)
    assert noeviction.zrange(reserved_key(1), 0, -1, withscores=True) == before
    noeviction.config_set("maxmemory", 0)
    assert store.reserve(1, 11).outcome is IssueOutcome.SUCCESS  # and it recovers once memory is back


def test_the_intake_answers_a_full_cache_with_503_and_retry_after(pipeline, noeviction):
    coupon = create_coupon(5)
    assert call("POST", "/coupon-issues", {"couponId": coupon, "userId": 1}).status_code == 202
    fill_up(noeviction)
    answer = call("POST", "/coupon-issues", {"couponId": coupon, "userId": 2})
    assert (answer.status_code, answer.body["status"], answer.headers["Retry-After"]) == (503, "UNAVAILABLE", "1")
    noeviction.config_set("maxmemory", 0)
    assert call("POST", "/coupon-issues", {"couponId": coupon, "userId": 2}).status_code == 202
