"""Reconciling Redis with the database and Kafka, coupon by coupon: the domain of the rebuild function.

Who holds a copy of a coupon is known without Redis: the users the database has issued, and
the users whose record is in Kafka but not yet processed by the worker (the records after the
worker group's committed offsets, the *in-flight* tail). A run reads, in this order:

1. the Redis server's clock, ``now``: every reservation time comes from it;
2. the in-flight tail: the committed offsets, then the ends of the partitions;
3. for each coupon, under its state lock, the database snapshot of its issued users and of the
   requests it has settled: a dead-lettered record may still be in the tail (the mapping commits
   past it on its own schedule), and a tail read before the worker issued a record may be
   applied after its copy was canceled; either holds only what the database says.

Then ``ReservationStore.reconcile`` adds every holder missing from Redis (never past the total)
and releases the *stray* members, who hold no copy, reserved before ``now - skew``. The order
is what makes that safe. A request reserved at ``t < now - skew`` had finished its produce
before ``now`` (``skew`` exceeds every produce's bound), so its record, if it was written at
all, lies before the ends read in step 2: either in the tail, or before the committed offsets
and therefore in the database read in step 3. A member that old in neither never reached
Kafka (its intake died, or publish and release both failed) and is released, with no traffic
on the coupon needed. Younger stray members may still be on their way and are left for the
next run. If the tail cannot be read, nothing is released and only the database's users are
added back.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from coupon_core.domain.in_flight import InFlight
from coupon_core.domain.ports import CouponCatalog, CouponLocks, InFlightReader, Reservations
from coupon_core.errors import ReadBackError, StateLostError, UnknownCouponsError

logger = logging.getLogger(__name__)


STATE_LOCK_LEASE_S = 120
STATE_LOCK_WAIT_S = 10


@dataclass(frozen=True)
class CouponReconciled:
    couponId: int  # noqa: N815 - the report is returned as JSON
    installed: bool
    inFlight: int  # noqa: N815 - holders whose record is not persisted yet
    added: int
    released: int
    deferred: int
    stray: int  # members who hold no copy: released now if old enough, else later
    reserved: int
    durationMs: float  # noqa: N815


@dataclass
class ReconcileReport:
    """What one reconcile run did: per coupon, the coupons it could not reconcile, and why the
    in-flight tail could not be read (then nothing was released)."""

    reconciled: list[CouponReconciled] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    inFlightError: str | None = None  # noqa: N815

    def as_dict(self) -> dict[str, Any]:
        return {
            "reconciled": [asdict(r) for r in self.reconciled],
            "failed": self.failed,
            "inFlightError": self.inFlightError,
        }


@dataclass(frozen=True)
class Holders:
    """What Kafka says of who holds a copy, read once per run before any coupon's snapshot (see
    the module's docstring): the records in flight, the server's clock then, and the time before
    which a stray member may be released (None when the tail could not be read, and ``error`` says why)."""

    in_flight: InFlight
    release_before: int | None
    now: int
    error: str | None = None


class Reconciler:
    def __init__(
        self,
        store: Reservations,
        locks: CouponLocks,
        catalog: CouponCatalog,
        in_flight: InFlightReader,
        *,
        retention_ms: int,
        skew_ms: int,
        produce_bound_ms: int,
    ) -> None:
        self._store = store
        self._locks = locks
        self._catalog = catalog
        self._in_flight = in_flight
        self._retention_ms = retention_ms
        self._skew_ms = skew_ms
        self._produce_bound_ms = produce_bound_ms

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
        holders = self.read_holders()
        report = ReconcileReport(inFlightError=holders.error)
        for coupon_id in coupon_ids:
            try:
                reconciled = self.reconcile_coupon(coupon_id, holders)
            except Exception as exc:  # report every failure, whatever it is, and go on
                logger.exception("coupon not reconciled", extra={"couponId": coupon_id})
                report.failed.append({"couponId": coupon_id, "error": f"{type(exc).__name__}: {exc}"})
                continue
            if reconciled is None:
                report.failed.append({"couponId": coupon_id, "error": "the coupon no longer exists"})
            else:
                report.reconciled.append(reconciled)
        return report

    def read_holders(self) -> Holders:
        """A run's first step: Redis' clock, then the in-flight tail."""
        now = self._store.server_time_ms()  # before the tail's ends: see the module's docstring
        try:
            return Holders(self._in_flight.read(), now - self._skew_ms, now)
        except ReadBackError as exc:
            logger.warning("in-flight records unknown: nothing is released this run", extra={"detail": str(exc)})
            return Holders(InFlight({}), None, now, str(exc))

    def reconcile_coupon(self, coupon_id: int, holders: Holders) -> CouponReconciled | None:
        """A run's step for one coupon, under its state lock: the database snapshot, then Redis
        brought to it and to ``holders``; None if the coupon does not exist."""
        started = time.perf_counter()
        with self._locks.state(coupon_id, lease_s=STATE_LOCK_LEASE_S, wait_s=STATE_LOCK_WAIT_S):
            snapshot = self._catalog.issued_users(coupon_id)  # after the committed offsets were read
            if snapshot is None:
                return None
            state = snapshot.coupon.state(self._retention_ms)
            if state.is_open(holders.now) and not self._store.has_state(coupon_id):
                # lost mid-sale: the same wait as a state build's, see state_build.StateInitialiser
                wait_ms = self._store.rebuild_wait_ms(coupon_id, self._produce_bound_ms)
                if wait_ms:
                    raise StateLostError(f"state lost mid-sale; rebuilt once in-flight produces end ({wait_ms} ms)")
            holding, request_ids = holders.in_flight.with_issued(snapshot)
            changes = self._store.reconcile(
                state, holding, release_before=holders.release_before, request_ids=request_ids
            )
        return CouponReconciled(
            couponId=coupon_id,
            installed=changes.installed,
            inFlight=len(holders.in_flight.of(coupon_id)),
            added=changes.added,
            released=changes.released,
            deferred=changes.deferred,
            stray=changes.stray,
            reserved=changes.reserved,
            durationMs=round((time.perf_counter() - started) * 1000, 3),
        )
