"""Dead letters: the envelope the worker sends to the SQS DLQ, and reading what arrives there.

Two kinds of message reach the DLQ. Ours, a versioned JSON envelope (``kind`` says which), and
the MSK event source mapping's on-failure record, which carries no payload, only the topic,
partition and offset range of the batch it gave up on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from coupon_core.messages import IssueMessage
from coupon_core.records import Delivered, Position

REJECTED_KIND = "coupon.issue.rejected"
MALFORMED_KIND = "coupon.issue.malformed"
ENVELOPE_VERSION = 1


class UnreadableDeadLetterError(ValueError):
    """A DLQ message that is neither our envelope nor an on-failure record, or is incomplete."""


@dataclass(frozen=True)
class Rejection:
    """A record the worker refused for good (terminal), as one dead letter."""

    record: Delivered
    reason: str

    def envelope(self, failed_at: datetime | None = None) -> dict[str, Any]:
        moment = (failed_at or datetime.now(UTC)).isoformat(timespec="milliseconds")
        source = {"topic": self.record.position.topic, "partition": self.record.position.partition,
                  "offset": self.record.position.offset}  # fmt: skip
        message = self.record.message
        if message is None:
            return {"kind": MALFORMED_KIND, "v": ENVELOPE_VERSION, "reason": self.reason, "source": source,
                    "value": self.record.raw_value, "failedAt": moment}  # fmt: skip
        return {
            "kind": REJECTED_KIND,
            "v": ENVELOPE_VERSION,
            "couponId": message.coupon_id,
            "userId": message.user_id,
            "requestId": str(message.request_id),
            "reservedAt": message.reserved_at,
            "reason": self.reason,
            "source": source,
            "failedAt": moment,
        }


@dataclass(frozen=True)
class RejectedLetter:
    """Our envelope for a well-formed record: everything needed to release and record."""

    message: IssueMessage
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
    """The mapping's on-failure record: the ranges of a batch it gave up on, and why."""

    condition: str
    ranges: tuple[OffsetRange, ...]


def read_dead_letter(body: str) -> RejectedLetter | OnFailureLetter:
    """Parse a DLQ message body; raise :class:`UnreadableDeadLetterError` saying what is wrong."""
    try:
        document = json.loads(body)
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
        message = IssueMessage.from_fields(document)
        source = document["source"]
        position = Position(str(source["topic"]), int(source["partition"]), int(source["offset"]))
        reason = str(document["reason"])
    except (KeyError, TypeError, ValueError) as exc:  # MalformedMessageError is a ValueError
        raise UnreadableDeadLetterError(f"incomplete envelope: {exc}") from None
    return RejectedLetter(message, reason, position)


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
