"""A Kafka record as a reader receives it: where it sits (``Position``), and its issue record
or why it has none (``Delivered``).

The worker, the DLQ handler, the rebuild and the intake's first request of a coupon read
records; the intake's hot path only produces them (``records.py``), so this module is not part
of its cold start.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from dataclasses import dataclass
from typing import Any

from coupon_core import untrusted_json
from coupon_core.backend_errors import MalformedRecordError
from coupon_core.domain.ids import validate_id, validate_millis
from coupon_core.domain.records import VERSION, IssueRecord
from coupon_core.errors import InvalidInputError

FIELDS = ("couponId", "userId", "requestId", "reservedAt")


def decode_record(raw: bytes) -> IssueRecord:
    """Parse a record value, raising :class:`MalformedRecordError` with the reason."""
    try:
        document: Any = untrusted_json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedRecordError(f"value is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise MalformedRecordError(f"value must be a JSON object, got {type(document).__name__}")
    if document.get("v") != VERSION:
        raise MalformedRecordError(f"unsupported version {document.get('v')!r}, expected {VERSION}")
    return record_from_fields(document)


def record_from_fields(fields: dict[str, Any]) -> IssueRecord:
    """Build from couponId, userId, requestId and reservedAt, validating each."""
    missing = [name for name in FIELDS if name not in fields]
    if missing:
        raise MalformedRecordError(f"missing fields: {', '.join(missing)}")
    try:
        request_id = uuid.UUID(fields["requestId"]) if isinstance(fields["requestId"], str) else None
    except ValueError:
        request_id = None
    if request_id is None:
        raise MalformedRecordError(f"requestId must be a UUID string, got {fields['requestId']!r}")
    try:
        return IssueRecord(
            coupon_id=validate_id("couponId", fields["couponId"]),
            user_id=validate_id("userId", fields["userId"]),
            request_id=request_id,
            reserved_at=validate_millis("reservedAt", fields["reservedAt"]),
        )
    except InvalidInputError as exc:
        raise MalformedRecordError(str(exc)) from None


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
            return cls(position, decode_record(raw), raw_value=encoded)
        except MalformedRecordError as exc:
            return cls(position, None, str(exc), encoded)
