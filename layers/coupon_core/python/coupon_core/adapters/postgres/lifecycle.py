"""Using, canceling and expiring issued copies, each change with its outbox event in one transaction."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, func, insert, select, text, update

from coupon_core.adapters.postgres.engine import DRIVER_ERRORS
from coupon_core.adapters.postgres.models import Coupon, CouponIssue, OutboxEvent
from coupon_core.adapters.postgres.outbox import event_row
from coupon_core.domain.lifecycle import (
    COUPON_CANCELED,
    COUPON_EXPIRED,
    COUPON_USED,
    CancelOutcome,
    CancelResult,
    UseOutcome,
    UseResult,
)
from coupon_core.errors import DatabaseUnavailableError, Reraise
from coupon_core.timeutil import to_millis

_database_down = Reraise(DatabaseUnavailableError, "issued coupons unavailable", DRIVER_ERRORS)

# ISSUED copies past their validity, oldest first; a concurrent sweep skips the ones this one holds
_EXPIRE_DUE = text(
    """
    WITH due AS (
        SELECT id FROM coupon_issues
        WHERE status = 'ISSUED' AND expires_at <= now()
        ORDER BY expires_at LIMIT :limit FOR UPDATE SKIP LOCKED
    )
    UPDATE coupon_issues SET status = 'EXPIRED', expired_at = now()
    FROM due WHERE coupon_issues.id = due.id
    RETURNING coupon_issues.id, coupon_id, user_id, request_id, expires_at
    """
)


def _locked_copy(connection: Any, coupon_id: int, user_id: int, *columns: Any) -> Any:
    """The user's copy, locked for the transaction: its id, request, status, whether it is past
    its validity, and ``columns``; None without one."""
    return connection.execute(
        select(
            CouponIssue.id,
            CouponIssue.request_id,
            CouponIssue.status,
            (CouponIssue.expires_at <= func.now()).label("past_validity"),
            *columns,
        )
        .where(CouponIssue.coupon_id == coupon_id, CouponIssue.user_id == user_id)
        .with_for_update()
    ).one_or_none()


class SqlIssueLifecycle:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @_database_down
    def use(self, coupon_id: int, user_id: int, key: str | None) -> UseResult:
        with self._engine.begin() as connection:
            row = _locked_copy(connection, coupon_id, user_id, CouponIssue.used_at, CouponIssue.use_key)
            if row is None:
                return UseResult(UseOutcome.NOT_ISSUED)
            if row.status == "USED":
                repeat = key is not None and key == row.use_key
                return UseResult(UseOutcome.USED if repeat else UseOutcome.ALREADY_USED, row.used_at)
            if row.status == "CANCELED":
                return UseResult(UseOutcome.CANCELED)
            if row.status == "EXPIRED" or row.past_validity:
                return UseResult(UseOutcome.EXPIRED)
            used_at = connection.scalar(
                update(CouponIssue)
                .where(CouponIssue.id == row.id)
                .values(status="USED", used_at=func.now(), use_key=key)
                .returning(CouponIssue.used_at)
            )
            assert used_at is not None
            event = event_row(COUPON_USED, issue_id=row.id, coupon_id=coupon_id, user_id=user_id,
                              request_id=row.request_id, usedAt=used_at)  # fmt: skip
            connection.execute(insert(OutboxEvent).values(event))
            return UseResult(UseOutcome.USED, used_at)

    @_database_down
    def cancel(self, coupon_id: int, user_id: int, key: str | None) -> CancelResult:
        """The coupon row is locked first (as the worker does), then the copy's: the stock and
        the status change together."""
        with self._engine.begin() as connection:
            reissue = connection.scalar(
                select(Coupon.reissue_after_cancel).where(Coupon.id == coupon_id).with_for_update()
            )
            if reissue is None:
                return CancelResult(CancelOutcome.NOT_ISSUED)
            row = _locked_copy(
                connection, coupon_id, user_id, CouponIssue.reserved_at, CouponIssue.canceled_at, CouponIssue.cancel_key
            )
            if row is None:
                return CancelResult(CancelOutcome.NOT_ISSUED)
            if row.status == "CANCELED":
                repeat = key is not None and key == row.cancel_key
                return CancelResult(
                    CancelOutcome.CANCELED if repeat else CancelOutcome.ALREADY_CANCELED, row.canceled_at
                )
            if row.status == "USED":
                return CancelResult(CancelOutcome.USED)
            if row.status == "EXPIRED" or row.past_validity:
                return CancelResult(CancelOutcome.EXPIRED)
            canceled_at = connection.scalar(
                update(CouponIssue)
                .where(CouponIssue.id == row.id)
                .values(status="CANCELED", canceled_at=func.now(), cancel_key=key)
                .returning(CouponIssue.canceled_at)
            )
            assert canceled_at is not None
            connection.execute(
                update(Coupon).where(Coupon.id == coupon_id).values(remaining_quantity=Coupon.remaining_quantity + 1)
            )
            event = event_row(COUPON_CANCELED, issue_id=row.id, coupon_id=coupon_id, user_id=user_id,
                              request_id=row.request_id, canceledAt=canceled_at, mayTakeAgain=reissue)  # fmt: skip
            connection.execute(insert(OutboxEvent).values(event))
            return CancelResult(
                CancelOutcome.CANCELED, canceled_at, now=True, reserved_at=to_millis(row.reserved_at), reissue=reissue
            )

    @_database_down
    def expire_due(self, limit: int) -> int:
        with self._engine.begin() as connection:
            rows = connection.execute(_EXPIRE_DUE, {"limit": limit}).all()
            if rows:
                events = [
                    event_row(COUPON_EXPIRED, issue_id=row.id, coupon_id=row.coupon_id, user_id=row.user_id,
                              request_id=row.request_id, expiredAt=row.expires_at)
                    for row in rows
                ]  # fmt: skip
                connection.execute(insert(OutboxEvent).values(events))
            return len(rows)
