"""Issuing a coupon to a user: reserve in Redis, publish to Kafka, release if that fails.

The domain of the intake function, free of Lambda and HTTP types. A state reserve finds missing
is built by a :class:`~coupon_core.domain.ports.StateBuilder` (the rebuild function, asked
synchronously: ``reconcile.Reconciler``), then the reserve is tried once more. SUCCESS means "reserved and
durably queued": the worker persists the record later. A publish that fails before the record
left the producer is UNAVAILABLE and releases the reservation; one whose acknowledgement never
came, even for a resend, is UNCONFIRMED and keeps it: the record may be in Kafka (then the
worker issues it), and if it is not, reconcile releases it once it is older than the skew.

Most of a popular sale's answers are refusals nothing can change for a while: sold out, not
open yet, ended, closed. A :class:`RefusalMemory` keeps the one Redis last gave for a coupon, for
at most a second, and answers it again to every caller it holds for without asking Redis: it
only ever refuses, never reserves (docs/design.md, the memory of refusals).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coupon_core.domain.ports import InitOutcome
from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import HoldersFilter, IssueOutcome, Reservation
from coupon_core.errors import NotPublishedError, PublishUnconfirmedError, StateUnavailableError, UnavailableError

if TYPE_CHECKING:
    from coupon_core.domain.ports import Publisher, Reservations, StateBuilder

logger = logging.getLogger(__name__)

IDEMPOTENCY_NAMESPACE = uuid.UUID("5b0c1c7e-3f0a-4c55-9d6e-6a1f0f1d2c3b")  # request ids derived from keys
MEMORY_MS = 1000  # the contract's one latitude: a remembered refusal is at most this old (docs/design.md)
MEMORY_COUPONS = 256  # coupons a container remembers at once, the oldest forgotten first: with a
# sold-out coupon's holders' filter each (3 bytes a copy), 77 MB at most for coupons of 100,000 copies


@dataclass(frozen=True)
class IssueResult:
    """The answer to one request.

    ``record`` is the issue record put on Kafka (SUCCESS), or possibly put (UNCONFIRMED). ``detail``
    says why a request is UNAVAILABLE or UNCONFIRMED. ``release_failed`` marks a reservation
    that could not be released after a failed publish: it is left for reconcile, and the caller
    counts it. ``remembered``: the refusal came from the container's memory, not from Redis;
    ``learned``: Redis' answer was remembered (a refresh of the memory). The caller counts both.
    """

    outcome: IssueOutcome
    record: IssueRecord | None = None
    detail: str = ""
    release_failed: bool = False
    remembered: bool = False
    learned: bool = False


# A refusal carries nothing but its outcome: one value each, made once (most answers are one).
_REFUSED = {outcome: IssueResult(outcome) for outcome in IssueOutcome}
_REMEMBERED = {outcome: IssueResult(outcome, remembered=True) for outcome in IssueOutcome}
_LEARNED = {outcome: IssueResult(outcome, learned=True) for outcome in IssueOutcome}


@dataclass(frozen=True, slots=True)
class _Standing:
    outcome: IssueOutcome
    until: float  # on the memory's clock
    holders: HoldersFilter | None  # SOLD_OUT: who must still ask Redis


class RefusalMemory:
    """A container's memory of the refusals that stand for every caller (sold out, not open,
    ended, closed), each for at most ``ms`` on ``clock`` (monotonic seconds; tests move it).

    A refusal is kept from the moment its reserve was sent, for ``ms`` or until the window's
    next edge if that comes first (NOT_OPEN then becomes an open sale), so a remembered answer
    is one Redis gave, or would have given, at most ``ms`` earlier. SOLD_OUT is answered only to
    a caller the coupon's holders' filter clears: a holder still hears DUPLICATE and a keyed
    retry its own SUCCESS, from Redis. A SUCCESS through Redis forgets the coupon's refusal (its
    state has changed). ``coupons`` bounds how many coupons are remembered at once.
    """

    def __init__(
        self, ms: int = MEMORY_MS, *, clock: Callable[[], float] = time.monotonic, coupons: int = MEMORY_COUPONS
    ) -> None:
        if not 0 < ms <= MEMORY_MS:
            raise ValueError(f"a refusal is remembered for 1 to {MEMORY_MS} ms, not {ms}")
        self.clock = clock
        self._seconds = ms / 1000
        self._coupons = coupons
        self._standing: dict[int, _Standing] = {}

    def refusal(self, coupon_id: int, user_id: int, idempotency_key: str, now: float) -> IssueOutcome | None:
        """The refusal remembered for this caller at ``now``, or ``None``: ask Redis."""
        standing = self._standing.get(coupon_id)
        if standing is None or now >= standing.until:
            return None
        if standing.holders is not None and standing.holders.may_hold(user_id, idempotency_key):
            return None
        return standing.outcome

    def learn(self, coupon_id: int, reservation: Reservation, asked_at: float) -> bool:
        """Keep Redis' answer to a reserve sent at ``asked_at`` if it stands for every caller;
        forget the coupon's refusal on a SUCCESS. True if kept."""
        if not reservation.stands_ms:
            if reservation.outcome is IssueOutcome.SUCCESS:
                self._standing.pop(coupon_id, None)
            return False
        standing = self._standing
        standing.pop(coupon_id, None)
        if len(standing) >= self._coupons:
            del standing[next(iter(standing))]
        until = asked_at + min(self._seconds, reservation.stands_ms / 1000)
        standing[coupon_id] = _Standing(reservation.outcome, until, reservation.holders)
        return True


_INITIALISED = {  # what an initialise that did not make the state ready answers (never remembered)
    InitOutcome.COUPON_NOT_FOUND: Reservation(IssueOutcome.COUPON_NOT_FOUND),
    InitOutcome.ENDED: Reservation(IssueOutcome.ENDED),
    InitOutcome.REBUILDING: Reservation(IssueOutcome.UNAVAILABLE),  # nothing reserved: retry after Retry-After
}


class IssueService:
    """Answers issue requests: one Redis call and one Kafka produce on the hot path."""

    def __init__(
        self,
        store: Reservations,
        publisher: Publisher,
        builder: StateBuilder,
        *,
        memory: RefusalMemory | None = None,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 100,
    ) -> None:
        """``memory``: answer standing refusals from it (``None``: every request asks Redis).
        ``wait_replicas`` > 0: a reservation is answered SUCCESS only once that many Redis
        replicas have it (``WAIT``), so that an asynchronous failover cannot lose it; otherwise
        it is released and the request is UNAVAILABLE. One round trip more per SUCCESS."""
        self._store = store
        self._publisher = publisher
        self._builder = builder
        self.memory = memory
        self._wait_replicas = wait_replicas
        self._wait_timeout_ms = wait_timeout_ms

    def issue(self, coupon_id: int, user_id: int, idempotency_key: str | None = None) -> IssueResult:
        """Answer one request; with ``idempotency_key``, the same key and body answer the same.

        The request id is chosen before the reserve, so that a retried reserve is the same
        request. With a key it is derived from the coupon, the user and the key: a client that
        sends the request again after a lost answer gets its own SUCCESS back, same request id
        and time (its record is produced again; the worker persists a request once).
        """
        memory, key = self.memory, idempotency_key or ""
        asked_at = memory.clock() if memory is not None else 0.0
        if memory is not None and (remembered := memory.refusal(coupon_id, user_id, key, asked_at)) is not None:
            return _REMEMBERED[remembered]
        request_id = (
            uuid.uuid5(IDEMPOTENCY_NAMESPACE, f"{coupon_id}:{user_id}:{idempotency_key}")
            if idempotency_key
            else uuid.uuid4()
        )
        try:
            reservation = self._reserve(coupon_id, user_id, request_id, key)
        except UnavailableError as exc:
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=str(exc))
        outcome, reserved_at = reservation.outcome, reservation.reserved_at
        learned = memory is not None and memory.learn(coupon_id, reservation, asked_at)
        if outcome is not IssueOutcome.SUCCESS or reserved_at is None:
            return (_LEARNED if learned else _REFUSED)[outcome]
        return self._publish(IssueRecord(coupon_id, user_id, request_id, reserved_at))

    def _publish(self, record: IssueRecord) -> IssueResult:
        """Put a reserved copy's record on Kafka (after the replicas have it, if asked to)."""
        if self._wait_replicas and not self._replicated():
            detail = f"the reservation did not reach {self._wait_replicas} Redis replicas in {self._wait_timeout_ms} ms"
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=detail, release_failed=not self._release(record))
        try:
            self._publisher.publish(record)
        except NotPublishedError as exc:  # known not to be in Kafka: the copy goes back at once
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=str(exc), release_failed=not self._release(record))
        except PublishUnconfirmedError as exc:  # maybe in Kafka: releasing could make a SUCCESS into a lie
            logger.warning("publish unconfirmed: the reservation is left to the worker or to reconcile",
                           extra={"couponId": record.coupon_id, "requestId": str(record.request_id)})  # fmt: skip
            return IssueResult(IssueOutcome.UNCONFIRMED, record=record, detail=str(exc))
        return IssueResult(IssueOutcome.SUCCESS, record=record)

    def _reserve(self, coupon_id: int, user_id: int, request_id: uuid.UUID, idempotency_key: str) -> Reservation:
        """One EVALSHA; on a missing state, have it built and try once more."""
        reservation = self._store.reserve(coupon_id, user_id, request_id, idempotency_key=idempotency_key)
        if reservation.outcome is IssueOutcome.STATE_MISSING:
            initialised = self._builder.initialise(coupon_id)
            if initialised is not InitOutcome.READY:
                return _INITIALISED[initialised]
            reservation = self._store.reserve(coupon_id, user_id, request_id, idempotency_key=idempotency_key)
        if reservation.outcome is IssueOutcome.STATE_MISSING:
            raise StateUnavailableError(f"state of coupon {coupon_id} vanished right after it was initialised")
        return reservation

    def _replicated(self) -> bool:
        try:
            return self._store.wait_for_replicas(self._wait_replicas, self._wait_timeout_ms) >= self._wait_replicas
        except StateUnavailableError:
            return False

    def _release(self, record: IssueRecord) -> bool:
        """Undo the reservation of a record that did not reach Kafka; False if Redis is gone too."""
        try:
            self._store.release(record.coupon_id, record.user_id, record.reserved_at)
        except StateUnavailableError:
            logger.exception(
                "could not release a reservation after a failed publish; reconcile will",
                extra={"couponId": record.coupon_id, "requestId": str(record.request_id)},
            )
            return False
        return True
