"""Writing issues and failures to PostgreSQL: the worker's and the DLQ handler's ledgers (ports)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError

from coupon_core.adapters.postgres.models import Coupon, CouponIssue, CouponIssueFailure, OutboxEvent
from coupon_core.domain.ports import GroupOutcome
from coupon_core.domain.records import IssueMessage
from coupon_core.errors import DatabaseUnavailableError, StockMismatchError
from coupon_core.timeutil import from_millis
from lua_redis import Reraise

COUPON_ISSUED = "COUPON_ISSUED"

_database_down = Reraise(DatabaseUnavailableError, "could not write to the database", (SQLAlchemyError,))


class SqlLedger:
    """Both ledgers of the domain: ``IssueLedger`` (the worker) and ``FailureLedger`` (the DLQ handler)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @_database_down
    def record_group(self, coupon_id: int, messages: Sequence[IssueMessage]) -> list[GroupOutcome]:
        """Persist one coupon's records, in Kafka order, in one transaction; an outcome per record.

        The coupon row is locked (``FOR UPDATE``) for the transaction. Users already issued, and
        repeats within the group, are ALREADY_ISSUED; new users are issued while stock remains
        and NO_STOCK after. Issues are inserted with ``ON CONFLICT DO NOTHING``, the stock is
        decremented by the number inserted only if that much remains, and one COUPON_ISSUED
        outbox row is written per new issue.
        """
        with self._engine.begin() as connection:
            remaining = connection.scalar(
                select(Coupon.remaining_quantity).where(Coupon.id == coupon_id).with_for_update()
            )
            if remaining is None:
                return [GroupOutcome.COUPON_NOT_FOUND] * len(messages)
            issued = set(
                connection.scalars(
                    select(CouponIssue.user_id).where(
                        CouponIssue.coupon_id == coupon_id,
                        CouponIssue.user_id.in_({message.user_id for message in messages}),
                    )
                )
            )
            outcomes, fresh = self._decide(messages, issued, remaining)
            if fresh:
                inserted = self._insert(connection, coupon_id, fresh)
                outcomes = [
                    GroupOutcome.ALREADY_ISSUED
                    if outcome is GroupOutcome.ISSUED and message.user_id not in inserted
                    else outcome
                    for message, outcome in zip(messages, outcomes, strict=True)
                ]
            return outcomes

    @staticmethod
    def _decide(
        messages: Sequence[IssueMessage], issued: set[int], remaining: int
    ) -> tuple[list[GroupOutcome], list[IssueMessage]]:
        outcomes: list[GroupOutcome] = []
        fresh: list[IssueMessage] = []
        taken = set(issued)
        for message in messages:
            if message.user_id in taken:
                outcomes.append(GroupOutcome.ALREADY_ISSUED)
            elif len(fresh) >= remaining:
                outcomes.append(GroupOutcome.NO_STOCK)
            else:
                taken.add(message.user_id)
                fresh.append(message)
                outcomes.append(GroupOutcome.ISSUED)
        return outcomes, fresh

    @staticmethod
    def _insert(connection: Any, coupon_id: int, fresh: list[IssueMessage]) -> set[int]:
        rows = connection.execute(
            insert(CouponIssue)
            .values(
                [
                    {
                        "coupon_id": coupon_id,
                        "user_id": message.user_id,
                        "request_id": message.request_id,
                        "reserved_at": from_millis(message.reserved_at),
                    }
                    for message in fresh
                ]
            )
            .on_conflict_do_nothing()
            .returning(CouponIssue.id, CouponIssue.user_id, CouponIssue.request_id, CouponIssue.issued_at)
        ).all()
        if rows:
            decremented = connection.execute(
                update(Coupon)
                .where(Coupon.id == coupon_id, Coupon.remaining_quantity >= len(rows))
                .values(remaining_quantity=Coupon.remaining_quantity - len(rows))
            )
            if decremented.rowcount != 1:
                raise StockMismatchError(f"coupon {coupon_id} has less than {len(rows)} copies left")
            connection.execute(  # one multi-row INSERT: pg8000's executemany would be a round trip per row
                insert(OutboxEvent).values(
                    [
                        {
                            "aggregate_id": str(row.id),
                            "event_type": COUPON_ISSUED,
                            "payload": {
                                "couponId": coupon_id,
                                "userId": row.user_id,
                                "requestId": str(row.request_id),
                                "issuedAt": row.issued_at.isoformat(),
                            },
                        }
                        for row in rows
                    ]
                )
            )
        return {row.user_id for row in rows}

    @_database_down
    def has_issue(self, coupon_id: int, user_id: int) -> bool:
        with self._engine.connect() as connection:
            found = connection.scalar(
                select(CouponIssue.id).where(CouponIssue.coupon_id == coupon_id, CouponIssue.user_id == user_id)
            )
        return found is not None

    @_database_down
    def record_failure(self, message: IssueMessage, reason: str, source: dict[str, Any]) -> bool:
        """Insert the failure of one request; False if it was recorded before (idempotent).

        Called after the fenced release has run, so the request holds no reservation any more:
        ``released`` is true on every row, and ``source.release`` keeps what the release found.
        """
        with self._engine.begin() as connection:
            inserted = connection.scalar(
                insert(CouponIssueFailure)
                .values(
                    coupon_id=message.coupon_id,
                    user_id=message.user_id,
                    request_id=message.request_id,
                    reason=reason,
                    source=source,
                    released=True,
                )
                .on_conflict_do_nothing(index_elements=[CouponIssueFailure.request_id])
                .returning(CouponIssueFailure.id)
            )
            return inserted is not None
