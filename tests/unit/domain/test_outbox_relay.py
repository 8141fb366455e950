"""The event envelope and the relay's loop, through a hand-written outbox."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from coupon_core.domain.outbox_relay import CouponEvent, Publish, relay


def event(coupon_id: int) -> CouponEvent:
    return CouponEvent(uuid.uuid4(), "COUPON_ISSUED", datetime(2026, 11, 30, tzinfo=UTC), coupon_id, {"userId": 7})


class Outbox:
    def __init__(self, waiting: int, *, locked: bool = False) -> None:
        self.waiting = [event(3) for _ in range(waiting)]
        self.locked = locked
        self.batches: list[int] = []

    def relay_batch(self, limit: int, publish: Publish) -> int | None:
        if self.locked:
            return None
        batch, self.waiting = self.waiting[:limit], self.waiting[limit:]
        if batch:
            publish(batch)
        self.batches.append(len(batch))
        return len(batch)

    def lag_seconds(self) -> float:
        return 60.0 if self.waiting else 0.0


def test_the_envelope_is_versioned_keyed_by_coupon_and_carries_the_event_id():
    one = event(42)
    body = json.loads(one.encode())
    assert one.key == b"42"
    assert body == {
        "version": 1,
        "id": str(one.event_id),
        "type": "COUPON_ISSUED",
        "occurredAt": "2026-11-30T00:00:00+00:00",
        "couponId": 42,
        "payload": {"userId": 7},
    }


def test_the_relay_publishes_batch_after_batch_until_one_is_short():
    outbox, sent = Outbox(5), []

    def publish(events: Sequence[CouponEvent]) -> None:
        sent.extend(events)

    report = relay(outbox, publish, batch=2, max_batches=10)
    assert (report.published, report.skipped, report.lag_seconds, outbox.batches) == (5, False, 0.0, [2, 2, 1])
    assert len(sent) == 5


def test_the_relay_stops_after_max_batches_and_reports_the_lag():
    report = relay(Outbox(7), lambda events: None, batch=2, max_batches=2)
    assert (report.published, report.lag_seconds) == (4, 60.0)


def test_a_relay_that_finds_another_running_publishes_nothing():
    report = relay(Outbox(3, locked=True), lambda events: None, batch=2, max_batches=2)
    assert (report.published, report.skipped) == (0, True)
