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


class CopyOutcome(StrEnum):
    """How a use or a cancel of a user's copy ended. A change's own status (USED for a use,
    CANCELED for a cancel) is its success, or the same change again with the same
    Idempotency-Key; every other member refuses it (``functions/http_api/answers.py``), a use of
    a canceled copy answering CANCELED and a cancel of a used one USED."""

    USED = "USED"
    CANCELED = "CANCELED"
    ALREADY_USED = "ALREADY_USED"
    ALREADY_CANCELED = "ALREADY_CANCELED"
    EXPIRED = "EXPIRED"
    PENDING = "PENDING"  # reserved, not persisted yet: retry shortly
    NOT_ISSUED = "NOT_ISSUED"
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"


class Change(StrEnum):
    """What a user may do to an issued copy, by the status it moves the copy to."""

    USE = "USED"
    CANCEL = "CANCELED"

    @property
    def done(self) -> CopyOutcome:
        return CopyOutcome(self.value)

    @property
    def already(self) -> CopyOutcome:
        """The copy had this change already, by another request (another key, or none)."""
        return CopyOutcome(f"ALREADY_{self.value}")


@dataclass(frozen=True)
class ChangeResult:
    """``at`` is when the change was made (the first time, for a repeat). ``now`` marks a change
    made by this call; a cancel's copy must then go back to Redis's stock, by releasing the
    reservation (``reserved_at``, ms) when the coupon allows a second take (``reissue``), else by
    one more copy in Redis's total (the reservation stays, blocking)."""

    outcome: CopyOutcome
    at: datetime | None = None
    now: bool = False
    reserved_at: int | None = None
    reissue: bool = False


class IssueLifecycle(Protocol):
    """The issued copies in the database (``coupon_core.adapters.postgres.lifecycle``)."""

    def change(self, change: Change, coupon_id: int, user_id: int, key: str | None) -> ChangeResult:
        """Move the user's copy to ``change``'s status (a cancel puts it back in the database's
        stock); NOT_ISSUED when the database has no copy for the user."""
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

    def change(self, change: Change, coupon_id: int, user_id: int, *, key: str | None) -> ChangeResult:
        """Use or cancel the user's copy, in the database; a cancel returns it to stock, in the
        database and then in Redis."""
        result = self._issues.change(change, coupon_id, user_id, key)
        if result.outcome is CopyOutcome.NOT_ISSUED:
            return ChangeResult(self._missing(coupon_id, user_id))
        if result.now and change is Change.CANCEL:
            self._return_to_stock(coupon_id, user_id, result)
        return result

    def _missing(self, coupon_id: int, user_id: int) -> CopyOutcome:
        if self._catalog.find(coupon_id) is None:
            return CopyOutcome.COUPON_NOT_FOUND
        pending = self._store.reservation_time(coupon_id, user_id) is not None
        return CopyOutcome.PENDING if pending else CopyOutcome.NOT_ISSUED

    def _return_to_stock(self, coupon_id: int, user_id: int, result: ChangeResult) -> None:
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
