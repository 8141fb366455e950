"""A coupon's sale as a shop's page reads it (the domain's ``availability.SaleReader``): one
read-only script for the state, and for a coupon without one, the registry of coupons in one
command more (the claim route's cost for such an id: ``IssueStore.lookup`` in ``issue_store.py``,
without its claim on a build, which only the claim route asks for)."""

from __future__ import annotations

import redis

from coupon_core.domain.availability import NoSale, Sale, Unread
from coupon_core.domain.ids import validate_id
from lua_redis import keys
from lua_redis.client import redis_unavailable, register


class RedisSaleReader:
    """Reads sales on ``client``; raises ``StateUnavailableError`` when Redis cannot be reached."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._read = register(client, "availability")

    @redis_unavailable
    def read(self, coupon_id: int) -> Sale | Unread:
        validate_id("couponId", coupon_id)
        state_keys = [keys.meta_key(coupon_id), keys.reserved_key(coupon_id), keys.requests_key(coupon_id)]
        now, *sale = (int(value) for value in self._read(keys=state_keys))
        if sale:
            total, starts_at, ends_at, closed, taken = sale
            return Sale(now, total, starts_at, ends_at, closed == 1, taken)
        expires_at, complete = self._client.hmget(keys.REGISTRY_KEY, [str(coupon_id), "complete"])
        if expires_at is not None:  # a coupon: its state expired, or was lost and the claim route rebuilds it
            return Unread(NoSale.ENDED if now >= int(expires_at) else NoSale.UNAVAILABLE, now)
        # no such id in a complete registry; in one still loading, an id it cannot rule out yet
        return Unread(NoSale.COUPON_NOT_FOUND if complete is not None else NoSale.UNAVAILABLE, now)
