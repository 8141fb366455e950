"""Coupon reservations in Redis: the Lua scripts, the reservation store and the coupon locks.

The Redis half of the contracts in docs/design.md. Everything a caller needs is importable from
here, except the worker's write limit (``lua_redis.limit``), which the intake's cold start has no
use for; the domain sees this layer through its ports (``coupon_core.domain.ports``).

    scripts/*.lua   the Lua scripts (reserve, release, install, reconcile, ...), one round trip each
    scripts.py      the scripts loaded from the package and registered on a client
    store.py        the reservation store: reserve, release and reconcile a coupon's state
    lock.py         per-coupon locks: owner token, lease, safe release, a wait that does not spin
    limit.py        the processing limit: database writes per second, in one Redis bucket
    models.py       the values exchanged with the store (outcomes, CouponState, ...)
    keys.py         the key names
    ids.py          validation of the integers that reach Redis
    client.py       a Redis client suited to the reservation path
    errors.py       every exception of this layer, and Redis errors mapped to them

``driver_errors.py``, beside this package in the same layer, holds the error mapping both
layers use (``Reraise``) without importing redis-py.

The values, errors and id checks load with the package; what talks to Redis (the client, the
store, the locks) loads on first use (PEP 562), so that the domain, which names the values and
errors, imports no driver.
"""

import importlib
from typing import TYPE_CHECKING, Any

from lua_redis.errors import InvalidInputError, LockUnavailableError, LuaRedisError, StateUnavailableError
from lua_redis.ids import MAX_BIGINT, validate_id, validate_millis
from lua_redis.models import CouponState, ReconcileChanges, ReleaseOutcome, Reservation, ReserveOutcome

if TYPE_CHECKING:
    from lua_redis.client import MAX_CONNECTION_AGE_S, connect
    from lua_redis.lock import CouponLocks, held_lock
    from lua_redis.store import ReservationStore

_ON_FIRST_USE = {
    "MAX_CONNECTION_AGE_S": "lua_redis.client",
    "connect": "lua_redis.client",
    "CouponLocks": "lua_redis.lock",
    "held_lock": "lua_redis.lock",
    "ReservationStore": "lua_redis.store",
}


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        return getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    raise AttributeError(f"module 'lua_redis' has no attribute {name!r}")


__all__ = [
    "MAX_BIGINT",
    "MAX_CONNECTION_AGE_S",
    "CouponLocks",
    "CouponState",
    "InvalidInputError",
    "LockUnavailableError",
    "LuaRedisError",
    "ReconcileChanges",
    "ReleaseOutcome",
    "Reservation",
    "ReservationStore",
    "ReserveOutcome",
    "StateUnavailableError",
    "connect",
    "held_lock",
    "validate_id",
    "validate_millis",
]
