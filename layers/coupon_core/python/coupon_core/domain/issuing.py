"""Issuing a coupon to a user: reserve in Redis, publish to Kafka, release if that fails.

The domain of the intake function, free of Lambda and HTTP types. A state reserve finds missing
is built by a :class:`~coupon_core.domain.ports.StateBuilder` (the rebuild function, asked
synchronously: ``reconcile.Reconciler``), then the reserve is tried once more. SUCCESS means "reserved and
durably queued": the worker persists the record later. A publish that fails before the record
left the producer is UNAVAILABLE and releases the reservation; one whose acknowledgement never
came, even for a resend, is UNCONFIRMED and keeps it: the record may be in Kafka (then the
worker issues it), and if it is not, reconcile releases it once it is older than the skew.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coupon_core.domain.ports import InitOutcome
from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import IssueOutcome
from coupon_core.errors import NotPublishedError, PublishUnconfirmedError, StateUnavailableError, UnavailableError

if TYPE_CHECKING:
    from coupon_core.domain.ports import Publisher, Reservations, StateBuilder

logger = logging.getLogger(__name__)

IDEMPOTENCY_NAMESPACE = uuid.UUID("5b0c1c7e-3f0a-4c55-9d6e-6a1f0f1d2c3b")  # request ids derived from keys


@dataclass(frozen=True)
class IssueResult:
    """The answer to one request.

    ``record`` is the issue record put on Kafka (SUCCESS), or possibly put (UNCONFIRMED). ``detail``
    says why a request is UNAVAILABLE or UNCONFIRMED. ``release_failed`` marks a reservation
    that could not be released after a failed publish: it is left for reconcile, and the caller
    counts it.
    """

    outcome: IssueOutcome
    record: IssueRecord | None = None
    detail: str = ""
    release_failed: bool = False


# A refusal carries nothing but its outcome: one value each, made once (most answers are one).
_REFUSED = {outcome: IssueResult(outcome) for outcome in IssueOutcome}

_INIT_TO_ISSUE = {
    InitOutcome.COUPON_NOT_FOUND: IssueOutcome.COUPON_NOT_FOUND,
    InitOutcome.ENDED: IssueOutcome.ENDED,
    InitOutcome.REBUILDING: IssueOutcome.UNAVAILABLE,  # nothing reserved: retry after Retry-After
}


class IssueService:
    """Answers issue requests: one Redis call and one Kafka produce on the hot path."""

    def __init__(
        self,
        store: Reservations,
        publisher: Publisher,
        builder: StateBuilder,
        *,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 100,
    ) -> None:
        """``wait_replicas`` > 0: a reservation is answered SUCCESS only once that many Redis
        replicas have it (``WAIT``), so that an asynchronous failover cannot lose it; otherwise
        it is released and the request is UNAVAILABLE. One round trip more per SUCCESS."""
        self._store = store
        self._publisher = publisher
        self._builder = builder
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
        except UnavailableError as exc:
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=str(exc))
        if outcome is not IssueOutcome.SUCCESS or reserved_at is None:
            return _REFUSED[outcome]
        record = IssueRecord(coupon_id, user_id, request_id, reserved_at)
        if self._wait_replicas and not self._replicated():
            detail = f"the reservation did not reach {self._wait_replicas} Redis replicas in {self._wait_timeout_ms} ms"
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=detail, release_failed=not self._release(record))
        try:
            self._publisher.publish(record)
        except NotPublishedError as exc:  # known not to be in Kafka: the copy goes back at once
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=str(exc), release_failed=not self._release(record))
        except PublishUnconfirmedError as exc:  # maybe in Kafka: releasing could make a SUCCESS into a lie
            logger.warning("publish unconfirmed: the reservation is left to the worker or to reconcile",
                           extra={"couponId": coupon_id, "requestId": str(request_id)})  # fmt: skip
            return IssueResult(IssueOutcome.UNCONFIRMED, record=record, detail=str(exc))
        return IssueResult(IssueOutcome.SUCCESS, record=record)

    def _reserve(
        self, coupon_id: int, user_id: int, request_id: uuid.UUID, idempotency_key: str
    ) -> tuple[IssueOutcome, int | None]:
        """One EVALSHA; on a missing state, have it built and try once more."""
        reservation = self._store.reserve(coupon_id, user_id, request_id, idempotency_key=idempotency_key)
        if reservation.outcome is IssueOutcome.STATE_MISSING:
            initialised = self._builder.initialise(coupon_id)
            if initialised is not InitOutcome.READY:
                return _INIT_TO_ISSUE[initialised], None
            reservation = self._store.reserve(coupon_id, user_id, request_id, idempotency_key=idempotency_key)
        if reservation.outcome is IssueOutcome.STATE_MISSING:
            raise StateUnavailableError(f"state of coupon {coupon_id} vanished right after it was initialised")
        return reservation.outcome, reservation.reserved_at

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
