"""The coupon catalog on PostgreSQL (the domain's ``CouponCatalog`` port)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Engine, case, func, literal, select
from sqlalchemy.orm import Session

from coupon_core.adapters.postgres.engine import DRIVER_ERRORS
from coupon_core.adapters.postgres.models import Coupon as CouponRow
from coupon_core.adapters.postgres.models import CouponIssue, CouponIssueFailure
from coupon_core.domain.coupons import (
    Coupon,
    CouponChanges,
    IssuedUsers,
    IssueEntry,
    NewCoupon,
    UserRecord,
    Validity,
)
from coupon_core.domain.records import to_millis
from coupon_core.errors import DatabaseUnavailableError, Reraise

_database_down = Reraise(DatabaseUnavailableError, "could not read the coupon catalog", DRIVER_ERRORS)


# where a copy's life stands: an ISSUED copy past its validity reads EXPIRED before the sweep marks it
_LIFE = case(
    ((CouponIssue.status == "ISSUED") & (CouponIssue.expires_at <= func.now()), literal("EXPIRED")),
    else_=CouponIssue.status,
)


def _coupon(row: CouponRow, issued: int, canceled: int = 0) -> Coupon:
    """``issued`` counts copies held (not canceled); ``canceled`` the canceled ones."""
    return Coupon(
        coupon_id=row.id,
        name=row.name,
        total_quantity=row.total_quantity,
        remaining_quantity=row.remaining_quantity,
        issue_starts_at=row.issue_starts_at,
        issue_ends_at=row.issue_ends_at,
        issued=issued,
        validity=Validity(row.valid_until, row.valid_days),
        reissue_after_cancel=row.reissue_after_cancel,
        blocked=0 if row.reissue_after_cancel else canceled,
        closed=row.closed,
    )


def _counts(session: Session, coupon_id: int) -> tuple[int, int]:
    """(held, canceled) copies of the coupon."""
    return _counts_of(session, [coupon_id]).get(coupon_id, (0, 0))


def _counts_of(session: Session, coupon_ids: list[int]) -> dict[int, tuple[int, int]]:
    """(held, canceled) copies of each coupon that has any, in one query."""
    canceled = CouponIssue.status == "CANCELED"
    rows = session.execute(
        select(CouponIssue.coupon_id, func.count().filter(~canceled), func.count().filter(canceled))
        .where(CouponIssue.coupon_id.in_(coupon_ids))
        .group_by(CouponIssue.coupon_id)
    ).all()
    return {coupon_id: (int(held), int(gone)) for coupon_id, held, gone in rows}


class SqlCouponCatalog:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @_database_down
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
            created = _coupon(row, issued=0)
            before_commit(created)
            return created

    @_database_down
    def find(self, coupon_id: int) -> Coupon | None:
        with Session(self._engine) as session:
            row = session.get(CouponRow, coupon_id)
            if row is None:
                return None
            return _coupon(row, *_counts(session, coupon_id))

    @_database_down
    def issued_users(self, coupon_id: int) -> IssuedUsers | None:
        """The coupon and the users who hold a reservation by the database, read in one snapshot
        (REPEATABLE READ): every copy not canceled, and the canceled ones of a coupon that does not
        allow a second take (their reservation blocks it); and every request it has settled."""
        with Session(self._engine.execution_options(isolation_level="REPEATABLE READ")) as session:
            row = session.get(CouponRow, coupon_id)
            if row is None:
                return None
            issues = session.execute(
                select(CouponIssue.user_id, CouponIssue.reserved_at, CouponIssue.request_id, CouponIssue.status).where(
                    CouponIssue.coupon_id == coupon_id
                )
            ).all()
            holding = [issue for issue in issues if not (row.reissue_after_cancel and issue.status == "CANCELED")]
            failed = session.scalars(
                select(CouponIssueFailure.request_id).where(CouponIssueFailure.coupon_id == coupon_id)
            )
            return IssuedUsers(
                coupon=_coupon(row, *_counts(session, coupon_id)),
                reserved_at={issue.user_id: to_millis(issue.reserved_at) for issue in holding},
                request_ids={issue.user_id: str(issue.request_id) for issue in holding},
                settled_requests=frozenset(str(issue.request_id) for issue in issues)
                | frozenset(str(request_id) for request_id in failed),
            )

    @_database_down
    def user_record(self, coupon_id: int, user_id: int) -> UserRecord | None:
        """``None`` if the coupon does not exist."""
        with Session(self._engine) as session:
            if session.get(CouponRow, coupon_id) is None:
                return None
            life = session.scalar(
                select(_LIFE).where(CouponIssue.coupon_id == coupon_id, CouponIssue.user_id == user_id)
            )
            failed = session.scalar(
                select(CouponIssueFailure.id)
                .where(CouponIssueFailure.coupon_id == coupon_id, CouponIssueFailure.user_id == user_id)
                .limit(1)
            )
            return UserRecord(issued=life is not None, failed=failed is not None, life=life)

    @_database_down
    def coupon_ids_in_window(self, since: datetime, until: datetime) -> list[int]:
        """Coupons whose issue window overlaps ``[since, until]``."""
        with Session(self._engine) as session:
            return list(
                session.scalars(
                    select(CouponRow.id)
                    .where(CouponRow.issue_starts_at <= until, CouponRow.issue_ends_at >= since)
                    .order_by(CouponRow.id)
                )
            )

    @_database_down
    def window_ends(self) -> dict[int, int]:
        """Every coupon's id and the end of its window (epoch ms)."""
        with Session(self._engine) as session:
            rows = session.execute(select(CouponRow.id, CouponRow.issue_ends_at)).all()
            return {coupon_id: to_millis(ends_at) for coupon_id, ends_at in rows}

    @_database_down
    def missing(self, coupon_ids: list[int]) -> list[int]:
        """The ids among ``coupon_ids`` that name no coupon."""
        with Session(self._engine) as session:
            known = set(session.scalars(select(CouponRow.id).where(CouponRow.id.in_(coupon_ids))))
            return [coupon_id for coupon_id in coupon_ids if coupon_id not in known]

    @_database_down
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
            return _coupon(row, *_counts(session, coupon_id))

    @_database_down
    def page(self, after: int, limit: int) -> list[Coupon]:
        """Coupons with an id above ``after``, in id order."""
        with Session(self._engine) as session:
            rows = list(
                session.scalars(select(CouponRow).where(CouponRow.id > after).order_by(CouponRow.id).limit(limit))
            )
            counts = _counts_of(session, [row.id for row in rows])
            return [_coupon(row, *counts.get(row.id, (0, 0))) for row in rows]

    @_database_down
    def issues_page(self, coupon_id: int, after: int, limit: int) -> list[IssueEntry]:
        """The coupon's issues with an id above ``after``, in id order."""
        with Session(self._engine) as session:
            rows = session.execute(
                select(
                    CouponIssue.id,
                    CouponIssue.user_id,
                    CouponIssue.request_id,
                    _LIFE,
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
