"""Redis brought to a change the database already holds (a cancel, an operator's change), for
one coupon, under its state lock: a reconcile that read the database before the change cannot
write the old state back after it. If Redis or the lock is unavailable the change stands in the
database, and the next reconcile brings Redis to it (a copy may stay unsold until then, never
oversold).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from coupon_core.domain.ports import CouponCatalog, CouponLocks, Reservations
from coupon_core.domain.reconcile import STATE_LOCK_LEASE_S, STATE_LOCK_WAIT_S
from coupon_core.errors import LockUnavailableError, StateUnavailableError

logger = logging.getLogger(__name__)


class StateSync:
    def __init__(self, catalog: CouponCatalog, store: Reservations, locks: CouponLocks, *, retention_ms: int) -> None:
        self._catalog = catalog
        self._store = store
        self._locks = locks
        self._retention_ms = retention_ms

    def rewrite(self, coupon_id: int, change: str) -> None:
        """The coupon's meta (total, window, closed) and keys' expiry, as the database has them now:
        an absolute write, so a repeat or a race with another change writes the same."""

        def rewrite_meta() -> None:
            if (coupon := self._catalog.find(coupon_id)) is not None:
                self._store.update_state(coupon.state(self._retention_ms))

        self._under_lock(coupon_id, change, rewrite_meta)

    def release(self, coupon_id: int, user_id: int, reserved_at: int, change: str) -> None:
        """The user's reservation, fenced by its time."""
        self._under_lock(coupon_id, change, lambda: self._store.release(coupon_id, user_id, reserved_at))

    def _under_lock(self, coupon_id: int, change: str, step: Callable[[], object]) -> None:
        try:
            with self._locks.state(coupon_id, lease_s=STATE_LOCK_LEASE_S, wait_s=STATE_LOCK_WAIT_S):
                step()
        except (StateUnavailableError, LockUnavailableError):
            logger.warning(f"{change} recorded; Redis follows at the next reconcile", extra={"couponId": coupon_id})
