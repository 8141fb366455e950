"""What the domain needs from the outside world, as protocols (ports).

The adapters implement them: ``lua_redis`` for the reservations and the locks,
``coupon_core.adapters`` for PostgreSQL, Kafka and SQS. The domain imports none of those, so
its logic is tested through small hand-written implementations (``tests/unit/domain``) as well
as against the real servers.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # in annotations only
    from coupon_core.domain.coupons import (
        Coupon,
        CouponChanges,
        CouponState,
        IssuedUsers,
        IssueEntry,
        NewCoupon,
        ReconcileChanges,
        UserRecord,
    )
    from coupon_core.domain.dead_letters import OffsetRange, Rejection
    from coupon_core.domain.delivery import Delivered, Position
    from coupon_core.domain.in_flight import InFlight
    from coupon_core.domain.records import IssueRecord
    from coupon_core.domain.reservations import ReleaseOutcome


class Reservations(Protocol):
    """A coupon's reservations in Redis as the functions behind the intake use them
    (``lua_redis.store.ReservationStore``; the intake's own port is ``issuing.IssueReservations``).

    Raises ``StateUnavailableError`` when Redis cannot be reached.
    """

    def release(self, coupon_id: int, user_id: int, reserved_at: int) -> ReleaseOutcome: ...

    def release_all(self, coupon_id: int, reservations: Sequence[tuple[int, int]]) -> list[ReleaseOutcome]: ...

    def has_state(self, coupon_id: int) -> bool: ...

    def reservation_time(self, coupon_id: int, user_id: int) -> int | None: ...

    def reserved_count(self, coupon_id: int) -> int: ...

    def server_time_ms(self) -> int: ...

    def update_state(self, state: CouponState) -> bool: ...

    def rebuild_wait_ms(self, coupon_id: int, wait_ms: int) -> int: ...

    def reconcile(
        self,
        state: CouponState,
        holders: Mapping[int, int],
        *,
        release_before: int | None,
        request_ids: Mapping[int, str] | None = None,
    ) -> ReconcileChanges: ...


class CouponLocks(Protocol):
    """The per-coupon locks (``lua_redis.lock.RedisCouponLocks``).

    Entering raises ``LockUnavailableError`` when another owner still holds the lock after
    ``wait_s``, and ``StateUnavailableError`` when Redis cannot be reached.
    """

    def state(self, coupon_id: int, *, lease_s: int, wait_s: int) -> AbstractContextManager[None]: ...

    def issue(self, coupon_id: int, *, lease_s: int, wait_s: int) -> AbstractContextManager[None]: ...


class CouponRegistry(Protocol):
    """Every coupon's id and when its Redis state expires, kept in Redis beside the states
    (``lua_redis.registry.RedisCouponRegistry``), so that the intake tells a coupon whose state is
    missing from an id that names nothing, or a coupon long ended, without the database (its
    lookup: ``issuing.CouponRegistry``). Complete once a load has put every coupon of the
    database in it; until then an unknown id may be a coupon.

    Raises ``StateUnavailableError`` when Redis cannot be reached.
    """

    def register(self, expiries: Mapping[int, int]) -> None:
        """Write each coupon's expiry (epoch ms), as the database has it now."""
        ...

    def begin_load(self) -> str | None:
        """The token of a load of every coupon, or None if the registry is complete."""
        ...

    def finish_load(self, token: str, expiries: Mapping[int, int]) -> bool:
        """Add the coupons the registry lacks, and mark it complete unless Redis lost it since
        ``begin_load``; True if it is now complete."""
        ...


class CouponCatalog(Protocol):
    """Coupons and who holds them, in the database. Raises ``DatabaseUnavailableError``."""

    def create(self, coupon: NewCoupon, *, before_commit: Callable[[Coupon], None]) -> Coupon:
        """The new coupon, committed once ``before_commit`` returned (if it raises, nothing is)."""
        ...

    def find(self, coupon_id: int) -> Coupon | None: ...

    def issued_users(self, coupon_id: int) -> IssuedUsers | None: ...

    def user_record(self, coupon_id: int, user_id: int) -> UserRecord | None: ...

    def coupon_ids_in_window(self, since: datetime, until: datetime) -> list[int]: ...

    def window_ends(self) -> dict[int, int]:
        """Every coupon's id and the end of its window (epoch ms)."""
        ...

    def missing(self, coupon_ids: list[int]) -> list[int]: ...

    def change(self, coupon_id: int, changes: CouponChanges) -> Coupon | None: ...

    def page(self, after: int, limit: int) -> list[Coupon]: ...

    def issues_page(self, coupon_id: int, after: int, limit: int) -> list[IssueEntry]: ...


class GroupOutcome(StrEnum):
    """What the database said about one record of a coupon's group."""

    ISSUED = "ISSUED"
    ALREADY_ISSUED = "ALREADY_ISSUED"
    ALREADY_FAILED = "ALREADY_FAILED"  # the request has a recorded failure: it must never be issued
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"
    NO_STOCK = "NO_STOCK"


class IssueLedger(Protocol):
    """The worker's writes; raises ``DatabaseUnavailableError``."""

    def record_group(self, coupon_id: int, messages: Sequence[IssueRecord]) -> list[GroupOutcome]: ...


class WriteLimit(Protocol):
    """The processing limit on database writes (``lua_redis.limit.RedisWriteLimit``), shared by every worker.

    ``take`` answers how many seconds to wait before writing ``writes`` records (then counted),
    or None when that would pass ``max_wait_s`` (nothing counted); ``StateUnavailableError``
    when Redis cannot be reached."""

    def take(self, writes: int, max_wait_s: float) -> float | None: ...


class DeadLetterQueue(Protocol):
    """The DLQ: takes the worker's rejections; returns the positions of those it did not accept."""

    def send(self, rejections: Sequence[Rejection]) -> set[Position]: ...


@dataclass(frozen=True)
class Failure:
    """A request that ended without an issue: its record, why, and where the record sits in Kafka."""

    record: IssueRecord
    reason: str
    source: Position


class FailureOutcome(StrEnum):
    RECORDED = "RECORDED"
    ALREADY_RECORDED = "ALREADY_RECORDED"
    ALREADY_ISSUED = "ALREADY_ISSUED"


class FailureLedger(Protocol):
    """The DLQ handler's writes; raises ``DatabaseUnavailableError``."""

    def record_failures(self, coupon_id: int, failures: Sequence[Failure]) -> list[FailureOutcome]:
        """Record each failure of one coupon unless its user holds an issue, in one transaction
        serialised with the worker's (so a request is never both issued and failed)."""
        ...

    def note_releases(self, releases: Mapping[uuid.UUID, ReleaseOutcome]) -> None:
        """Keep what the release of each recorded request found, where it is not kept yet."""
        ...


class InFlightReader(Protocol):
    """Reads the records in Kafka the worker has not processed yet; raises ``ReadBackError``.

    The worker group's committed offsets are read first, the ends of the partitions after them:
    a caller that reads the database after ``read`` returns sees every record before the
    committed offsets, and every record acknowledged before the call is in one of the two.
    """

    def read(self) -> InFlight: ...


class RangeReader(Protocol):
    """Reads records back from Kafka by offset; raises ``ReadBackError``."""

    def read(self, offsets: OffsetRange) -> Sequence[Delivered]: ...
