"""What operators do to a coupon: create it, rename it, move its window, close and reopen it
(the kill switch), top up its stock; and the pages of coupons and of a coupon's issues they read.

Every change is made in the database first (the truth), then in Redis from the database as it
now is (``StateSync``, as a cancel does). A creation puts the coupon in the registry of coupons
before the database commits it, and builds its state after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # in annotations only: the intake imports this module with its providers
    from coupon_core.domain.coupons import Coupon, CouponChanges, NewCoupon
    from coupon_core.domain.ports import CouponCatalog
    from coupon_core.domain.state_sync import StateSync


class OnDemandReconcile(Protocol):
    """Reconcile one coupon now, and its report (``coupon_core.adapters.lambda_reconcile``)."""

    def reconcile(self, coupon_id: int) -> dict[str, Any]: ...


class CouponAdmin:
    def __init__(self, catalog: CouponCatalog, sync: StateSync) -> None:
        self._catalog = catalog
        self._sync = sync

    def create(self, new: NewCoupon) -> Coupon:
        """The coupon created, registered and its state built. Raises ``StateUnavailableError``
        (nothing created) when Redis cannot take its entry in the registry."""
        coupon = self._catalog.create(new, before_commit=self._sync.register)
        self._sync.prepare(coupon)
        return coupon

    def change(self, coupon_id: int, changes: CouponChanges) -> Coupon | None:
        """The coupon as changed, or None if it does not exist. Raises ``InvalidChangeError``
        (nothing changed) for a window that would end before it starts or a stock past the maximum."""
        coupon = self._catalog.change(coupon_id, changes)
        if coupon is not None:
            self._sync.rewrite(coupon_id, "coupon change")
        return coupon
