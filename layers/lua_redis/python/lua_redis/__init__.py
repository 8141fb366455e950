"""Coupon reservations in Redis: Lua scripts, the reservation store and the coupon lock.

See DESIGN section 4. Everything a caller needs is importable from here.
"""

from lua_redis.client import connect
from lua_redis.errors import InvalidInputError, LockUnavailableError, StateUnavailableError
from lua_redis.ids import MAX_BIGINT, validate_id, validate_millis
from lua_redis.keys import issue_lock_name, state_lock_name
from lua_redis.lock import held_lock
from lua_redis.models import CouponState, ReconcileReport, ReleaseOutcome, Reservation, ReserveOutcome
from lua_redis.store import ReservationStore

__all__ = [
    "MAX_BIGINT",
    "CouponState",
    "InvalidInputError",
    "LockUnavailableError",
    "ReconcileReport",
    "ReleaseOutcome",
    "Reservation",
    "ReservationStore",
    "ReserveOutcome",
    "StateUnavailableError",
    "connect",
    "held_lock",
    "issue_lock_name",
    "state_lock_name",
    "validate_id",
    "validate_millis",
]
