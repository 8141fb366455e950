"""Coupon reservations in Redis: the Lua scripts, the reservation store and the coupon locks.

The Redis half of the contracts in docs/design.md, and the adapter of the domain's ports on it:
``ReservationStore`` implements ``Reservations`` and ``RedisCouponLocks`` implements the locks
(``coupon_core.domain.ports``). The values it exchanges (``IssueOutcome``, ``CouponState``, ...)
and its errors are the domain's (``coupon_core.domain``, ``coupon_core.errors``); redis-py's
errors never leave it (``store.redis_unavailable``).

    scripts/*.lua   the Lua scripts (reserve, release, install, reconcile, ...), one round trip each
    scripts.py      the scripts loaded from the package and registered on a client
    store.py        the Redis client of the reservation path (redis-py's errors mapped), and the
                    reservation store: reserve, release and reconcile a coupon's state; the one
                    table of each script's codes to the domain's outcomes
    holders.py      the holders' filter: who took a copy of a coupon, for the intake's memory of
                    its sold-out refusals (a Bloom filter the scripts keep beside the set)
    registry.py     the registry of coupons: every coupon id and when its state expires, so that
                    the intake tells a missing state from an id that names nothing; the claims
                    that let one caller a second have a missing state built
    lock.py         per-coupon locks: owner token, lease, safe release, a wait that does not spin
    limit.py        the processing limit: database writes per second, in one Redis bucket
    keys.py         the key names
"""

from lua_redis.lock import RedisCouponLocks, held_lock
from lua_redis.registry import RedisCouponRegistry
from lua_redis.store import MAX_CONNECTION_AGE_S, ReservationStore, connect

__all__ = [
    "MAX_CONNECTION_AGE_S",
    "RedisCouponLocks",
    "RedisCouponRegistry",
    "ReservationStore",
    "connect",
    "held_lock",
]
