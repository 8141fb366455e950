"""Using, canceling and expiring issued copies, each change with its outbox event in one transaction."""

from __future__ import annotations

from sqlalchemy import Engine, func, insert, select, text, update

from coupon_core.adapters.postgres.engine import DRIVER_ERRORS
from coupon_core.adapters.postgres.models import Coupon, CouponIssue, OutboxEvent
from coupon_core.domain.lifecycle import (
    COUPON_CANCELED,
    COUPON_EXPIRED,
    COUPON_USED,
    CancelOutcome,
    CancelResult,
    UseOutcome,
    UseResult,
)
from coupon_core.errors import DatabaseUnavailableError
from coupon_core.timeutil import to_millis
from lua_redis import Reraise

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


class SqlIssueLifecycle:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @_database_down
    def use(self, coupon_id: int, user_id: int, key: str | None) -> UseResult:
        with self._engine.begin() as connection:
            row = connection.execute(
                select(
                    CouponIssue.id,
                    CouponIssue.request_id,
                    CouponIssue.status,
                    CouponIssue.used_at,
                    CouponIssue.use_key,
                    (CouponIssue.expires_at <= func.now()).label("past_validity"),
                )
                .where(CouponIssue.coupon_id == coupon_id, CouponIssue.user_id == user_id)
                .with_for_update()
            ).one_or_none()
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
            connection.execute(
                insert(OutboxEvent).values(
                    aggregate_id=str(row.id),
                    coupon_id=coupon_id,
                    event_type=COUPON_USED,
                    payload={
                        "couponId": coupon_id,
                        "userId": user_id,
                        "requestId": str(row.request_id),
                        "usedAt": used_at.isoformat(),
                    },
                )
            )
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
            row = connection.execute(
                select(
                    CouponIssue.id,
                    CouponIssue.request_id,
                    CouponIssue.status,
                    CouponIssue.reserved_at,
                    CouponIssue.canceled_at,
                    CouponIssue.cancel_key,
                    (CouponIssue.expires_at <= func.now()).label("past_validity"),
                )
                .where(CouponIssue.coupon_id == coupon_id, CouponIssue.user_id == user_id)
                .with_for_update()
            ).one_or_none()
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
            connection.execute(
                insert(OutboxEvent).values(
                    aggregate_id=str(row.id),
                    coupon_id=coupon_id,
                    event_type=COUPON_CANCELED,
                    payload={
                        "couponId": coupon_id,
                        "userId": user_id,
                        "requestId": str(row.request_id),
                        "canceledAt": canceled_at.isoformat(),
                        "mayTakeAgain": reissue,
                    },
                )
            )
            return CancelResult(
                CancelOutcome.CANCELED, canceled_at, now=True, reserved_at=to_millis(row.reserved_at), reissue=reissue
            )

    @_database_down
    def expire_due(self, limit: int) -> int:
        with self._engine.begin() as connection:
            rows = connection.execute(_EXPIRE_DUE, {"limit": limit}).all()
            if rows:
                connection.execute(
                    insert(OutboxEvent).values(
                        [
                            {
                                "aggregate_id": str(row.id),
                                "coupon_id": row.coupon_id,
                                "event_type": COUPON_EXPIRED,
                                "payload": {
                                    "couponId": row.coupon_id,
                                    "userId": row.user_id,
                                    "requestId": str(row.request_id),
                                    "expiredAt": row.expires_at.isoformat(),
                                },
                            }
                            for row in rows
                        ]
                    )
                )
            return len(rows)
