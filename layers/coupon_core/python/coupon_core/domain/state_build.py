"""A coupon's Redis state built when reserve finds it missing: cold, or lost.

The rebuild function runs this for the intake (``{"stateMissing": N}``, docs/design.md): the
intake holds no database credential and no path to it, so it asks, synchronously, and answers
from the outcome. :func:`prepare` builds a new coupon's empty state when it is created, so that
a state found missing in its window means a loss.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from coupon_core.domain.ports import InitOutcome
from coupon_core.errors import StateUnavailableError

if TYPE_CHECKING:
    from coupon_core.domain.coupons import Coupon
    from coupon_core.domain.ports import CouponCatalog, CouponLocks, InFlightReader, Reservations

logger = logging.getLogger(__name__)

STATE_LOCK_LEASE_S = 30
STATE_LOCK_WAIT_S = 1  # a waiting intake holds its answer this long, at most


def prepare(store: Reservations, coupon: Coupon, retention_ms: int) -> None:
    """Build a new coupon's state, empty, so that a missing state in its window means a loss.

    If Redis is unreachable the coupon exists all the same: its first request in the window
    has the state built, after the wait for a lost one.
    """
    try:
        store.reconcile(coupon.state(retention_ms), {}, release_before=None)
    except StateUnavailableError:
        logger.warning("state of a new coupon not built; its first request will", extra={"couponId": coupon.coupon_id})


class StateInitialiser:
    """Builds a coupon's Redis state from its holders when reserve finds it missing.

    Missing means cold (a coupon's first request) or lost (a flush, an eviction, a failover
    that dropped a key: reserve sees the loss of any one key). Either way the state is built
    from every user who holds a copy: the records in flight (read first: the worker group's
    committed offsets, then the tail after them) and then the database's issued users. So no
    user who reserved before a loss can reserve again, and the copies sold never exceed the
    quantity, whatever the worker had persisted when Redis lost its keys.

    A state found missing while the coupon's window is open was lost (a new coupon's state is
    built when it is created, see :func:`prepare`, and the rebuild's lookahead builds it again
    before the window opens):
    reservations made just before the loss may still be on their way to Kafka. The rebuild then
    waits ``produce_bound_ms`` (a send and its resend), answering UNAVAILABLE meanwhile, so that
    the records in flight read after the wait include every one of them.

    Under the state lock, and only if the state is still missing once the lock is held: of many
    concurrent first requests, one reads, the others wait for the lock and find the state ready.
    The catalog and the Kafka reader are built on first use (SQLAlchemy stays off cold start).
    """

    def __init__(
        self,
        store: Reservations,
        locks: CouponLocks,
        catalog: Callable[[], CouponCatalog],
        in_flight: Callable[[], InFlightReader],
        *,
        retention_ms: int,
        produce_bound_ms: int,
    ) -> None:
        self._store = store
        self._locks = locks
        self._catalog = catalog
        self._in_flight = in_flight
        self._retention_ms = retention_ms
        self._produce_bound_ms = produce_bound_ms

    def initialise(self, coupon_id: int) -> InitOutcome:
        with self._locks.state(coupon_id, lease_s=STATE_LOCK_LEASE_S, wait_s=STATE_LOCK_WAIT_S):
            if self._store.has_state(coupon_id):
                return InitOutcome.READY
            coupon = self._catalog().find(coupon_id)
            if coupon is None:
                return InitOutcome.NOT_FOUND
            state, now_ms = coupon.state(self._retention_ms), time.time() * 1000
            if state.expires_at <= now_ms:
                return InitOutcome.ENDED  # its keys would expire at once; answer from the database
            if state.is_open(now_ms) and self._store.rebuild_wait_ms(coupon_id, self._produce_bound_ms):
                return InitOutcome.REBUILDING
            in_flight = self._in_flight().read()  # before the snapshot: see the class
            snapshot = self._catalog().issued_users(coupon_id)
            if snapshot is None:
                return InitOutcome.NOT_FOUND
            holders, request_ids = in_flight.with_issued(snapshot)
            report = self._store.reconcile(
                snapshot.coupon.state(self._retention_ms), holders, release_before=None, request_ids=request_ids
            )
            logger.info(
                "coupon state built from its holders",
                extra={"couponId": coupon_id, "issued": len(snapshot.reserved_at),
                       "inFlight": len(in_flight.of(coupon_id)), "installed": report.installed},
            )  # fmt: skip
            return InitOutcome.READY
