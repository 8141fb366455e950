"""Where a user's request for a coupon stands, from the database and Redis."""

from __future__ import annotations

from enum import StrEnum

from coupon_core.domain.ports import CouponCatalog, Reservations


class IssueStatus(StrEnum):
    NONE = "NONE"
    PENDING = "PENDING"  # reserved and queued, not yet persisted
    ISSUED = "ISSUED"
    USED = "USED"
    CANCELED = "CANCELED"
    EXPIRED = "EXPIRED"  # past its validity (docs/design.md, Lifecycle)
    FAILED = "FAILED"  # accepted, then recorded as a failure and released


def issue_status(catalog: CouponCatalog, store: Reservations, coupon_id: int, user_id: int) -> IssueStatus | None:
    """The user's status, or ``None`` if the coupon does not exist.

    The database is asked first: a persisted issue is where its life stands (ISSUED, USED,
    CANCELED or EXPIRED) whatever Redis holds. A reservation without a row is PENDING, even
    after an earlier failure (the user tried again).
    """
    record = catalog.user_record(coupon_id, user_id)
    if record is None:
        return None
    if record.issued:
        return IssueStatus(record.life or IssueStatus.ISSUED)
    if store.reservation_time(coupon_id, user_id) is not None:
        return IssueStatus.PENDING
    return IssueStatus.FAILED if record.failed else IssueStatus.NONE
