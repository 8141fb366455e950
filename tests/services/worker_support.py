"""Building MSK batches from real reservations, and reading back what the worker wrote."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, text

from coupon_core.adapters.postgres.admin_catalog import SqlAdminCatalog
from coupon_core.domain.operations import NewCoupon
from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import IssueOutcome
from local.testkit.lambda_events import msk_event
from local.testkit.stores import WholeStore

TOPIC = "coupon.issue.v1"
RETENTION_MS = 24 * 3_600_000


def open_coupon(engine: Engine, store: WholeStore, total: int, *, redis_total: int | None = None) -> int:
    """A coupon in the database, open now, with its Redis state installed.

    ``redis_total`` lets Redis accept more than the database holds, as after a lost state.
    """
    now = datetime.now(UTC)
    window = (now - timedelta(hours=1), now + timedelta(hours=1))
    coupon = SqlAdminCatalog(engine).create(
        NewCoupon("worker test", total, *window), before_commit=lambda coupon: None
    )  # the worker's tests: no intake asks the registry
    state = coupon.state(RETENTION_MS)
    store.reconcile(replace(state, total=redis_total or total), {}, release_before=None)
    return coupon.coupon_id


def reserve(store: WholeStore, coupon_id: int, users: range | list[int]) -> list[IssueRecord]:
    """What the intake publishes for each SUCCESS."""
    messages = []
    for user in users:
        reservation = store.reserve(coupon_id, user)
        assert reservation.outcome is IssueOutcome.SUCCESS, reservation
        messages.append(IssueRecord(coupon_id, user, uuid.uuid4(), reservation.reserved_at))
    return messages


@dataclass
class Batch:
    """Records laid out as Kafka would: partition by coupon, offsets increasing per partition."""

    partitions: int = 3
    next_offset: dict[int, int] = field(default_factory=dict)
    records: list[tuple[str, int, int, bytes | None]] = field(default_factory=list)

    def add(self, message: IssueRecord) -> tuple[str, int]:
        return self.add_raw(message.coupon_id % self.partitions, message.encode())

    def add_raw(self, partition: int, value: bytes | None) -> tuple[str, int]:
        offset = self.next_offset.get(partition, 0)
        self.next_offset[partition] = offset + 1
        self.records.append((TOPIC, partition, offset, value))
        return f"{TOPIC}-{partition}", offset

    def event(self) -> dict[str, Any]:
        return msk_event(self.records)


def failed_items(response: dict[str, Any]) -> set[tuple[str, int]]:
    return {
        (item["itemIdentifier"]["partition"], item["itemIdentifier"]["offset"])
        for item in response["batchItemFailures"]
    }


def issued_users(engine: Engine, coupon_id: int) -> list[int]:
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT user_id FROM coupon_issues WHERE coupon_id = :c ORDER BY user_id"), {"c": coupon_id}
        )
        return [row.user_id for row in rows]


def coupon_counts(engine: Engine, coupon_id: int) -> dict[str, int]:
    with engine.connect() as connection:
        return dict(
            connection.execute(
                text(
                    "SELECT c.remaining_quantity AS remaining,"
                    " (SELECT count(*) FROM coupon_issues i WHERE i.coupon_id = c.id) AS issued,"
                    " (SELECT count(*) FROM outbox o JOIN coupon_issues i ON o.aggregate_id = i.id::text"
                    "  WHERE i.coupon_id = c.id AND o.event_type = 'COUPON_ISSUED') AS outbox,"
                    " (SELECT count(*) FROM coupon_issue_failures f WHERE f.coupon_id = c.id) AS failures"
                    " FROM coupons c WHERE c.id = :c"
                ),
                {"c": coupon_id},
            )
            .mappings()
            .one()
        )


def drain(sqs: Any, queue_url: str) -> list[dict[str, Any]]:
    """Every message on the queue now, deleted as read."""
    bodies = []
    while messages := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", []):
        for message in messages:
            bodies.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return bodies
