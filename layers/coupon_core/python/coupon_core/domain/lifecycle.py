"""An issued copy's life after the issue: used once, or expired (docs/design.md, Lifecycle).

    ISSUED --use--> USED
    ISSUED --its validity ends--> EXPIRED   (the relay's sweep; reads say EXPIRED at once)

Each change is written with its outbox event (COUPON_USED, COUPON_EXPIRED) in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from coupon_core.domain.ports import CouponCatalog, Reservations

COUPON_USED = "COUPON_USED"
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


class IssueLifecycle(Protocol):
    """The issued copies in the database (``coupon_core.adapters.postgres.lifecycle``)."""

    def use(self, coupon_id: int, user_id: int, key: str | None) -> UseResult:
        """Mark the user's copy USED; NOT_ISSUED when the database has no copy for the user."""
        ...

    def expire_due(self, limit: int) -> int:
        """Mark up to ``limit`` copies past their validity EXPIRED; how many."""
        ...


def use_coupon(
    lifecycle: IssueLifecycle,
    catalog: CouponCatalog,
    store: Reservations,
    coupon_id: int,
    user_id: int,
    *,
    key: str | None,
) -> UseResult:
    """Use the user's copy; without one, say whether the coupon exists and the copy is on its way."""
    result = lifecycle.use(coupon_id, user_id, key)
    if result.outcome is not UseOutcome.NOT_ISSUED:
        return result
    if catalog.find(coupon_id) is None:
        return UseResult(UseOutcome.COUPON_NOT_FOUND)
    if store.reservation_time(coupon_id, user_id) is not None:
        return UseResult(UseOutcome.PENDING)
    return result


def expire_all_due(lifecycle: IssueLifecycle, *, batch: int, max_batches: int) -> int:
    """Expire what is due, ``batch`` copies per transaction; how many."""
    expired = 0
    for _ in range(max_batches):
        count = lifecycle.expire_due(batch)
        expired += count
        if count < batch:
            break
    return expired
