"""What operators do to a coupon: create it, rename it, move its window, close and reopen it
(the kill switch), top up its stock; and the pages of coupons and of a coupon's issues they read.

Every change is made in the database first (the truth), then in Redis from the database as it
now is (``StateSync``, as a cancel does). A creation puts the coupon in the registry of coupons
before the database commits it, and builds its state after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from coupon_core.backend_errors import InvalidChangeError
from coupon_core.domain.coupons import Coupon, Validity
from coupon_core.domain.ports import CouponCatalog

if TYPE_CHECKING:  # in annotations only
    from coupon_core.domain.state_sync import StateSync


@dataclass(frozen=True)
class NewCoupon:
    name: str
    total_quantity: int
    issue_starts_at: datetime
    issue_ends_at: datetime
    validity: Validity = field(default_factory=Validity)
    reissue_after_cancel: bool = False


MAX_TOTAL = 10_000_000
IssueLife = Literal["ISSUED", "USED", "CANCELED", "EXPIRED"]  # an ISSUED copy past its validity reads EXPIRED


@dataclass(frozen=True)
class CouponChanges:
    """Fields to change (None: unchanged) and copies to add to the stock."""

    name: str | None = None
    issue_starts_at: datetime | None = None
    issue_ends_at: datetime | None = None
    closed: bool | None = None
    add_copies: int = 0

    def checked_window(self, starts_at: datetime, ends_at: datetime, total_quantity: int) -> tuple[datetime, datetime]:
        """The issue window once these changes are made to a coupon whose window and stock are
        these now. Raises :class:`~coupon_core.backend_errors.InvalidChangeError` (and the catalog
        changes nothing) for a window that would end before it starts or a stock past the maximum."""
        starts, ends = self.issue_starts_at or starts_at, self.issue_ends_at or ends_at
        if ends <= starts:
            raise InvalidChangeError("issueEndsAt must be after issueStartsAt")
        if total_quantity + self.add_copies > MAX_TOTAL:
            raise InvalidChangeError(f"totalQuantity would pass {MAX_TOTAL:,}")
        return starts, ends


@dataclass(frozen=True)
class IssueEntry:
    """One row of a coupon's issues, as operators export it."""

    issue_id: int
    user_id: int
    request_id: str
    status: IssueLife
    reserved_at: datetime
    issued_at: datetime
    expires_at: datetime | None
    used_at: datetime | None
    canceled_at: datetime | None


class AdminCatalog(CouponCatalog, Protocol):
    """The catalog as operators change and page it (``adapters.postgres.admin_catalog``)."""

    def create(self, coupon: NewCoupon, *, before_commit: Callable[[Coupon], None]) -> Coupon:
        """The new coupon, committed once ``before_commit`` returned (if it raises, nothing is)."""
        ...

    def change(self, coupon_id: int, changes: CouponChanges) -> Coupon | None: ...

    def page(self, after: int, limit: int) -> list[Coupon]: ...

    def issues_page(self, coupon_id: int, after: int, limit: int) -> list[IssueEntry]: ...


class OnDemandReconcile(Protocol):
    """Reconcile one coupon now, and its report (``coupon_core.adapters.lambda_reconcile``)."""

    def reconcile(self, coupon_id: int) -> dict[str, Any]: ...


class CouponAdmin:
    def __init__(self, catalog: AdminCatalog, sync: StateSync) -> None:
        self._catalog = catalog
        self._sync = sync

    def create(self, new: NewCoupon) -> Coupon:
        """The coupon created, registered and its state built. Raises ``StateUnavailableError``
        (nothing created) when Redis cannot take its entry in the registry."""
        coupon = self._catalog.create(new, before_commit=self._sync.register)
        self._sync.prepare(coupon)
        return coupon

    def change(self, coupon_id: int, changes: CouponChanges) -> Coupon | None:
        """The coupon as changed, or None if it does not exist. Raises ``InvalidChangeError``
        (nothing changed) for a window that would end before it starts or a stock past the maximum."""
        coupon = self._catalog.change(coupon_id, changes)
        if coupon is not None:
            self._sync.rewrite(coupon_id, "coupon change")
        return coupon
