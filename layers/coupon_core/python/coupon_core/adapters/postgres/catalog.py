"""The coupon catalog on PostgreSQL as the functions read it (the domain's ``CouponCatalog``
port): a coupon, its holders, a user's record, the coupons of a window. The operators' changes
and pages are ``admin_catalog.SqlAdminCatalog``'s."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, case, func, literal, select
from sqlalchemy.orm import Session

from coupon_core.adapters.postgres.engine import DRIVER_ERRORS
from coupon_core.adapters.postgres.models import Coupon as CouponRow
from coupon_core.adapters.postgres.models import CouponIssue, CouponIssueFailure
from coupon_core.backend_errors import DatabaseUnavailableError
from coupon_core.domain.coupons import Coupon, IssuedUsers, UserRecord, Validity
from coupon_core.domain.records import to_millis
from coupon_core.errors import Reraise

database_down = Reraise(DatabaseUnavailableError, "could not read the coupon catalog", DRIVER_ERRORS)


# where a copy's life stands: an ISSUED copy past its validity reads EXPIRED before the sweep marks it
LIFE = case(
    ((CouponIssue.status == "ISSUED") & (CouponIssue.expires_at <= func.now()), literal("EXPIRED")),
    else_=CouponIssue.status,
)


def coupon_of(row: CouponRow, issued: int, canceled: int = 0) -> Coupon:
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


def counts(session: Session, coupon_id: int) -> tuple[int, int]:
    """(held, canceled) copies of the coupon."""
    return counts_of(session, [coupon_id]).get(coupon_id, (0, 0))


def counts_of(session: Session, coupon_ids: list[int]) -> dict[int, tuple[int, int]]:
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

    @database_down
    def find(self, coupon_id: int) -> Coupon | None:
        with Session(self._engine) as session:
            row = session.get(CouponRow, coupon_id)
            if row is None:
                return None
            return coupon_of(row, *counts(session, coupon_id))

    @database_down
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
                coupon=coupon_of(row, *counts(session, coupon_id)),
                reserved_at={issue.user_id: to_millis(issue.reserved_at) for issue in holding},
                request_ids={issue.user_id: str(issue.request_id) for issue in holding},
                settled_requests=frozenset(str(issue.request_id) for issue in issues)
                | frozenset(str(request_id) for request_id in failed),
            )

    @database_down
    def user_record(self, coupon_id: int, user_id: int) -> UserRecord | None:
        """``None`` if the coupon does not exist."""
        with Session(self._engine) as session:
            if session.get(CouponRow, coupon_id) is None:
                return None
            life = session.scalar(
                select(LIFE).where(CouponIssue.coupon_id == coupon_id, CouponIssue.user_id == user_id)
            )
            failed = session.scalar(
                select(CouponIssueFailure.id)
                .where(CouponIssueFailure.coupon_id == coupon_id, CouponIssueFailure.user_id == user_id)
                .limit(1)
            )
            return UserRecord(issued=life is not None, failed=failed is not None, life=life)

    @database_down
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

    @database_down
    def window_ends(self) -> dict[int, int]:
        """Every coupon's id and the end of its window (epoch ms)."""
        with Session(self._engine) as session:
            rows = session.execute(select(CouponRow.id, CouponRow.issue_ends_at)).all()
            return {coupon_id: to_millis(ends_at) for coupon_id, ends_at in rows}

    @database_down
    def missing(self, coupon_ids: list[int]) -> list[int]:
        """The ids among ``coupon_ids`` that name no coupon."""
        with Session(self._engine) as session:
            known = set(session.scalars(select(CouponRow.id).where(CouponRow.id.in_(coupon_ids))))
            return [coupon_id for coupon_id in coupon_ids if coupon_id not in known]
