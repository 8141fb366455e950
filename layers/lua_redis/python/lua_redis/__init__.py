"""Coupon reservations in Redis: the Lua scripts, the reservation store and the coupon locks.

The Redis half of the contracts in docs/design.md. Everything a caller needs is importable from
here, except the worker's write limit (``lua_redis.limit``), which the intake's cold start has no
use for; the domain sees this layer through its ports (``coupon_core.domain.ports``).
"""

from lua_redis.client import connect
from lua_redis.errors import InvalidInputError, LockUnavailableError, LuaRedisError, StateUnavailableError
from lua_redis.ids import MAX_BIGINT, validate_id, validate_millis
from lua_redis.lock import CouponLocks, held_lock
from lua_redis.models import CouponState, ReconcileChanges, ReleaseOutcome, Reservation, ReserveOutcome
from lua_redis.store import ReservationStore

__all__ = [
    "MAX_BIGINT",
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
