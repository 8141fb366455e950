"""Reconciling Redis with the database and Kafka, coupon by coupon: the domain of the rebuild function.

One job under one name: a coupon's Redis state made to agree with who holds its copies, whether
a run of the scheduler or an operator asks for it (:meth:`Reconciler.reconcile`), or reserve found
the state missing and the intake waits for it (:meth:`Reconciler.build`). Every one of them
holds the coupon's state lock, with the one lease and wait below, and writes the coupon's entry
in the registry of coupons; each first makes sure the registry holds every coupon
(:meth:`Reconciler.complete_registry`), so that after a loss of Redis the intake soon tells an id
that names nothing without asking for a build again.

Who holds a copy of a coupon is known without Redis: the users the database has issued, and
the users whose record is in Kafka but not yet processed by the worker (the records after the
worker group's committed offsets, the *in-flight* tail). A run reads, in this order:

1. the Redis server's clock, ``now``: every reservation time comes from it;
2. the in-flight tail: the committed offsets, then the ends of the partitions;
3. for each coupon, under its state lock, the database snapshot of its issued users and of the
   requests it has settled: a dead-lettered record may still be in the tail (the mapping commits
   past it on its own schedule), and a tail read before the worker issued a record may be
   applied after its copy was canceled; either holds only what the database says.

Then ``ReconcileStore.reconcile`` adds every holder missing from Redis (never past the total)
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
from typing import TYPE_CHECKING, Any, Protocol

from coupon_core.backend_errors import ReadBackError, StateLostError, UnknownCouponsError
from coupon_core.domain.in_flight import InFlight, InFlightReader
from coupon_core.domain.ports import (
    STATE_LOCK_LEASE_S,
    STATE_LOCK_WAIT_S,
    CouponCatalog,
    CouponLocks,
    CouponRegistry,
    Reservations,
)
from coupon_core.domain.reservations import MissingState

if TYPE_CHECKING:  # in annotations only
    from collections.abc import Mapping

    from coupon_core.domain.coupons import CouponState, ReconcileChanges

logger = logging.getLogger(__name__)


class ReconcilingReservations(Reservations, Protocol):
    """A coupon's reservations with the reconcile's repairs (``lua_redis.reconcile.ReconcileStore``)."""

    def rebuild_wait_ms(self, coupon_id: int, wait_ms: int) -> int: ...

    def reconcile(
        self,
        state: CouponState,
        holders: Mapping[int, int],
        *,
        release_before: int | None,
        request_ids: Mapping[int, str] | None = None,
    ) -> ReconcileChanges: ...


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
    """Reconciles coupons' Redis state with their holders: runs, and a state reserve found missing.

    ``in_flight`` reads the records in flight for a run; ``in_flight_for_a_request`` for a
    missing state, with a shorter bound, since an intake waits for the answer.
    """

    def __init__(
        self,
        store: ReconcilingReservations,
        locks: CouponLocks,
        catalog: CouponCatalog,
        in_flight: InFlightReader,
        registry: CouponRegistry,
        *,
        retention_ms: int,
        skew_ms: int,
        produce_bound_ms: int,
        in_flight_for_a_request: InFlightReader | None = None,
    ) -> None:
        self._store = store
        self._locks = locks
        self._catalog = catalog
        self._in_flight = in_flight
        self._in_flight_for_a_request = in_flight_for_a_request or in_flight
        self._registry = registry
        self._retention_ms = retention_ms
        self._skew_ms = skew_ms
        self._produce_bound_ms = produce_bound_ms

    def build(self, coupon_id: int) -> MissingState:
        """Build the state reserve found missing, from the coupon's holders (the intake's port,
        ``IssueService``'s ``build``, reached through the builder function).

        Missing means cold (a coupon's first request) or lost (a flush, an eviction, a failover
        that dropped a key: reserve sees the loss of any one key). Either way the state is built
        from every user who holds a copy: the records in flight (read first: the worker group's
        committed offsets, then the tail after them) and then the database's issued users. So no
        user who reserved before a loss can reserve again, and the copies sold never exceed the
        quantity, whatever the worker had persisted when Redis lost its keys.

        A state found missing while the coupon's window is open was lost (a new coupon's state is
        built when it is created, ``StateSync.prepare``, and a run's lookahead builds it again before
        the window opens): reservations made just before the loss may still be on their way to
        Kafka. The state then waits ``produce_bound_ms`` (a send and its resend), answering
        BUILDING meanwhile, so that the records in flight read after the wait include every one.

        Under the state lock, and only if the state is still missing once the lock is held: of
        builds asked at once (the registry lets one caller a second ask, and a build may take
        longer), one reads, the others wait for the lock and find the state ready.
        """
        self.complete_registry()
        with self._locks.state(coupon_id, lease_s=STATE_LOCK_LEASE_S, wait_s=STATE_LOCK_WAIT_S):
            if self._store.has_state(coupon_id):
                return MissingState.READY
            coupon = self._catalog.find(coupon_id)
            if coupon is None:
                return MissingState.COUPON_NOT_FOUND
            state, now_ms = coupon.state(self._retention_ms), time.time() * 1000
            self._registry.register({coupon_id: state.expires_at})
            if state.expires_at <= now_ms:
                return MissingState.ENDED  # its keys would expire at once; answer from the database
            if state.is_open(now_ms) and self._store.rebuild_wait_ms(coupon_id, self._produce_bound_ms):
                return MissingState.BUILDING
            in_flight = self._in_flight_for_a_request.read()  # before the snapshot: see above
            snapshot = self._catalog.issued_users(coupon_id)
            if snapshot is None:
                return MissingState.COUPON_NOT_FOUND
            holders, request_ids = in_flight.with_issued(snapshot)
            report = self._store.reconcile(
                snapshot.coupon.state(self._retention_ms), holders, release_before=None, request_ids=request_ids
            )
            logger.info(
                "coupon state built from its holders",
                extra={"couponId": coupon_id, "issued": len(snapshot.reserved_at),
                       "inFlight": len(in_flight.of(coupon_id)), "installed": report.installed},
            )  # fmt: skip
            return MissingState.READY

    def complete_registry(self) -> None:
        """Put every coupon of the database in the registry of coupons, unless it holds them all
        already (one round trip); a load that Redis lost midway leaves it incomplete."""
        token = self._registry.begin_load()
        if token is None:
            return
        ends = self._catalog.window_ends()
        completed = self._registry.finish_load(token, {c: at + self._retention_ms for c, at in ends.items()})
        logger.info("registry of coupons loaded", extra={"coupons": len(ends), "complete": completed})

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
        self.complete_registry()
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
            self._registry.register({coupon_id: state.expires_at})
            if state.is_open(holders.now) and not self._store.has_state(coupon_id):
                # lost mid-sale: the same wait as a build's
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
