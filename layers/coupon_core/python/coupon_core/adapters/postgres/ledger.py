"""Writing issues and failures to PostgreSQL: the worker's and the DLQ handler's ledgers (ports)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, Engine, Text, Uuid, column, func, literal, select, update, values
from sqlalchemy.dialects.postgresql import insert

from coupon_core.adapters.postgres.engine import DRIVER_ERRORS
from coupon_core.adapters.postgres.models import Coupon, CouponIssue, CouponIssueFailure, OutboxEvent
from coupon_core.adapters.postgres.outbox import event_row
from coupon_core.backend_errors import DatabaseUnavailableError, StockMismatchError
from coupon_core.domain.ledger import Failure, FailureOutcome, GroupOutcome
from coupon_core.domain.records import IssueRecord, from_millis
from coupon_core.domain.reservations import ReleaseOutcome
from coupon_core.errors import Reraise

COUPON_ISSUED = "COUPON_ISSUED"


def _expiry(valid_until: datetime | None, valid_days: int | None) -> Any:
    """When a copy issued now expires (SQL, the database's clock): the earlier of the two."""
    parts: list[Any] = []
    if valid_until is not None:
        parts.append(literal(valid_until, DateTime(timezone=True)))
    if valid_days is not None:
        parts.append(func.now() + func.make_interval(0, 0, 0, valid_days))
    return func.least(*parts) if len(parts) > 1 else (parts[0] if parts else None)


@dataclass(frozen=True)
class _Held:
    """Who holds an issue of a coupon, as the worker and the DLQ handler both decide it: a user
    with a row, except a canceled one on a coupon that allows a second take; and, whatever its
    state, the very request a row was issued for (a replay of a canceled request stays canceled)."""

    users: frozenset[int]
    requests: frozenset[uuid.UUID]

    @classmethod
    def of(cls, connection: Any, coupon_id: int, records: Sequence[IssueRecord], *, reissue: bool) -> _Held:
        rows = connection.execute(
            select(CouponIssue.user_id, CouponIssue.request_id, CouponIssue.status).where(
                CouponIssue.coupon_id == coupon_id,
                CouponIssue.user_id.in_({record.user_id for record in records}),
            )
        ).all()
        return cls(
            frozenset(row.user_id for row in rows if not (reissue and row.status == "CANCELED")),
            frozenset(row.request_id for row in rows),
        )

    def by(self, record: IssueRecord) -> bool:
        """Whether ``record``'s user holds an issue its request must not take again."""
        return record.user_id in self.users or record.request_id in self.requests


_database_down = Reraise(DatabaseUnavailableError, "could not write to the database", DRIVER_ERRORS)


class SqlLedger:
    """Both ledgers of the domain: ``IssueLedger`` (the worker) and ``FailureLedger`` (the DLQ handler)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @_database_down
    def record_group(self, coupon_id: int, records: Sequence[IssueRecord]) -> list[GroupOutcome]:
        """Persist one coupon's records, in Kafka order, in one transaction; an outcome per record.

        The coupon row is locked (``FOR UPDATE``) for the transaction. A request with a recorded
        failure is ALREADY_FAILED (the DLQ handler settled it and released its copy: a replay must
        not issue it). Users already issued, and repeats within the group, are ALREADY_ISSUED; new
        users are issued while stock remains and NO_STOCK after. Issues are inserted with
        ``ON CONFLICT DO NOTHING``, the stock is decremented by the number inserted only if that
        much remains, and one COUPON_ISSUED outbox row is written per new issue.

        On a coupon that allows a second take after a cancel, a canceled user's new request
        issues the same row again (ISSUED, the new request); a replay of the request that was
        canceled is ALREADY_ISSUED, never a second issue.
        """
        with self._engine.begin() as connection:
            coupon = connection.execute(
                select(Coupon.remaining_quantity, Coupon.valid_until, Coupon.valid_days, Coupon.reissue_after_cancel)
                .where(Coupon.id == coupon_id)
                .with_for_update()
            ).one_or_none()
            if coupon is None:
                return [GroupOutcome.COUPON_NOT_FOUND] * len(records)
            remaining = coupon.remaining_quantity
            reissue = coupon.reissue_after_cancel
            held = _Held.of(connection, coupon_id, records, reissue=reissue)
            issued = {record.user_id for record in records if held.by(record)}
            failed = set(
                connection.scalars(
                    select(CouponIssueFailure.request_id).where(
                        CouponIssueFailure.request_id.in_({record.request_id for record in records})
                    )
                )
            )
            outcomes, fresh = self._decide(records, issued, failed, remaining)
            if fresh:
                expiry = _expiry(coupon.valid_until, coupon.valid_days)
                inserted = self._insert(connection, coupon_id, fresh, expiry, again_after_cancel=reissue)
                outcomes = [
                    GroupOutcome.ALREADY_ISSUED
                    if outcome is GroupOutcome.ISSUED and record.user_id not in inserted
                    else outcome
                    for record, outcome in zip(records, outcomes, strict=True)
                ]
            return outcomes

    @staticmethod
    def _decide(
        records: Sequence[IssueRecord], issued: set[int], failed: set[uuid.UUID], remaining: int
    ) -> tuple[list[GroupOutcome], list[IssueRecord]]:
        outcomes: list[GroupOutcome] = []
        fresh: list[IssueRecord] = []
        taken = set(issued)
        for record in records:
            if record.request_id in failed:
                outcomes.append(GroupOutcome.ALREADY_FAILED)
            elif record.user_id in taken:
                outcomes.append(GroupOutcome.ALREADY_ISSUED)
            elif len(fresh) >= remaining:
                outcomes.append(GroupOutcome.NO_STOCK)
            else:
                taken.add(record.user_id)
                fresh.append(record)
                outcomes.append(GroupOutcome.ISSUED)
        return outcomes, fresh

    @staticmethod
    def _insert(
        connection: Any, coupon_id: int, fresh: list[IssueRecord], expiry: Any, *, again_after_cancel: bool
    ) -> set[int]:
        statement = insert(CouponIssue).values(
            [
                {
                    "coupon_id": coupon_id,
                    "user_id": record.user_id,
                    "request_id": record.request_id,
                    "reserved_at": from_millis(record.reserved_at),
                    "expires_at": expiry,
                }
                for record in fresh
            ]
        )
        if again_after_cancel:  # the canceled row of the user becomes this request's issue
            excluded = statement.excluded
            statement = statement.on_conflict_do_update(
                index_elements=[CouponIssue.coupon_id, CouponIssue.user_id],
                set_={
                    "status": "ISSUED", "request_id": excluded.request_id, "reserved_at": excluded.reserved_at,
                    "issued_at": func.now(), "expires_at": excluded.expires_at, "used_at": None, "use_key": None,
                    "expired_at": None, "canceled_at": None, "cancel_key": None,
                },
                where=CouponIssue.status == "CANCELED",
            )  # fmt: skip
        else:
            statement = statement.on_conflict_do_nothing()
        rows = connection.execute(
            statement.returning(CouponIssue.id, CouponIssue.user_id, CouponIssue.request_id, CouponIssue.issued_at)
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
                        event_row(
                            COUPON_ISSUED,
                            issue_id=row.id,
                            coupon_id=coupon_id,
                            user_id=row.user_id,
                            request_id=row.request_id,
                            issuedAt=row.issued_at,
                        )
                        for row in rows
                    ]
                )
            )
        return {row.user_id for row in rows}

    @_database_down
    def record_failures(self, coupon_id: int, failures: Sequence[Failure]) -> list[FailureOutcome]:
        """Record one coupon's failures in one transaction; an outcome per failure.

        The coupon row is locked (``FOR UPDATE``) as the worker locks it, so the two never
        interleave: a request the worker issued first is ALREADY_ISSUED here, and a request
        recorded here first is ALREADY_FAILED for the worker. A failure of a user who holds an
        issue (as the worker decides it, :class:`_Held`) is not recorded: that issue is the
        request's outcome. Rows are inserted with ``ON CONFLICT (request_id) DO NOTHING``: a
        letter handled twice is ALREADY_RECORDED.
        ``released`` is true on every row: the caller releases each recorded request's
        reservation right after the commit, and :meth:`note_releases` keeps what it found.
        """
        with self._engine.begin() as connection:
            reissue = connection.scalar(
                select(Coupon.reissue_after_cancel).where(Coupon.id == coupon_id).with_for_update()
            )
            held = _Held.of(connection, coupon_id, [f.record for f in failures], reissue=bool(reissue))
            to_record = {f.record.request_id: f for f in failures if not held.by(f.record)}
            inserted = self._insert_failures(connection, list(to_record.values())) if to_record else set()
        outcomes: list[FailureOutcome] = []
        for failure in failures:
            request_id = failure.record.request_id
            if held.by(failure.record):
                outcomes.append(FailureOutcome.ALREADY_ISSUED)
            elif request_id in inserted:
                outcomes.append(FailureOutcome.RECORDED)
                inserted.discard(request_id)  # the same request twice in one letter: recorded once
            else:
                outcomes.append(FailureOutcome.ALREADY_RECORDED)
        return outcomes

    @staticmethod
    def _insert_failures(connection: Any, failures: list[Failure]) -> set[uuid.UUID]:
        rows = [
            {
                "coupon_id": f.record.coupon_id,
                "user_id": f.record.user_id,
                "request_id": f.record.request_id,
                "reason": f.reason,
                "source": {
                    "topic": f.source.topic,
                    "partition": f.source.partition,
                    "offset": f.source.offset,
                    "reservedAt": f.record.reserved_at,
                },
                "released": True,
            }
            for f in failures
        ]
        statement = (
            insert(CouponIssueFailure)
            .values(rows)
            .on_conflict_do_nothing(index_elements=[CouponIssueFailure.request_id])
            .returning(CouponIssueFailure.request_id)
        )
        return set(connection.scalars(statement))

    @_database_down
    def note_releases(self, releases: Mapping[uuid.UUID, ReleaseOutcome]) -> None:
        """Add ``source.release`` to the rows of these requests that do not have it yet (one statement)."""
        if not releases:
            return
        found = values(column("request_id", Uuid), column("release", Text), name="found").data(
            [(request_id, outcome.value) for request_id, outcome in releases.items()]
        )
        with self._engine.begin() as connection:
            connection.execute(
                update(CouponIssueFailure)
                .where(
                    CouponIssueFailure.request_id == found.c.request_id,
                    ~CouponIssueFailure.source.has_key("release"),
                )
                .values(source=CouponIssueFailure.source + func.jsonb_build_object("release", found.c.release))
            )
