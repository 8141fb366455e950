"""Using, canceling and expiring issued copies, each change with its outbox event in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, insert, select, text, update

from coupon_core.adapters.postgres.engine import DRIVER_ERRORS
from coupon_core.adapters.postgres.models import Coupon, CouponIssue, OutboxEvent
from coupon_core.adapters.postgres.outbox import event_row
from coupon_core.backend_errors import DatabaseUnavailableError
from coupon_core.domain.lifecycle import COUPON_CANCELED, COUPON_EXPIRED, COUPON_USED, Change, ChangeResult, CopyOutcome
from coupon_core.domain.records import to_millis
from coupon_core.errors import Reraise

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


@dataclass(frozen=True)
class _Written:
    """Where a change is written: its time's and its key's columns, its event and the event's time field."""

    at: Any
    key: Any
    event: str
    event_time: str


_WRITTEN = {
    Change.USE: _Written(CouponIssue.used_at, CouponIssue.use_key, COUPON_USED, "usedAt"),
    Change.CANCEL: _Written(CouponIssue.canceled_at, CouponIssue.cancel_key, COUPON_CANCELED, "canceledAt"),
}
_CHANGED = (Change.USE.value, Change.CANCEL.value)  # a copy used or canceled takes no other change


class SqlIssueLifecycle:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @_database_down
    def change(self, change: Change, coupon_id: int, user_id: int, key: str | None) -> ChangeResult:
        """A cancel locks the coupon row first (as the worker does), then the copy's: the stock
        and the status change together."""
        written = _WRITTEN[change]
        with self._engine.begin() as connection:
            reissue = False
            if change is Change.CANCEL:
                found = connection.scalar(
                    select(Coupon.reissue_after_cancel).where(Coupon.id == coupon_id).with_for_update()
                )
                if found is None:
                    return ChangeResult(CopyOutcome.NOT_ISSUED)
                reissue = found
            row = _locked_copy(
                connection,
                coupon_id,
                user_id,
                CouponIssue.reserved_at,
                written.at.label("changed_at"),
                written.key.label("change_key"),
            )
            if row is None:
                return ChangeResult(CopyOutcome.NOT_ISSUED)
            if row.status == change.value:
                repeat = key is not None and key == row.change_key
                return ChangeResult(change.done if repeat else change.already, row.changed_at)
            if row.status in _CHANGED:
                return ChangeResult(CopyOutcome(row.status))
            if row.status == "EXPIRED" or row.past_validity:
                return ChangeResult(CopyOutcome.EXPIRED)
            changed_at = connection.scalar(
                update(CouponIssue)
                .where(CouponIssue.id == row.id)
                .values({CouponIssue.status: change.value, written.at: func.now(), written.key: key})
                .returning(written.at)
            )
            assert changed_at is not None
            facts: dict[str, Any] = {written.event_time: changed_at}
            if change is Change.CANCEL:
                connection.execute(
                    update(Coupon)
                    .where(Coupon.id == coupon_id)
                    .values(remaining_quantity=Coupon.remaining_quantity + 1)
                )
                facts["mayTakeAgain"] = reissue
            event = event_row(written.event, issue_id=row.id, coupon_id=coupon_id, user_id=user_id,
                              request_id=row.request_id, **facts)  # fmt: skip
            connection.execute(insert(OutboxEvent).values(event))
            reserved_at = to_millis(row.reserved_at)
            return ChangeResult(change.done, changed_at, now=True, reserved_at=reserved_at, reissue=reissue)

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
