"""Reconciling Redis with the database, coupon by coupon: the domain of the rebuild function.

For each coupon, under its state lock: read the watermark first, then the database snapshot,
then let ``ReservationStore.reconcile`` write the meta hash, add issued users missing from Redis
(never past the total), release leaked reservations older than the watermark minus the skew
margin, or rebuild a missing state from scratch. The order matters: a watermark read after the
snapshot could cover a record persisted after it, and its user would look leaked.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from coupon_core.domain.ports import CouponCatalog, CouponLocks, Reservations
from coupon_core.errors import UnknownCouponsError
from lua_redis import ReconcileChanges

logger = logging.getLogger(__name__)

STATE_LOCK_LEASE_S = 120
STATE_LOCK_WAIT_S = 10


@dataclass(frozen=True)
class CouponReconciled:
    couponId: int  # noqa: N815 - the report is returned as JSON
    installed: bool
    added: int
    released: int
    deferred: int
    reserved: int
    durationMs: float  # noqa: N815


@dataclass
class ReconcileReport:
    """What one reconcile run did: per coupon, and the coupons it could not reconcile."""

    reconciled: list[CouponReconciled] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"reconciled": [asdict(r) for r in self.reconciled], "failed": self.failed}


class Reconciler:
    def __init__(
        self,
        store: Reservations,
        locks: CouponLocks,
        catalog: CouponCatalog,
        *,
        retention_ms: int,
        skew_ms: int,
    ) -> None:
        self._store = store
        self._locks = locks
        self._catalog = catalog
        self._retention_ms = retention_ms
        self._skew_ms = skew_ms

    def coupons_near_their_window(self, lookback_ms: int, lookahead_ms: int) -> list[int]:
        """Coupons open now, ended less than ``lookback_ms`` ago, or opening within ``lookahead_ms``."""
        now = datetime.now(UTC)
        return self._catalog.coupon_ids_in_window(
            now - timedelta(milliseconds=lookback_ms), now + timedelta(milliseconds=lookahead_ms)
        )

    def check_known(self, coupon_ids: list[int]) -> None:
        unknown = self._catalog.missing(coupon_ids)
        if unknown:
            raise UnknownCouponsError(f"no coupon with id {', '.join(map(str, unknown))}; nothing was reconciled")

    def reconcile(self, coupon_ids: list[int]) -> ReconcileReport:
        """Reconcile each coupon; one that fails is reported and does not stop the others."""
        report = ReconcileReport()
        for coupon_id in coupon_ids:
            started = time.perf_counter()
            try:
                changes = self._reconcile(coupon_id)
            except Exception as exc:  # report every failure, whatever it is, and go on
                logger.exception("coupon not reconciled", extra={"couponId": coupon_id})
                report.failed.append({"couponId": coupon_id, "error": f"{type(exc).__name__}: {exc}"})
                continue
            if changes is None:
                report.failed.append({"couponId": coupon_id, "error": "the coupon no longer exists"})
                continue
            report.reconciled.append(
                CouponReconciled(
                    couponId=coupon_id,
                    installed=changes.installed,
                    added=changes.added,
                    released=changes.released,
                    deferred=changes.deferred,
                    reserved=changes.reserved,
                    durationMs=round((time.perf_counter() - started) * 1000, 3),
                )
            )
        return report

    def _reconcile(self, coupon_id: int) -> ReconcileChanges | None:
        with self._locks.state(coupon_id, lease_s=STATE_LOCK_LEASE_S, wait_s=STATE_LOCK_WAIT_S):
            watermark = self._store.watermark(coupon_id)  # before the snapshot, see the module's docstring
            snapshot = self._catalog.issued_users(coupon_id)
            if snapshot is None:
                return None
            return self._store.reconcile(
                snapshot.coupon.state(self._retention_ms),
                snapshot.reserved_at,
                watermark=watermark,
                skew_ms=self._skew_ms,
            )
