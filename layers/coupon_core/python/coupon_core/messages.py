"""The Kafka record of an accepted request (DESIGN section 5), version 1.

Key: the coupon id, so that all records of one coupon land on one partition, in order.
Value: ``{"v": 1, "couponId", "userId", "requestId", "reservedAt"}`` as compact JSON.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from lua_redis import InvalidInputError, validate_id, validate_millis

VERSION = 1
_FIELDS = ("v", "couponId", "userId", "requestId", "reservedAt")


class MalformedMessageError(ValueError):
    """A record is not a valid version-1 issue message; the text says what is wrong."""


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
            document: Any = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MalformedMessageError(f"value is not JSON: {exc}") from None
        if not isinstance(document, dict):
            raise MalformedMessageError(f"value must be a JSON object, got {type(document).__name__}")
        missing = [name for name in _FIELDS if name not in document]
        if missing:
            raise MalformedMessageError(f"missing fields: {', '.join(missing)}")
        if document["v"] != VERSION:
            raise MalformedMessageError(f"unsupported version {document['v']!r}, expected {VERSION}")
        try:
            request_id = uuid.UUID(document["requestId"]) if isinstance(document["requestId"], str) else None
        except ValueError:
            request_id = None
        if request_id is None:
            raise MalformedMessageError(f"requestId must be a UUID string, got {document['requestId']!r}")
        try:
            return cls(
                coupon_id=validate_id("couponId", document["couponId"]),
                user_id=validate_id("userId", document["userId"]),
                request_id=request_id,
                reserved_at=validate_millis("reservedAt", document["reservedAt"]),
            )
        except InvalidInputError as exc:
            raise MalformedMessageError(str(exc)) from None
