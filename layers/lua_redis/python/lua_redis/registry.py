"""The registry of coupons in Redis, as its writers keep it (the domain's ``CouponRegistry`` port):
one hash of every coupon id to when its state expires (docs/design.md, Redis state). The intake's
lookup, and its claims on building a missing state, are ``IssueStore``'s (``issue_store.py``).

Reserve finds a state missing for three kinds of id: a coupon whose state was lost or never
built (it must be built, by the builder function, which reads the database), a coupon whose
state has expired long after its window (ENDED), and an id that names nothing. The registry
tells them apart with one round trip, and lets one caller of the fleet a second ask for a
build, so that neither a script sending random ids nor a thousand containers asking for one
lost coupon reach the function that holds the database.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import redis

from coupon_core.domain.ids import validate_id, validate_millis
from lua_redis import keys
from lua_redis.client import redis_unavailable, register
from lua_redis.store import chunked, flattened


class RedisCouponRegistry:
    """The registry on ``client``; ``chunk_size`` bounds the coupons one command carries."""

    def __init__(self, client: redis.Redis, *, chunk_size: int = 1000) -> None:
        self._client = client
        self._fill = register(client, "registry_fill")
        self._chunk_size = validate_id("chunk_size", chunk_size)

    @redis_unavailable
    def register(self, expiries: Mapping[int, int]) -> None:
        for chunk in chunked(_validated(expiries), self._chunk_size):
            self._client.hset(keys.REGISTRY_KEY, mapping=dict(chunk))

    @redis_unavailable
    def begin_load(self) -> str | None:
        if self._client.hexists(keys.REGISTRY_KEY, "complete"):
            return None
        token = uuid.uuid4().hex
        self._client.hset(keys.REGISTRY_KEY, "loading", token)
        return token

    @redis_unavailable
    def finish_load(self, token: str, expiries: Mapping[int, int]) -> bool:
        chunks = list(chunked(_validated(expiries), self._chunk_size)) or [[]]
        for chunk in chunks[:-1]:
            self._fill(keys=[keys.REGISTRY_KEY], args=["", *flattened(chunk)])
        return bool(self._fill(keys=[keys.REGISTRY_KEY], args=[token, *flattened(chunks[-1])]))


def _validated(expiries: Mapping[int, int]) -> list[tuple[int, int]]:
    return [(validate_id("couponId", coupon), validate_millis("expiresAt", at)) for coupon, at in expiries.items()]
