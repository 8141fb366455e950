"""A Kafka record as a reader receives it: where it sits (``Position``), and its issue record
or why it has none (``Delivered``).

The worker, the DLQ handler, the rebuild and the intake's first request of a coupon read
records; the intake's hot path only produces them (``records.py``), so this module is not part
of its cold start.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from coupon_core.domain.records import IssueRecord
from coupon_core.errors import MalformedRecordError


@dataclass(frozen=True, order=True)
class Position:
    """A record's place in Kafka; ordering positions orders a partition's records as Kafka does."""

    topic: str
    partition: int
    offset: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}@{self.offset}"


@dataclass(frozen=True)
class Delivered:
    """One record of a batch: its issue record, or why it has none (``problem``)."""

    position: Position
    record: IssueRecord | None
    problem: str = ""
    raw_value: str = ""  # the base64 value, kept for the dead letter of a malformed record

    @classmethod
    def decode(cls, position: Position, value_b64: str | None) -> Delivered:
        """Decode a base64 record value as the event source mapping delivers it."""
        if value_b64 is None:
            return cls(position, None, "record has no value")
        try:
            raw = base64.b64decode(value_b64, validate=True)
        except (binascii.Error, ValueError):
            return cls(position, None, "value is not base64", value_b64)
        return cls.from_bytes(position, raw)

    @classmethod
    def from_bytes(cls, position: Position, raw: bytes | None) -> Delivered:
        """Decode a record value as a Kafka client returns it."""
        if raw is None:
            return cls(position, None, "record has no value")
        encoded = base64.b64encode(raw).decode()
        try:
            return cls(position, IssueRecord.decode(raw), raw_value=encoded)
        except MalformedRecordError as exc:
            return cls(position, None, str(exc), encoded)
