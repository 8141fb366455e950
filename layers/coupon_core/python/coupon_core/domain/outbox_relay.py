"""The coupon event stream: what is published on ``coupon.events.v1``, and the relay that
publishes the outbox there.

Envelope, version 1 (JSON, UTF-8), keyed by the coupon id so that one coupon's events stay in
order on one partition::

    {"version": 1, "id": "<uuid>", "type": "COUPON_ISSUED", "occurredAt": "<ISO 8601>",
     "couponId": 42, "payload": {...}}

``id`` is the event's own: delivery is at least once, and a consumer drops an id it has seen.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

ENVELOPE_VERSION = 1
Publish = Callable[[Sequence["CouponEvent"]], None]


@dataclass(frozen=True)
class CouponEvent:
    event_id: uuid.UUID
    event_type: str
    occurred_at: datetime
    coupon_id: int
    payload: dict[str, Any]

    @property
    def key(self) -> bytes:
        return str(self.coupon_id).encode()

    def encode(self) -> bytes:
        return json.dumps(
            {
                "version": ENVELOPE_VERSION,
                "id": str(self.event_id),
                "type": self.event_type,
                "occurredAt": self.occurred_at.isoformat(),
                "couponId": self.coupon_id,
                "payload": self.payload,
            },
            separators=(",", ":"),
        ).encode()


class Outbox(Protocol):
    """The outbox table (``coupon_core.adapters.postgres.outbox_relay.SqlOutbox``)."""

    def relay_batch(self, limit: int, publish: Publish) -> int | None:
        """Hand the oldest ``limit`` unpublished events to ``publish``, in order, and mark them
        published if it returns; how many (None: another relay is running)."""
        ...

    def lag_seconds(self) -> float:
        """How long the oldest unpublished event has waited (0 when none waits)."""
        ...


@dataclass(frozen=True)
class RelayReport:
    published: int
    skipped: bool  # another relay held the outbox
    lag_seconds: float  # after this run


def relay(outbox: Outbox, publish: Publish, *, batch: int, max_batches: int) -> RelayReport:
    """Publish the outbox in order, ``batch`` events at a time, until it is empty.

    At least once: a batch is marked published only after Kafka acknowledged all of it, so a
    crash or a failed publish leaves it to the next run, which sends it again. One relay at a
    time (the adapter takes a lock for the run), which keeps each coupon's events in order.
    """
    published = 0
    for _ in range(max_batches):
        count = outbox.relay_batch(batch, publish)
        if count is None:
            return RelayReport(published, skipped=True, lag_seconds=outbox.lag_seconds())
        published += count
        if count < batch:
            break
    return RelayReport(published, skipped=False, lag_seconds=outbox.lag_seconds())
