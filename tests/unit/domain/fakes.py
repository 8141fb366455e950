"""Small hand-written implementations of the domain's ports, for tests of its pure logic.

Each records what the domain asked of it and answers what the test set up; anything that talks
to a server is tested against the real one in ``tests/services``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from coupon_core.backend_errors import DatabaseUnavailableError, LockUnavailableError
from coupon_core.domain.coupons import Coupon, CouponState, IssuedUsers, ReconcileChanges
from coupon_core.domain.dead_letters import OffsetRange, Rejection
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.in_flight import InFlight
from coupon_core.domain.ledger import Failure, FailureOutcome, GroupOutcome
from coupon_core.domain.records import IssueRecord, to_millis
from coupon_core.domain.reservations import MissingState, ReleaseOutcome, Reservation
from coupon_core.errors import PublishError, StateUnavailableError


@dataclass
class Reservations:
    """Answers ``reserve`` from a script of outcomes; records releases and watermarks."""

    answers: list[Reservation] = field(default_factory=list)
    release_answer: ReleaseOutcome | Exception = ReleaseOutcome.RELEASED
    reserves: list[tuple[int, int]] = field(default_factory=list)
    releases: list[tuple[int, int, int]] = field(default_factory=list)
    installed: list[tuple[CouponState, dict[int, int]]] = field(default_factory=list)
    request_ids: list[dict[int, str]] = field(default_factory=list)  # what each reconcile was told
    wait_ms: int = 0  # what the rebuild gate answers

    def reserve(
        self, coupon_id: int, user_id: int, request_id: uuid.UUID | None = None, *, idempotency_key: str = ""
    ) -> Reservation:
        self.reserves.append((coupon_id, user_id))
        return self.answers.pop(0)

    def release(self, coupon_id: int, user_id: int, reserved_at: int) -> ReleaseOutcome:
        self.releases.append((coupon_id, user_id, reserved_at))
        if isinstance(self.release_answer, Exception):
            raise self.release_answer
        return self.release_answer

    def rebuild_wait_ms(self, coupon_id: int, wait_ms: int) -> int:
        return self.wait_ms

    def release_all(self, coupon_id: int, reservations: Sequence[tuple[int, int]]) -> list[ReleaseOutcome]:
        return [self.release(coupon_id, user, at) for user, at in reservations]

    def has_state(self, coupon_id: int) -> bool:
        return bool(self.installed)

    def reconcile(
        self,
        state: CouponState,
        holders: Mapping[int, int],
        *,
        release_before: int | None,
        request_ids: Mapping[int, str] | None = None,
    ) -> ReconcileChanges:
        self.installed.append((state, dict(holders)))
        self.request_ids.append(dict(request_ids or {}))
        return ReconcileChanges(state.coupon_id, True, len(holders), 0, 0, 0, len(holders))


@dataclass
class Builder:
    """Builds a missing state: answers ``answer`` and records which coupons it was asked for."""

    answer: MissingState = MissingState.READY
    asked: list[int] = field(default_factory=list)

    def build(self, coupon_id: int) -> MissingState:
        self.asked.append(coupon_id)
        return self.answer


@dataclass
class Registry:
    """The registry of coupons, as ``registry_lookup.lua`` keeps it: a coupon id and when it
    expires (epoch ms), complete once a load has finished. A lookup on the fake's ``clock``: an
    id it holds as expired is ENDED, one it does not hold COUPON_NOT_FOUND once complete; any
    other is BUILD to one caller a claim (``claim_ms``) and BUILDING to the others. ``answer``
    scripts every lookup instead. Held to the real registry by tests/services/test_port_contracts.py."""

    answer: MissingState | None = None
    complete: bool = True
    entries: dict[int, int] = field(default_factory=dict)
    lookups: list[int] = field(default_factory=list)
    loads: int = 0
    clock: Any = None  # epoch ms now; time.time by default
    claims: dict[int, int] = field(default_factory=dict)  # coupon -> when its claim ends (epoch ms)

    def lookup(self, coupon_id: int, claim_ms: int) -> MissingState:
        self.lookups.append(coupon_id)
        if self.answer is not None:
            return self.answer
        now = self.clock() if self.clock is not None else time.time_ns() // 1_000_000
        expires = self.entries.get(coupon_id)
        if expires is not None and expires <= now:
            return MissingState.ENDED
        if expires is None and self.complete:
            return MissingState.COUPON_NOT_FOUND
        if self.claims.get(coupon_id, 0) > now:
            return MissingState.BUILDING
        self.claims[coupon_id] = now + claim_ms
        return MissingState.BUILD

    def register(self, expiries: Mapping[int, int]) -> None:
        self.entries.update(expiries)

    def begin_load(self) -> str | None:
        return None if self.complete else "token"

    def finish_load(self, token: str, expiries: Mapping[int, int]) -> bool:
        self.entries = dict(expiries) | self.entries
        self.loads += 1
        self.complete = True
        return True


@dataclass
class Locks:
    """A coupon's two locks, each held by one owner at a time: a lock already held (by a caller
    still inside its block, or by someone else: ``held``) is refused with LockUnavailableError,
    as the real lock refuses it once its wait is over; ``down``: Redis cannot be reached. Held to
    the real locks by tests/services/test_port_contracts.py."""

    held: set[int] = field(default_factory=set)
    down: bool = False
    taken: list[tuple[str, int]] = field(default_factory=list)
    holding: set[tuple[str, int]] = field(default_factory=set)

    @contextmanager
    def _lock(self, kind: str, coupon_id: int) -> Iterator[None]:
        if self.down:
            raise StateUnavailableError("Redis unavailable: test")
        if coupon_id in self.held or (kind, coupon_id) in self.holding:
            raise LockUnavailableError(f"lock {kind} {coupon_id} held")
        self.taken.append((kind, coupon_id))
        self.holding.add((kind, coupon_id))
        try:
            yield
        finally:
            self.holding.discard((kind, coupon_id))

    def state(self, coupon_id: int, *, lease_s: int, wait_s: int) -> Any:
        return self._lock("state", coupon_id)

    def issue(self, coupon_id: int, *, lease_s: int, wait_s: int) -> Any:
        return self._lock("issue", coupon_id)


@dataclass
class Publisher:
    """Publishes, or raises ``fails`` (NotPublishedError, PublishUnconfirmedError)."""

    fails: type[PublishError] | None = None
    published: list[IssueRecord] = field(default_factory=list)

    def publish(self, message: IssueRecord) -> None:
        if self.fails is not None:
            raise self.fails("Kafka did not acknowledge the record: test")
        self.published.append(message)


@dataclass
class Catalog:
    """One coupon (``snapshot``) with its holders, or none; any other id is no coupon."""

    snapshot: IssuedUsers | None = None
    reads: list[str] = field(default_factory=list)

    def find(self, coupon_id: int) -> Coupon | None:
        self.reads.append("find")
        found = self._of(coupon_id)
        return None if found is None else found.coupon

    def issued_users(self, coupon_id: int) -> IssuedUsers | None:
        self.reads.append("issued_users")
        return self._of(coupon_id)

    def _of(self, coupon_id: int) -> IssuedUsers | None:
        return self.snapshot if self.snapshot is not None and self.snapshot.coupon.coupon_id == coupon_id else None

    def window_ends(self) -> dict[int, int]:
        self.reads.append("window_ends")
        if self.snapshot is None:
            return {}
        return {self.snapshot.coupon.coupon_id: to_millis(self.snapshot.coupon.issue_ends_at)}


@dataclass
class InFlightReader:
    """The records in flight: ``holders`` per coupon; ``log`` shared with a Catalog shows the order."""

    holders: dict[int, dict[int, int]] = field(default_factory=dict)
    log: list[str] | None = None

    def read(self) -> InFlight:
        if self.log is not None:
            self.log.append("in_flight")
        return InFlight(self.holders)


@dataclass
class IssueLedger:
    """Answers each coupon's group with the outcomes set up for it, or fails for ``down`` coupons."""

    outcomes: dict[int, list[GroupOutcome]] = field(default_factory=dict)
    down: set[int] = field(default_factory=set)
    groups: dict[int, list[IssueRecord]] = field(default_factory=dict)

    def record_group(self, coupon_id: int, messages: Sequence[IssueRecord]) -> list[GroupOutcome]:
        if coupon_id in self.down:
            raise DatabaseUnavailableError("could not write to the database: test")
        self.groups[coupon_id] = list(messages)
        return self.outcomes[coupon_id]


@dataclass
class DeadLetterQueue:
    refuses: set[Position] = field(default_factory=set)
    sent: list[Rejection] = field(default_factory=list)

    def send(self, rejections: Sequence[Rejection]) -> set[Position]:
        self.sent.extend(r for r in rejections if r.delivered.position not in self.refuses)
        return {r.delivered.position for r in rejections} & self.refuses


@dataclass
class FailureLedger:
    """Failure rows by request id; ``issued`` are the (coupon, user) pairs with an issue."""

    issued: set[tuple[int, int]] = field(default_factory=set)
    failures: dict[uuid.UUID, Failure] = field(default_factory=dict)
    releases: dict[uuid.UUID, ReleaseOutcome] = field(default_factory=dict)
    transactions: list[int] = field(default_factory=list)

    def record_failures(self, coupon_id: int, failures: Sequence[Failure]) -> list[FailureOutcome]:
        self.transactions.append(coupon_id)
        outcomes = []
        for failure in failures:
            request_id = failure.record.request_id
            if (coupon_id, failure.record.user_id) in self.issued:
                outcomes.append(FailureOutcome.ALREADY_ISSUED)
            elif request_id in self.failures:
                outcomes.append(FailureOutcome.ALREADY_RECORDED)
            else:
                self.failures[request_id] = failure
                outcomes.append(FailureOutcome.RECORDED)
        return outcomes

    def note_releases(self, releases: Mapping[uuid.UUID, ReleaseOutcome]) -> None:
        for request_id, outcome in releases.items():
            self.releases.setdefault(request_id, outcome)


@dataclass
class RangeReader:
    records: list[Delivered] = field(default_factory=list)
    asked: list[OffsetRange] = field(default_factory=list)

    def read(self, offsets: OffsetRange) -> list[Delivered]:
        self.asked.append(offsets)
        return [
            r
            for r in self.records
            if (r.position.topic, r.position.partition) == (offsets.topic, offsets.partition)
            and offsets.first <= r.position.offset <= offsets.last
        ]
