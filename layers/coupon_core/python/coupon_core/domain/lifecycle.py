"""An issued copy's life after the issue: used once, canceled, or expired (docs/design.md, Lifecycle).

    ISSUED --use--> USED
    ISSUED --cancel--> CANCELED             (the copy goes back to stock)
    ISSUED --its validity ends--> EXPIRED   (the relay's sweep; reads say EXPIRED at once)

Each change is written with its outbox event (COUPON_USED, COUPON_CANCELED, COUPON_EXPIRED) in
one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from coupon_core.domain.ports import CouponCatalog, Reservations
from coupon_core.domain.state_sync import StateSync

COUPON_USED = "COUPON_USED"
COUPON_CANCELED = "COUPON_CANCELED"
COUPON_EXPIRED = "COUPON_EXPIRED"


class UseOutcome(StrEnum):
    USED = "USED"  # used now, or the same use again (same Idempotency-Key)
    ALREADY_USED = "ALREADY_USED"
    CANCELED = "CANCELED"
    EXPIRED = "EXPIRED"
    PENDING = "PENDING"  # reserved, not persisted yet: retry shortly
    NOT_ISSUED = "NOT_ISSUED"
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"


@dataclass(frozen=True)
class UseResult:
    outcome: UseOutcome
    used_at: datetime | None = None


class CancelOutcome(StrEnum):
    CANCELED = "CANCELED"  # canceled now, or the same cancel again (same Idempotency-Key)
    ALREADY_CANCELED = "ALREADY_CANCELED"
    USED = "USED"
    EXPIRED = "EXPIRED"
    PENDING = "PENDING"
    NOT_ISSUED = "NOT_ISSUED"
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"


@dataclass(frozen=True)
class CancelResult:
    """``now`` marks a cancel made by this call: its copy must go back to Redis's stock, by
    releasing the reservation (``reserved_at``, ms) when the coupon allows a second take
    (``reissue``), else by one more copy in Redis's total (the reservation stays, blocking)."""

    outcome: CancelOutcome
    canceled_at: datetime | None = None
    now: bool = False
    reserved_at: int | None = None
    reissue: bool = False


class IssueLifecycle(Protocol):
    """The issued copies in the database (``coupon_core.adapters.postgres.lifecycle``)."""

    def use(self, coupon_id: int, user_id: int, key: str | None) -> UseResult:
        """Mark the user's copy USED; NOT_ISSUED when the database has no copy for the user."""
        ...

    def cancel(self, coupon_id: int, user_id: int, key: str | None) -> CancelResult:
        """Mark the user's copy CANCELED and put it back in the database's stock."""
        ...

    def expire_due(self, limit: int) -> int:
        """Mark up to ``limit`` copies past their validity EXPIRED; how many."""
        ...


class LifecycleService:
    """Use and cancel. The catalog and Redis tell a missing copy apart (no such coupon, or a copy
    on its way: PENDING); Redis gets a canceled copy back."""

    def __init__(self, issues: IssueLifecycle, catalog: CouponCatalog, store: Reservations, sync: StateSync) -> None:
        self._issues = issues
        self._catalog = catalog
        self._store = store
        self._sync = sync

    def use(self, coupon_id: int, user_id: int, *, key: str | None) -> UseResult:
        result = self._issues.use(coupon_id, user_id, key)
        if result.outcome is UseOutcome.NOT_ISSUED:
            return UseResult(UseOutcome(self._missing(coupon_id, user_id)))
        return result

    def cancel(self, coupon_id: int, user_id: int, *, key: str | None) -> CancelResult:
        """Cancel the user's copy and return it to stock, in the database and then in Redis."""
        result = self._issues.cancel(coupon_id, user_id, key)
        if result.outcome is CancelOutcome.NOT_ISSUED:
            return CancelResult(CancelOutcome(self._missing(coupon_id, user_id)))
        if result.now:
            self._return_to_stock(coupon_id, user_id, result)
        return result

    def _missing(self, coupon_id: int, user_id: int) -> str:
        if self._catalog.find(coupon_id) is None:
            return "COUPON_NOT_FOUND"
        return "PENDING" if self._store.reservation_time(coupon_id, user_id) is not None else "NOT_ISSUED"

    def _return_to_stock(self, coupon_id: int, user_id: int, result: CancelResult) -> None:
        """A second take allowed: release the reservation. Not allowed: the reservation stays and
        blocks the user, and Redis's total becomes the database's count (``StateSync``)."""
        if result.reissue and result.reserved_at is not None:
            self._sync.release(coupon_id, user_id, result.reserved_at, "cancel")
        else:
            self._sync.rewrite(coupon_id, "cancel")


def expire_all_due(lifecycle: IssueLifecycle, *, batch: int, max_batches: int) -> int:
    """Expire what is due, ``batch`` copies per transaction; how many."""
    expired = 0
    for _ in range(max_batches):
        count = lifecycle.expire_due(batch)
        expired += count
        if count < batch:
            break
    return expired
