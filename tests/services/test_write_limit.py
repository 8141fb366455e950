"""The processing limit on a real Valkey: the bucket's arithmetic, refusals, and many takers."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from coupon_core.errors import InvalidInputError
from lua_redis.limit import RedisWriteLimit, WriteRate

SLACK_S = 0.05  # the server's clock moves on between calls; waits only ever shrink with it


def test_the_burst_goes_at_once_then_each_write_waits_its_turn(redis_client):
    """The sixth write waits 0.1 s, the tenth 0.5 s, less the time the calls took."""
    limit = RedisWriteLimit(redis_client, WriteRate(per_second=10, burst=5))
    started = time.monotonic()
    waits = [limit.take(1, max_wait_s=10) for _ in range(10)]
    elapsed = time.monotonic() - started
    assert waits[:5] == [0, 0, 0, 0, 0]
    for turn, wait in enumerate(waits[5:], start=1):
        assert wait is not None
        assert turn / 10 - elapsed - SLACK_S <= wait <= turn / 10


def test_a_wait_longer_than_the_caller_accepts_takes_nothing(redis_client):
    limit = RedisWriteLimit(redis_client, WriteRate(per_second=10, burst=5))
    assert limit.take(100, max_wait_s=1) is None  # 9.5 s of debt: refused
    assert limit.take(5, max_wait_s=1) == 0  # the burst is still whole


def test_writers_together_are_held_to_the_rate(redis_client):
    """Eight writers take 200 writes as fast as they can: whatever their interleaving, the last
    admitted write is (200 - burst) / rate after the first, less the time the calls took."""
    limit = RedisWriteLimit(redis_client, WriteRate(per_second=100, burst=10))
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        waits = list(pool.map(lambda _: limit.take(1, max_wait_s=60), range(200)))
    elapsed = time.monotonic() - started
    assert None not in waits
    assert max(w for w in waits if w is not None) >= (200 - 10) / 100 - elapsed - SLACK_S
    assert sorted(waits)[:10] == [0] * 10  # the burst went first


def test_malformed_limits_are_refused_before_redis_is_touched(redis_client):
    with pytest.raises(InvalidInputError, match="per_second > 0 and burst >= 1"):
        WriteRate(per_second=0, burst=1)
    with pytest.raises(InvalidInputError, match="writes must be at least 1"):
        RedisWriteLimit(redis_client, WriteRate(per_second=1, burst=1)).take(0, max_wait_s=1)
    assert redis_client.keys("limit:*") == []
