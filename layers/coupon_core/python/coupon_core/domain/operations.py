"""What operators do to a coupon: rename it, move its window, close and reopen it (the kill
switch), top up its stock; and the pages of coupons and of a coupon's issues they read.

Every change is made in the database first (the truth), then in Redis under the coupon's state
lock, from the database as it now is (like a cancel: a reconcile that read the database before
the change cannot write the old state back after it). If Redis or the lock is unavailable the
change stands, and the next reconcile brings Redis to it.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from coupon_core.domain.coupons import Coupon, CouponChanges
from coupon_core.domain.issuing import STATE_LOCK_LEASE_S, STATE_LOCK_WAIT_S
from coupon_core.domain.ports import CouponCatalog, CouponLocks, Reservations
from lua_redis import LockUnavailableError, StateUnavailableError

logger = logging.getLogger(__name__)


class OnDemandReconcile(Protocol):
    """Reconcile one coupon now, and its report (``coupon_core.adapters.lambda_rebuild``)."""

    def reconcile(self, coupon_id: int) -> dict[str, Any]: ...


class CouponAdmin:
    def __init__(self, catalog: CouponCatalog, store: Reservations, locks: CouponLocks, *, retention_ms: int) -> None:
        self._catalog = catalog
        self._store = store
        self._locks = locks
        self._retention_ms = retention_ms

    def change(self, coupon_id: int, changes: CouponChanges) -> Coupon | None:
        """The coupon as changed, or None if it does not exist. Raises ``ValueError`` (nothing
        changed) for a window that would end before it starts or a stock past the maximum."""
        coupon = self._catalog.change(coupon_id, changes)
        if coupon is not None:
            self._sync(coupon_id)
        return coupon

    def _sync(self, coupon_id: int) -> None:
        try:
            with self._locks.state(coupon_id, lease_s=STATE_LOCK_LEASE_S, wait_s=STATE_LOCK_WAIT_S):
                coupon = self._catalog.find(coupon_id)
                if coupon is not None:
                    self._store.update_state(coupon.state(self._retention_ms))
        except (StateUnavailableError, LockUnavailableError):
            logger.warning("coupon changed; Redis follows at the next reconcile", extra={"couponId": coupon_id})
