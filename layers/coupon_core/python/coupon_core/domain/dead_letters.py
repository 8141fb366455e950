"""Dead letters: the messages on the DLQ, as the worker writes them and the DLQ handler reads them.

Two kinds reach the DLQ. A *rejection letter*: the worker's versioned JSON envelope for a record
it rejected for good (``kind`` says whether the record was well-formed). An *on-failure letter*:
the MSK event source mapping's record of a batch it gave up on after its retries, which carries
no payload, only the topic, partition and offset ranges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from coupon_core import untrusted_json
from coupon_core.backend_errors import UnreadableDeadLetterError
from coupon_core.domain.delivery import Delivered, Position, record_from_fields
from coupon_core.domain.records import IssueRecord

REJECTED_KIND = "coupon.issue.rejected"
MALFORMED_KIND = "coupon.issue.malformed"
ENVELOPE_VERSION = 1


@dataclass(frozen=True)
class Rejection:
    """A record the worker rejected for good (verdict REJECTED): sent as one rejection letter."""

    delivered: Delivered
    reason: str

    def envelope(self, failed_at: datetime | None = None) -> dict[str, Any]:
        moment = (failed_at or datetime.now(UTC)).isoformat(timespec="milliseconds")
        position = self.delivered.position
        source = {"topic": position.topic, "partition": position.partition, "offset": position.offset}
        record = self.delivered.record
        if record is None:
            return {"kind": MALFORMED_KIND, "v": ENVELOPE_VERSION, "reason": self.reason, "source": source,
                    "value": self.delivered.raw_value, "failedAt": moment}  # fmt: skip
        return {
            "kind": REJECTED_KIND,
            "v": ENVELOPE_VERSION,
            "couponId": record.coupon_id,
            "userId": record.user_id,
            "requestId": str(record.request_id),
            "reservedAt": record.reserved_at,
            "reason": self.reason,
            "source": source,
            "failedAt": moment,
        }


@dataclass(frozen=True)
class RejectionLetter:
    """A rejection letter of a well-formed record, as read back: all it takes to release and record."""

    record: IssueRecord
    reason: str
    source: Position


@dataclass(frozen=True)
class OffsetRange:
    topic: str
    partition: int
    first: int
    last: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}@{self.first}..{self.last}"


@dataclass(frozen=True)
class OnFailureLetter:
    """The mapping's on-failure letter: the ranges of a batch it gave up on, and why."""

    condition: str
    ranges: tuple[OffsetRange, ...]


def read_dead_letter(body: str) -> RejectionLetter | OnFailureLetter:
    """Parse a DLQ message body; raise :class:`UnreadableDeadLetterError` saying what is wrong."""
    try:
        document = untrusted_json.loads(body)
    except json.JSONDecodeError:
        raise UnreadableDeadLetterError("body is not JSON") from None
    if not isinstance(document, dict):
        raise UnreadableDeadLetterError("body is not a JSON object")
    if "KafkaBatchInfo" in document:
        return _on_failure(document)
    kind = document.get("kind")
    if kind == MALFORMED_KIND:
        raise UnreadableDeadLetterError(f"malformed Kafka record, kept for an operator: {document.get('reason')}")
    if kind != REJECTED_KIND or document.get("v") != ENVELOPE_VERSION:
        raise UnreadableDeadLetterError(f"unknown dead letter kind {kind!r} version {document.get('v')!r}")
    try:
        record = record_from_fields(document)
        source = document["source"]
        position = Position(str(source["topic"]), int(source["partition"]), int(source["offset"]))
        reason = str(document["reason"])
    except (KeyError, TypeError, ValueError) as exc:  # MalformedRecordError is a ValueError
        raise UnreadableDeadLetterError(f"incomplete envelope: {exc}") from None
    return RejectionLetter(record, reason, position)


def _on_failure(document: dict[str, Any]) -> OnFailureLetter:
    try:
        info = document["KafkaBatchInfo"]["recordsInfo"]
        condition = str(document.get("requestContext", {}).get("condition", "unknown"))
        ranges = []
        for topic_partition, offsets in info.items():
            topic, _, partition = str(topic_partition).rpartition("-")
            ranges.append(
                OffsetRange(topic, int(partition), int(offsets["firstRecordOffset"]), int(offsets["lastRecordOffset"]))
            )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UnreadableDeadLetterError(f"incomplete on-failure record: {exc!r}") from None
    if not ranges or any(not r.topic or r.last < r.first for r in ranges):
        raise UnreadableDeadLetterError("on-failure record without a valid offset range")
    return OnFailureLetter(condition, tuple(ranges))
