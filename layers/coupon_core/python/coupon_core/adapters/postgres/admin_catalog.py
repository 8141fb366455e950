"""The coupon catalog on PostgreSQL as operators change and page it (the domain's
``AdminCatalog`` port, ``domain/operations.py``): a coupon created, changed (renamed, its window
moved, closed or reopened, topped up), the pages of coupons and of a coupon's issues."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from coupon_core.adapters.postgres.catalog import LIFE, SqlCouponCatalog, counts, counts_of, coupon_of, database_down
from coupon_core.adapters.postgres.models import Coupon as CouponRow
from coupon_core.adapters.postgres.models import CouponIssue
from coupon_core.domain.coupons import Coupon
from coupon_core.domain.operations import CouponChanges, IssueEntry, NewCoupon


class SqlAdminCatalog(SqlCouponCatalog):
    """:class:`SqlCouponCatalog` and the operators' changes and pages."""

    @database_down
    def create(self, coupon: NewCoupon, *, before_commit: Callable[[Coupon], None]) -> Coupon:
        with Session(self._engine) as session, session.begin():
            row = CouponRow(
                name=coupon.name,
                total_quantity=coupon.total_quantity,
                remaining_quantity=coupon.total_quantity,
                issue_starts_at=coupon.issue_starts_at,
                issue_ends_at=coupon.issue_ends_at,
                valid_until=coupon.validity.until,
                valid_days=coupon.validity.days,
                reissue_after_cancel=coupon.reissue_after_cancel,
            )
            session.add(row)
            session.flush()
            created = coupon_of(row, issued=0)
            before_commit(created)
            return created

    @database_down
    def change(self, coupon_id: int, changes: CouponChanges) -> Coupon | None:
        """One transaction on the locked coupon row; ``InvalidChangeError`` and nothing changed
        when the result would break a rule of the domain (``CouponChanges.checked_window``)."""
        with Session(self._engine) as session, session.begin():
            row = session.get(CouponRow, coupon_id, with_for_update=True)
            if row is None:
                return None
            starts, ends = changes.checked_window(row.issue_starts_at, row.issue_ends_at, row.total_quantity)
            row.name = changes.name if changes.name is not None else row.name
            row.issue_starts_at, row.issue_ends_at = starts, ends
            row.closed = changes.closed if changes.closed is not None else row.closed
            row.total_quantity += changes.add_copies
            row.remaining_quantity += changes.add_copies
            session.flush()
            return coupon_of(row, *counts(session, coupon_id))

    @database_down
    def page(self, after: int, limit: int) -> list[Coupon]:
        """Coupons with an id above ``after``, in id order."""
        with Session(self._engine) as session:
            rows = list(
                session.scalars(select(CouponRow).where(CouponRow.id > after).order_by(CouponRow.id).limit(limit))
            )
            counts = counts_of(session, [row.id for row in rows])
            return [coupon_of(row, *counts.get(row.id, (0, 0))) for row in rows]

    @database_down
    def issues_page(self, coupon_id: int, after: int, limit: int) -> list[IssueEntry]:
        """The coupon's issues with an id above ``after``, in id order."""
        with Session(self._engine) as session:
            rows = session.execute(
                select(
                    CouponIssue.id,
                    CouponIssue.user_id,
                    CouponIssue.request_id,
                    LIFE,
                    CouponIssue.reserved_at,
                    CouponIssue.issued_at,
                    CouponIssue.expires_at,
                    CouponIssue.used_at,
                    CouponIssue.canceled_at,
                )
                .where(CouponIssue.coupon_id == coupon_id, CouponIssue.id > after)
                .order_by(CouponIssue.id)
                .limit(limit)
            ).all()
            return [IssueEntry(row[0], row[1], str(row[2]), *row[3:]) for row in rows]
