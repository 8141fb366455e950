"""The domain's integers, and the Kafka record of an accepted request that carries them.

**The integers.** Ids are positive integers below 2**63 (a PostgreSQL BIGINT), times are epoch
milliseconds. They are checked before any store is called, so that bad input never changes state
(invariant I5): by the HTTP models, which bound their ids by :data:`MAX_BIGINT`, and by
``coupon_core.domain.ids`` everywhere else. Epoch milliseconds (Redis, Kafka) and aware datetimes (PostgreSQL,
the API) convert exactly, with integer arithmetic (:func:`to_millis`, :func:`from_millis`).

**The record** (``IssueRecord``): its key and value, as the intake produces it. Where a record
sits, how a reader receives it and decodes it are in ``delivery.py``. The wire format is in docs/design.md
(Kafka).

Key: the coupon id, so that all records of one coupon land on one partition, in order.
Value: ``{"v": 1, "couponId", "userId", "requestId", "reservedAt"}`` as compact JSON.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MAX_BIGINT = 2**63 - 1
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
VERSION = 1


def to_millis(moment: datetime) -> int:
    """Epoch milliseconds of an aware datetime, truncated (integer arithmetic, no float rounding)."""
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def from_millis(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)


@dataclass(frozen=True)
class IssueRecord:
    coupon_id: int
    user_id: int
    request_id: uuid.UUID
    reserved_at: int

    @property
    def key(self) -> bytes:
        return str(self.coupon_id).encode()

    def encode(self) -> bytes:
        return json.dumps(
            {
                "v": VERSION,
                "couponId": self.coupon_id,
                "userId": self.user_id,
                "requestId": str(self.request_id),
                "reservedAt": self.reserved_at,
            },
            separators=(",", ":"),
        ).encode()
