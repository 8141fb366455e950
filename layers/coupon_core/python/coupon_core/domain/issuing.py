"""Issuing a coupon to a user: reserve in Redis, publish to Kafka, release if that fails.

The domain of the intake function, free of Lambda and HTTP types. A coupon reserve finds
without a state is looked up in the registry of coupons (``lookup``): an id that
names nothing is COUPON_NOT_FOUND and a coupon whose state has expired ENDED, without the
database; any other has its state built (``build``: the builder function, asked synchronously,
runs ``reconcile.Reconciler``'s) by one caller a second,
then the reserve is tried once more. SUCCESS means "reserved and durably queued": the worker
persists the record later. A publish that fails before the record left the producer is
UNAVAILABLE and releases the reservation; one whose acknowledgement never came, even for a
resend, is UNCONFIRMED and keeps it: the record may be in Kafka (then the worker issues it), and
if it is not, reconcile releases it once it is older than the skew.

Most of a popular sale's answers are ones nothing can change for a while: sold out, not open
yet, ended, closed, no such coupon, a holder's second click. An :class:`AnswerMemory` keeps what
Redis last answered, for at most a second, and answers it again without asking: it never
reserves, and the one SUCCESS it repeats is one whose record this container saw acknowledged
(docs/design.md, the intake's memory).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import HoldersFilter, IssueOutcome, MissingState, ReleaseOutcome, Reservation
from coupon_core.errors import NotPublishedError, PublishUnconfirmedError, StateUnavailableError, UnavailableError

logger = logging.getLogger(__name__)

IDEMPOTENCY_NAMESPACE = uuid.UUID("5b0c1c7e-3f0a-4c55-9d6e-6a1f0f1d2c3b")  # request ids derived from keys
BUILD_CLAIM_MS = 1000  # the claim: one build of a coupon's missing state asked a second, fleet-wide
MEMORY_MS = 1000  # the contract's one latitude: a remembered answer is at most this old (docs/design.md)
MEMORY_COUPONS = 256  # coupons whose standing refusal a container remembers at once, the oldest
# forgotten first: with a sold-out coupon's holders' filter each (3 bytes a copy), 77 MB at most
# for coupons of 100,000 copies
MEMORY_CALLERS = 10_000  # callers' own answers (a user and a key) kept at once: a container
# answers a few thousand requests a second, and each answer is kept a second at most
MEMORY_ABSENT = 4_096  # coupons without a state (no such id, long ended) kept at once, apart from
# the others: ids a script makes up push out only each other, never a sale's refusal


class IssueReservations(Protocol):
    """A coupon's reservations, as the intake uses them (``lua_redis.issue_store.IssueStore``);
    each raises ``StateUnavailableError`` when Redis cannot be reached."""

    def reserve(
        self, coupon_id: int, user_id: int, request_id: uuid.UUID | None = None, *, idempotency_key: str = ""
    ) -> Reservation: ...

    def release(self, coupon_id: int, user_id: int, reserved_at: int) -> ReleaseOutcome: ...

    def wait_for_replicas(self, coupon_id: int, user_id: int, reserved_at: int, replicas: int, timeout_ms: int) -> int:
        """How many replicas have that reservation (0: the primary lost it), within ``timeout_ms``."""
        ...


@dataclass(frozen=True)
class IssueResult:
    """The answer to one request.

    ``record`` is the issue record put on Kafka (SUCCESS), or possibly put (UNCONFIRMED). ``detail``
    says why a request is UNAVAILABLE or UNCONFIRMED. ``release_failed`` marks a reservation
    that could not be released after a failed publish: it is left for reconcile, and the caller
    counts it. ``remembered``: the answer came from the container's memory, not from Redis;
    ``learned``: Redis' refusal was remembered (a refresh of the memory). The caller counts both.
    ``decided_at``: when Redis decided it (epoch ms, its clock); ``None`` for an answer the
    container decided (from its memory, or without Redis), which the caller times itself.
    ``replays``: for an answer that repeats an earlier decision, that decision's time (epoch ms,
    Redis' clock): a SUCCESS answered again (its reservation), or Redis' answer the memory repeats.
    ``request_id``: the request's id, when it has one (derived from its key, or chosen to reserve).
    The measure of arrival order reads both (``coupon_client.fairness``).
    """

    outcome: IssueOutcome
    record: IssueRecord | None = None
    detail: str = ""
    release_failed: bool = False
    remembered: bool = False
    learned: bool = False
    decided_at: int | None = None
    replays: int | None = None
    request_id: uuid.UUID | None = None


_OWN = frozenset({IssueOutcome.DUPLICATE, IssueOutcome.KEY_REUSED})  # refusals that stand for one caller


@dataclass(frozen=True, slots=True)
class _Kept:
    result: IssueResult  # as the memory answers it (``remembered``)
    until: float  # on the memory's clock
    holders: HoldersFilter | None = None  # SOLD_OUT: who must still ask Redis


class AnswerMemory:
    """A container's memory of what Redis answered, each answer for at most ``ms`` on ``clock``
    (monotonic seconds; tests move it): a refusal that stands for every caller of a coupon (sold
    out, not open, ended, closed, and no such coupon), and a caller's own answer (DUPLICATE,
    KEY_REUSED, and a SUCCESS this container saw acknowledged).

    An answer is kept from the moment its reserve was sent, for ``ms`` or until the window's next
    edge if that comes first (NOT_OPEN then becomes an open sale), so a remembered answer is one
    Redis gave, or would have given, to the same request at most ``ms`` earlier. The precedence
    is ``reserve.lua``'s: closed, not open and ended before a caller's own answer, that before
    sold out. SOLD_OUT is answered only to a caller the coupon's holders' filter clears: a holder
    the memory does not know asks Redis. A SUCCESS through Redis forgets the coupon's refusal (its
    state has changed). ``coupons``, ``callers`` and ``absent`` bound what is kept at once.
    """

    def __init__(
        self,
        ms: int = MEMORY_MS,
        *,
        clock: Callable[[], float] = time.monotonic,
        coupons: int = MEMORY_COUPONS,
        callers: int = MEMORY_CALLERS,
        absent: int = MEMORY_ABSENT,
    ) -> None:
        if not 0 < ms <= MEMORY_MS:
            raise ValueError(f"an answer is remembered for 1 to {MEMORY_MS} ms, not {ms}")
        self.clock = clock
        self._seconds = ms / 1000
        self._bounds = coupons, callers, absent
        self._standing: dict[int, _Kept] = {}
        self._callers: dict[tuple[int, int, str], _Kept] = {}
        self._absent: dict[int, _Kept] = {}

    def recall(self, coupon_id: int, user_id: int, idempotency_key: str, now: float) -> IssueResult | None:
        """The answer remembered for this caller at ``now``, or ``None``: ask Redis."""
        standing = self._standing.get(coupon_id)
        if standing is not None and now < standing.until and standing.holders is None:
            return standing.result  # closed, not open, ended
        caller = self._callers.get((coupon_id, user_id, idempotency_key))
        if caller is not None and now < caller.until:
            return caller.result
        if standing is not None and now < standing.until:  # sold out, to whom the filter clears
            holders = standing.holders
            return None if holders is not None and holders.may_hold(user_id, idempotency_key) else standing.result
        absent = self._absent.get(coupon_id)
        return absent.result if absent is not None and now < absent.until else None

    def learn(
        self, coupon_id: int, user_id: int, idempotency_key: str, reservation: Reservation, asked_at: float
    ) -> bool:
        """Keep Redis' answer to a reserve sent at ``asked_at`` if it stands; forget the coupon's
        refusal on a SUCCESS (kept once acknowledged: :meth:`acknowledged`). True if kept."""
        outcome = reservation.outcome
        if outcome is IssueOutcome.SUCCESS:
            self._standing.pop(coupon_id, None)
            return False
        if not reservation.stands_ms:
            return False
        kept = _Kept(
            IssueResult(outcome, remembered=True, replays=reservation.decided_at),
            self._until(asked_at, reservation.stands_ms),
            reservation.holders,
        )
        if outcome in _OWN:
            _keep(self._callers, (coupon_id, user_id, idempotency_key), kept, self._bounds[1])
        else:
            _keep(self._standing, coupon_id, kept, self._bounds[0])
        return True

    def learn_absent(self, coupon_id: int, outcome: IssueOutcome, asked_at: float) -> None:
        """Keep the answer for a coupon without a state: no such coupon, or one long ended."""
        kept = _Kept(IssueResult(outcome, remembered=True), asked_at + self._seconds)
        _keep(self._absent, coupon_id, kept, self._bounds[2])

    def acknowledged(self, record: IssueRecord, idempotency_key: str, stands_ms: int, asked_at: float) -> None:
        """A SUCCESS whose record Kafka acknowledged to this container: the user's next request is
        DUPLICATE, or with the same key this SUCCESS again (same request id and time)."""
        until = self._until(asked_at, stands_ms)
        coupon_id, user_id, bound = record.coupon_id, record.user_id, self._bounds[1]
        duplicate = IssueResult(IssueOutcome.DUPLICATE, remembered=True, replays=record.reserved_at)
        _keep(self._callers, (coupon_id, user_id, ""), _Kept(duplicate, until), bound)
        if idempotency_key:
            success = IssueResult(IssueOutcome.SUCCESS, record=record, remembered=True, replays=record.reserved_at)
            _keep(self._callers, (coupon_id, user_id, idempotency_key), _Kept(success, until), bound)

    def _until(self, asked_at: float, stands_ms: int) -> float:
        return asked_at + min(self._seconds, stands_ms / 1000)


def _keep[Key: (int, tuple[int, int, str])](table: dict[Key, _Kept], key: Key, kept: _Kept, bound: int) -> None:
    """``table[key] = kept``, the oldest entry forgotten first once ``bound`` are kept."""
    table.pop(key, None)
    if len(table) >= bound:
        del table[next(iter(table))]
    table[key] = kept


_BUILDING = IssueResult(IssueOutcome.UNAVAILABLE, detail="the coupon's state is being built: retry shortly")


class IssueService:
    """Answers issue requests: one Redis call and one Kafka produce on the hot path."""

    def __init__(
        self,
        store: IssueReservations,
        publish: Callable[[IssueRecord], None],
        build: Callable[[int], MissingState],
        *,
        lookup: Callable[[int, int], MissingState],
        memory: AnswerMemory | None = None,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 100,
    ) -> None:
        """``publish`` puts an accepted request's record on Kafka and waits for the ack (raises
        ``PublishError``: ``adapters.kafka.publisher``). ``lookup(coupon_id, claim_ms)`` asks the
        registry of coupons about a coupon reserve found without a state
        (``lua_redis.issue_store.IssueStore.lookup``): BUILD to one caller per ``claim_ms``, who
        then calls ``build(coupon_id)`` (the builder function, ``adapters.lambda_rebuild``: READY,
        BUILDING, COUPON_NOT_FOUND or ENDED; raises ``UnavailableError``), BUILDING to the others,
        COUPON_NOT_FOUND or ENDED for a coupon no build would make.
        ``memory``: answer what stands from it (``None``: every request asks Redis).
        ``wait_replicas`` > 0: a reservation is answered SUCCESS only once that many Redis
        replicas have it (``WAIT``), so that an asynchronous failover cannot lose it; otherwise
        it is released and the request is UNAVAILABLE. One round trip more per SUCCESS."""
        self._store = store
        self._publish = publish
        self._build = build
        self._lookup = lookup
        self.memory = memory
        self._wait_replicas = wait_replicas
        self._wait_timeout_ms = wait_timeout_ms

    def issue(self, coupon_id: int, user_id: int, idempotency_key: str | None = None) -> IssueResult:
        """Answer one request; with ``idempotency_key``, the same key and body answer the same.

        The request id is chosen before the reserve, so that a retried reserve is the same
        request. With a key it is derived from the coupon, the user and the key: a client that
        sends the request again after a lost answer gets its own SUCCESS back, same request id
        and time (its record is produced again, unless this container saw it acknowledged in the
        last second; the worker persists a request once).
        """
        memory, key = self.memory, idempotency_key or ""
        keyed = uuid.uuid5(IDEMPOTENCY_NAMESPACE, f"{coupon_id}:{user_id}:{key}") if key else None
        asked_at = memory.clock() if memory is not None else 0.0
        if memory is not None and (remembered := memory.recall(coupon_id, user_id, key, asked_at)) is not None:
            return remembered if keyed is None else replace(remembered, request_id=keyed)
        request_id = keyed or uuid.uuid4()
        try:
            reservation = self._store.reserve(coupon_id, user_id, request_id, idempotency_key=key)
            if reservation.outcome is IssueOutcome.STATE_MISSING:
                refused = self._without_state(coupon_id, asked_at)
                if refused is not None:
                    return refused
                reservation = self._store.reserve(coupon_id, user_id, request_id, idempotency_key=key)
                if reservation.outcome is IssueOutcome.STATE_MISSING:
                    raise StateUnavailableError(f"state of coupon {coupon_id} vanished right after it was built")
        except UnavailableError as exc:
            return IssueResult(IssueOutcome.UNAVAILABLE, detail=str(exc), request_id=request_id)
        outcome, reserved_at, decided_at = reservation.outcome, reservation.reserved_at, reservation.decided_at
        learned = memory is not None and memory.learn(coupon_id, user_id, key, reservation, asked_at)
        if outcome is not IssueOutcome.SUCCESS or reserved_at is None:
            return IssueResult(outcome, learned=learned, decided_at=decided_at, request_id=request_id)
        replays = reserved_at if decided_at is not None and reserved_at < decided_at else None  # a SUCCESS again
        published = self._queue(IssueRecord(coupon_id, user_id, request_id, reserved_at), again=replays is not None)
        result = replace(published, decided_at=decided_at, replays=replays, request_id=request_id)
        if memory is not None and result.outcome is IssueOutcome.SUCCESS and result.record is not None:
            memory.acknowledged(result.record, key, reservation.stands_ms, asked_at)
        return result

    def _without_state(self, coupon_id: int, asked_at: float) -> IssueResult | None:
        """The answer for a coupon reserve found without a state, from the registry or from its
        build; None once the state is built (the caller reserves again)."""
        answer = self._lookup(coupon_id, BUILD_CLAIM_MS)
        if answer is MissingState.BUILD:
            answer = self._build(coupon_id)
        if answer is MissingState.READY:
            return None
        if answer is MissingState.BUILDING:
            return _BUILDING
        outcome = IssueOutcome(answer.value)  # COUPON_NOT_FOUND or ENDED
        if self.memory is None:
            return IssueResult(outcome)
        self.memory.learn_absent(coupon_id, outcome, asked_at)
        return IssueResult(outcome, learned=True)

    def _queue(self, record: IssueRecord, *, again: bool) -> IssueResult:
        """Put a reserved copy's record on Kafka (after the replicas have it, if asked to).

        ``again``: Redis answered an earlier request's reservation again (a keyed resend), whose
        first produce may have reached Kafka: this produce failing says nothing of that one, so
        the reservation is kept and the answer is UNCONFIRMED, never a release."""
        if self._wait_replicas and not self._replicated(record):
            detail = f"the reservation did not reach {self._wait_replicas} Redis replicas in {self._wait_timeout_ms} ms"
            return self._not_published(record, detail, again=again)
        try:
            self._publish(record)
        except NotPublishedError as exc:  # this produce is known not to be in Kafka
            return self._not_published(record, str(exc), again=again)
        except PublishUnconfirmedError as exc:  # maybe in Kafka: releasing could make a SUCCESS into a lie
            logger.warning("publish unconfirmed: the reservation is left to the worker or to reconcile",
                           extra={"couponId": record.coupon_id, "requestId": str(record.request_id)})  # fmt: skip
            return IssueResult(IssueOutcome.UNCONFIRMED, record=record, detail=str(exc))
        return IssueResult(IssueOutcome.SUCCESS, record=record)

    def _not_published(self, record: IssueRecord, detail: str, *, again: bool) -> IssueResult:
        """A record this request did not put on Kafka: the copy goes back at once, unless an
        earlier produce of the same request may have put it there."""
        if again:
            return IssueResult(IssueOutcome.UNCONFIRMED, record=record, detail=detail)
        return IssueResult(IssueOutcome.UNAVAILABLE, detail=detail, release_failed=not self._release(record))

    def _replicated(self, record: IssueRecord) -> bool:
        """Whether ``wait_replicas`` Redis replicas have the record's reservation in time (False
        if Redis cannot be asked)."""
        try:
            replicas = self._store.wait_for_replicas(
                record.coupon_id, record.user_id, record.reserved_at, self._wait_replicas, self._wait_timeout_ms
            )
        except StateUnavailableError:
            return False
        return replicas >= self._wait_replicas

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
