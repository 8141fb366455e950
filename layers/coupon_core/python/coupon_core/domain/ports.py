"""What the domain's functions behind the intake share of the outside world, as protocols
(ports): a coupon's reservations, its locks, the registry of coupons, the database's coupons.

The adapters implement them: ``lua_redis`` for the reservations, the locks and the registry,
``coupon_core.adapters.postgres`` for the catalog. A port only one job uses sits beside that
job: the intake's in ``issuing.py``, the worker's in ``persisting.py`` and ``ledger.py``, the
DLQ handler's in ``failures.py`` and ``ledger.py``, the reconcile's in ``reconcile.py``. The
domain imports no adapter, so its logic is tested through small hand-written implementations
(``tests/unit/domain``) as well as against the real servers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # in annotations only
    from coupon_core.domain.coupons import (
        Coupon,
        CouponState,
        IssuedUsers,
        UserRecord,
    )
    from coupon_core.domain.reservations import ReleaseOutcome

# A coupon's state lock, held by whoever builds, reconciles or rewrites its Redis state.
# The lease outlasts the longest hold, a coupon of 100,000 holders read from the database and
# reconciled (seconds: docs/benchmarks.md, Reconcile), many times over; it only matters when a
# holder died, and then keeps the others out this long.
STATE_LOCK_LEASE_S = 120
# The wait is what an intake holds its answer for, at most, while another builds the state it
# needs (then it answers 503 with Retry-After). A reconcile that waits in vain reports the coupon
# failed, and the next run does it; a change's rewrite leaves Redis to that run.
STATE_LOCK_WAIT_S = 1


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

    def install(self, state: CouponState, holder_pairs: Sequence[tuple[int, int]] | None) -> bool: ...


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
    lookup: ``lua_redis.issue_store.IssueStore.lookup``). Complete once a load has put every coupon of the
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
    """Coupons and who holds them, in the database (``adapters.postgres.catalog``; the operators'
    changes and pages: ``operations.AdminCatalog``). Raises ``DatabaseUnavailableError``."""

    def find(self, coupon_id: int) -> Coupon | None: ...

    def issued_users(self, coupon_id: int) -> IssuedUsers | None: ...

    def user_record(self, coupon_id: int, user_id: int) -> UserRecord | None: ...

    def coupon_ids_in_window(self, since: datetime, until: datetime) -> list[int]: ...

    def window_ends(self) -> dict[int, int]:
        """Every coupon's id and the end of its window (epoch ms)."""
        ...

    def missing(self, coupon_ids: list[int]) -> list[int]: ...
