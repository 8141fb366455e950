"""The Kafka record of an accepted request: its value (the issue message), where it sits, and
how the worker receives it. The wire format is in docs/design.md (Kafka).

Key: the coupon id, so that all records of one coupon land on one partition, in order.
Value: ``{"v": 1, "couponId", "userId", "requestId", "reservedAt"}`` as compact JSON.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from coupon_core import untrusted_json
from coupon_core.errors import MalformedMessageError
from lua_redis import InvalidInputError, validate_id, validate_millis

VERSION = 1
_FIELDS = ("couponId", "userId", "requestId", "reservedAt")


@dataclass(frozen=True)
class IssueMessage:
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

    @classmethod
    def decode(cls, raw: bytes) -> IssueMessage:
        """Parse a record value, raising :class:`MalformedMessageError` with the reason."""
        try:
            document: Any = untrusted_json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MalformedMessageError(f"value is not JSON: {exc}") from None
        if not isinstance(document, dict):
            raise MalformedMessageError(f"value must be a JSON object, got {type(document).__name__}")
        if document.get("v") != VERSION:
            raise MalformedMessageError(f"unsupported version {document.get('v')!r}, expected {VERSION}")
        return cls.from_fields(document)

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> IssueMessage:
        """Build from couponId, userId, requestId and reservedAt, validating each."""
        missing = [name for name in _FIELDS if name not in fields]
        if missing:
            raise MalformedMessageError(f"missing fields: {', '.join(missing)}")
        try:
            request_id = uuid.UUID(fields["requestId"]) if isinstance(fields["requestId"], str) else None
        except ValueError:
            request_id = None
        if request_id is None:
            raise MalformedMessageError(f"requestId must be a UUID string, got {fields['requestId']!r}")
        try:
            return cls(
                coupon_id=validate_id("couponId", fields["couponId"]),
                user_id=validate_id("userId", fields["userId"]),
                request_id=request_id,
                reserved_at=validate_millis("reservedAt", fields["reservedAt"]),
            )
        except InvalidInputError as exc:
            raise MalformedMessageError(str(exc)) from None


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
    """One record of a batch: its message, or why it has none (``problem``)."""

    position: Position
    message: IssueMessage | None
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
            return cls(position, IssueMessage.decode(raw), raw_value=encoded)
        except MalformedMessageError as exc:
            return cls(position, None, str(exc), encoded)


@dataclass(frozen=True)
class InFlight:
    """Accepted requests whose record is in Kafka but not yet processed by the worker.

    ``holders`` maps a coupon id to its users and their reservation times (ms): together with
    the users the database has issued, they are every user who holds a copy of the coupon.
    """

    holders: dict[int, dict[int, int]]

    def of(self, coupon_id: int) -> dict[int, int]:
        return self.holders.get(coupon_id, {})

    @classmethod
    def of_records(cls, records: Sequence[Delivered]) -> InFlight:
        """The holders in a run of records; a malformed record holds nothing."""
        holders: dict[int, dict[int, int]] = {}
        for record in records:
            if record.message is not None:
                users = holders.setdefault(record.message.coupon_id, {})
                users[record.message.user_id] = max(record.message.reserved_at, users.get(record.message.user_id, 0))
        return cls(holders)
