"""The processing limit: database writes per second across every worker, in one Redis bucket."""

from __future__ import annotations

from dataclasses import dataclass

import redis

from coupon_core.errors import InvalidInputError
from lua_redis.client import redis_unavailable, register

WRITE_LIMIT_KEY = "limit:db-writes"  # the token bucket of database writes: one for the environment


@dataclass(frozen=True)
class WriteRate:
    per_second: float
    burst: int

    def __post_init__(self) -> None:
        if not self.per_second > 0 or self.burst < 1:
            raise InvalidInputError(f"a write rate needs per_second > 0 and burst >= 1, got {self}")


class RedisWriteLimit:
    """``take(writes, max_wait_s)``: the seconds to wait before writing (the writes are then
    counted), or None when the wait would pass ``max_wait_s`` (nothing counted)."""

    def __init__(self, client: redis.Redis, rate: WriteRate) -> None:
        self._take_writes = register(client, "take_writes")
        self._rate = rate

    @redis_unavailable
    def take(self, writes: int, max_wait_s: float) -> float | None:
        if writes < 1:
            raise InvalidInputError(f"writes must be at least 1, got {writes}")
        wait_ms = int(
            self._take_writes(
                keys=[WRITE_LIMIT_KEY],
                args=[self._rate.per_second, self._rate.burst, writes, max(0, int(max_wait_s * 1000))],
            )
        )
        return None if wait_ms < 0 else wait_ms / 1000
