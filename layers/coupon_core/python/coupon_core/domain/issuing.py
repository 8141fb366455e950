"""Issuing a coupon to a user: reserve in Redis, publish to Kafka, release if that fails.

The domain of the intake function, free of Lambda and HTTP types. SUCCESS means "reserved and
durably queued": the worker persists the record later. A publish that fails before the record
left the producer is UNAVAILABLE and releases the reservation; one whose acknowledgement never
came, even for a resend, is UNCONFIRMED and keeps it: the record may be in Kafka (then the
worker issues it), and if it is not, reconcile releases it once it is older than the skew.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from coupon_core.domain.records import IssueMessage
from coupon_core.errors import NotPublishedError, PublishUnconfirmedError
from lua_redis import LockUnavailableError, ReserveOutcome, StateUnavailableError

if TYPE_CHECKING:  # in annotations only: the intake's cold start does not import the coupon model
    from coupon_core.domain.coupons import Coupon
    from coupon_core.domain.ports import CouponCatalog, CouponLocks, InFlightReader, Publisher, Reservations

logger = logging.getLogger(__name__)

IDEMPOTENCY_NAMESPACE = uuid.UUID("5b0c1c7e-3f0a-4c55-9d6e-6a1f0f1d2c3b")  # request ids derived from keys
STATE_LOCK_LEASE_S = 30
STATE_LOCK_WAIT_S = 1  # below the intake's Redis socket timeout: BLPOP waits on that socket


class IssueOutcome(StrEnum):
    SUCCESS = "SUCCESS"
    DUPLICATE = "DUPLICATE"
    SOLD_OUT = "SOLD_OUT"
    NOT_OPEN = "NOT_OPEN"
    ENDED = "ENDED"
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"
    UNAVAILABLE = "UNAVAILABLE"  # nothing is reserved: retry
    UNCONFIRMED = "UNCONFIRMED"  # reserved, and the record may be in Kafka: ask the status route
    KEY_REUSED = "KEY_REUSED"  # the Idempotency-Key was used for another request of the coupon
    CLOSED = "CLOSED"  # an operator closed the coupon


@dataclass(frozen=True)
class IssueResult:
    """The answer to one request.

    ``message`` is the record put on Kafka (SUCCESS), or possibly put (UNCONFIRMED). ``detail``
    says why a request is UNAVAILABLE or UNCONFIRMED. ``release_failed`` marks a reservation
    that could not be released after a failed publish: it is left for reconcile, and the caller
    counts it.
    """

    outcome: IssueOutcome
    message: IssueMessage | None = None
    detail: str = ""
    release_failed: bool = False


class InitOutcome(StrEnum):
    READY = "READY"
    NOT_FOUND = "NOT_FOUND"
    ENDED = "ENDED"
    REBUILDING = "REBUILDING"


class StateInitialiser:
    """Builds a coupon's Redis state from its holders when reserve finds it missing.

    Missing means cold (a coupon's first request) or lost (a flush, an eviction, a failover
    that dropped a key: reserve sees the loss of any one key). Either way the state is built
    from every user who holds a copy: the records in flight (read first: the worker group's
    committed offsets, then the tail after them) and then the database's issued users. So no
    user who reserved before a loss can reserve again, and the copies sold never exceed the
    quantity, whatever the worker had persisted when Redis lost its keys.

    A state found missing while the coupon's window is open was lost (a new coupon's state is
    built when it is created, see :meth:`prepare`, and the rebuild's lookahead builds it again
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

    def prepare(self, coupon: Coupon) -> None:
        """Build a new coupon's state, empty, so that a missing state in its window means a loss.

        If Redis is unreachable the coupon exists all the same: its first request in the window
        builds the state, after the wait for a lost one.
        """
        try:
            self._store.reconcile(coupon.state(self._retention_ms), {}, release_before=None)
        except StateUnavailableError:
            logger.warning(
                "state of a new coupon not built; its first request will", extra={"couponId": coupon.coupon_id}
            )

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


_RESERVE_TO_ISSUE = {
    ReserveOutcome.SUCCESS: IssueOutcome.SUCCESS,
    ReserveOutcome.DUPLICATE: IssueOutcome.DUPLICATE,
    ReserveOutcome.SOLD_OUT: IssueOutcome.SOLD_OUT,
    ReserveOutcome.NOT_OPEN: IssueOutcome.NOT_OPEN,
    ReserveOutcome.ENDED: IssueOutcome.ENDED,
    ReserveOutcome.KEY_REUSED: IssueOutcome.KEY_REUSED,
    ReserveOutcome.CLOSED: IssueOutcome.CLOSED,
}


_INIT_TO_ISSUE = {
    InitOutcome.NOT_FOUND: IssueOutcome.COUPON_NOT_FOUND,
    InitOutcome.ENDED: IssueOutcome.ENDED,
    InitOutcome.REBUILDING: IssueOutcome.UNAVAILABLE,  # nothing reserved: retry after Retry-After
}


class IssueService:
    """Answers issue requests: one Redis call and one Kafka produce on the hot path."""

    def __init__(
        self,
        store: Reservations,
        publisher: Publisher,
        initialiser: StateInitialiser,
        *,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 100,
    ) -> None:
        """``wait_replicas`` > 0: a reservation is answered SUCCESS only once that many Redis
        replicas have it (``WAIT``), so that an asynchronous failover cannot lose it; otherwise
        it is released and the request is UNAVAILABLE. One round trip more per SUCCESS."""
        self._store = store
        self._publisher = publisher
        self._initialiser = initialiser
        self._wait_replicas = wait_replicas
        self._wait_timeout_ms = wait_timeout_ms

    def issue(self, coupon_id: int, user_id: int, idempotency_key: str | None = None) -> IssueResult:
        """Answer one request; with ``idempotency_key``, the same key and body answer the same.

        The request id is chosen before the reserve, so that a retried reserve is the same
        request. With a key it is derived from the coupon, the user and the key: a client that
        sends the request again after a lost answer gets its own SUCCESS back, same request id
        and time (its record is produced again; the worker persists a request once).
        """
        request_id = (
            uuid.uuid5(IDEMPOTENCY_NAMESPACE, f"{coupon_id}:{user_id}:{idempotency_key}")
            if idempotency_key
            else uuid.uuid4()
        )
        try:
            outcome, reserved_at = self._reserve(coupon_id, user_id, request_id, idempotency_key or "")
        except (StateUnavailableError, LockUnavailableError) as exc:
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=str(exc))
        if outcome is not IssueOutcome.SUCCESS or reserved_at is None:
            return IssueResult(outcome)
        message = IssueMessage(coupon_id, user_id, request_id, reserved_at)
        if self._wait_replicas and not self._replicated():
            detail = f"the reservation did not reach {self._wait_replicas} Redis replicas in {self._wait_timeout_ms} ms"
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=detail, release_failed=not self._release(message))
        try:
            self._publisher.publish(message)
        except NotPublishedError as exc:  # known not to be in Kafka: the copy goes back at once
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=str(exc), release_failed=not self._release(message))
        except PublishUnconfirmedError as exc:  # maybe in Kafka: releasing could make a SUCCESS into a lie
            logger.warning("publish unconfirmed: the reservation is left to the worker or to reconcile",
                           extra={"couponId": coupon_id, "requestId": str(request_id)})  # fmt: skip
            return IssueResult(IssueOutcome.UNCONFIRMED, message=message, detail=str(exc))
        return IssueResult(IssueOutcome.SUCCESS, message=message)

    def _reserve(
        self, coupon_id: int, user_id: int, request_id: uuid.UUID, idempotency_key: str
    ) -> tuple[IssueOutcome, int | None]:
        """One EVALSHA; on a cold coupon, initialise its state from the database and try once more."""
        reservation = self._store.reserve(coupon_id, user_id, request_id, idempotency_key=idempotency_key)
        if reservation.outcome is ReserveOutcome.STATE_MISSING:
            initialised = self._initialiser.initialise(coupon_id)
            if initialised is not InitOutcome.READY:
                return _INIT_TO_ISSUE[initialised], None
            reservation = self._store.reserve(coupon_id, user_id, request_id, idempotency_key=idempotency_key)
        if reservation.outcome is ReserveOutcome.STATE_MISSING:
            raise StateUnavailableError(f"state of coupon {coupon_id} vanished right after it was initialised")
        return _RESERVE_TO_ISSUE[reservation.outcome], reservation.reserved_at

    def _replicated(self) -> bool:
        try:
            return self._store.wait_for_replicas(self._wait_replicas, self._wait_timeout_ms) >= self._wait_replicas
        except StateUnavailableError:
            return False

    def _release(self, message: IssueMessage) -> bool:
        """Undo the reservation of a record that did not reach Kafka; False if Redis is gone too."""
        try:
            self._store.release(message.coupon_id, message.user_id, message.reserved_at)
        except StateUnavailableError:
            logger.exception(
                "could not release a reservation after a failed publish; reconcile will",
                extra={"couponId": message.coupon_id, "requestId": str(message.request_id)},
            )
            return False
        return True
