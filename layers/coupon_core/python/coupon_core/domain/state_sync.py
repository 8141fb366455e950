"""Redis brought to a change the database already holds (a new coupon, a cancel, an operator's
change), for one coupon, under its state lock: a reconcile that read the database before the
change cannot write the old state back after it. If Redis or the lock is unavailable the change
stands in the database, and the next reconcile brings Redis to it (a copy may stay unsold until
then, never oversold). A new coupon is the exception: it is put in the registry of coupons before
the database commits it, or not created (:meth:`StateSync.register`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from coupon_core.backend_errors import LockUnavailableError
from coupon_core.domain.ports import (
    STATE_LOCK_LEASE_S,
    STATE_LOCK_WAIT_S,
    CouponCatalog,
    CouponLocks,
    CouponRegistry,
    Reservations,
)
from coupon_core.errors import StateUnavailableError

if TYPE_CHECKING:
    from coupon_core.domain.coupons import Coupon

logger = logging.getLogger(__name__)


class StateSync:
    def __init__(
        self,
        catalog: CouponCatalog,
        store: Reservations,
        locks: CouponLocks,
        registry: CouponRegistry,
        *,
        retention_ms: int,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._locks = locks
        self._registry = registry
        self._retention_ms = retention_ms

    def register(self, coupon: Coupon) -> None:
        """Put a coupon being created in the registry, before the database commits it; raises
        ``StateUnavailableError`` (then nothing is created): a complete registry that missed a
        coupon would answer its requests COUPON_NOT_FOUND."""
        self._registry.register({coupon.coupon_id: coupon.state(self._retention_ms).expires_at})

    def prepare(self, coupon: Coupon) -> None:
        """Build a new coupon's state, empty, so that a missing state in its window means a loss.

        If Redis is unreachable the coupon exists all the same: its first request in the window
        has the state built, after the wait for a lost one.
        """
        try:
            self._store.install(coupon.state(self._retention_ms), [])
        except StateUnavailableError:
            logger.warning("new coupon's state not built; its first request will", extra={"couponId": coupon.coupon_id})

    def rewrite(self, coupon_id: int, change: str) -> None:
        """The coupon's meta (total, window, closed), its keys' expiry and its entry in the
        registry, as the database has them now: absolute writes, so a repeat or a race with
        another change writes the same."""

        def rewrite_meta() -> None:
            if (coupon := self._catalog.find(coupon_id)) is not None:
                state = coupon.state(self._retention_ms)
                self._store.update_state(state)
                self._registry.register({coupon_id: state.expires_at})

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
