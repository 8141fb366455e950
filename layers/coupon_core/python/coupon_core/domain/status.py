"""Where a user's request for a coupon stands, from the database and Redis."""

from __future__ import annotations

from enum import StrEnum

from coupon_core.domain.ports import CouponCatalog, Reservations


class IssueStatus(StrEnum):
    NONE = "NONE"
    PENDING = "PENDING"  # reserved and queued, not yet persisted
    ISSUED = "ISSUED"
    FAILED = "FAILED"  # accepted, then recorded as a failure and released


def issue_status(catalog: CouponCatalog, store: Reservations, coupon_id: int, user_id: int) -> IssueStatus | None:
    """The user's status, or ``None`` if the coupon does not exist.

    The database is asked first: a persisted issue is ISSUED whatever Redis holds. A reservation
    without a row is PENDING, even after an earlier failure (the user tried again).
    """
    record = catalog.user_record(coupon_id, user_id)
    if record is None:
        return None
    if record.issued:
        return IssueStatus.ISSUED
    if store.reservation_time(coupon_id, user_id) is not None:
        return IssueStatus.PENDING
    return IssueStatus.FAILED if record.failed else IssueStatus.NONE
