"""Handling dead letters: release the reservation and record the failure (the DLQ handler's domain).

For every failed request: if the database has an issue for that user and coupon, the request
ended well after all (an earlier attempt committed) and nothing is changed. Otherwise the
reservation is released, fenced by its reservation time so that a stale letter never frees a
newer reservation, and one ``coupon_issue_failures`` row is written, idempotently on the request
id. So every SUCCESS ends as exactly one of an issue or a recorded failure (invariant I3).
"""

from __future__ import annotations

import logging
from enum import StrEnum

from coupon_core.domain.dead_letters import OnFailureLetter, RejectionLetter, read_dead_letter
from coupon_core.domain.ports import FailureLedger, RangeReader, Reservations
from coupon_core.domain.records import IssueMessage, Position

logger = logging.getLogger(__name__)


class FailureOutcome(StrEnum):
    RECORDED = "RECORDED"
    ALREADY_RECORDED = "ALREADY_RECORDED"
    ALREADY_ISSUED = "ALREADY_ISSUED"


class FailureRecorder:
    def __init__(self, ledger: FailureLedger, store: Reservations, reader: RangeReader) -> None:
        self._ledger = ledger
        self._store = store
        self._reader = reader

    def handle(self, body: str) -> list[FailureOutcome]:
        """Handle one DLQ message; raises if it cannot be read or handled (SQS then redelivers it)."""
        letter = read_dead_letter(body)
        if isinstance(letter, RejectionLetter):
            return [self.record(letter.message, letter.reason, letter.source)]
        return self._handle_on_failure(letter)

    def _handle_on_failure(self, letter: OnFailureLetter) -> list[FailureOutcome]:
        outcomes = []
        for offsets in letter.ranges:
            for delivered in self._reader.read(offsets):
                if delivered.message is None:  # the worker sent it to the DLQ itself, as malformed
                    logger.warning("skipping a malformed record", extra={"position": str(delivered.position)})
                    continue
                reason = f"RETRIES_EXHAUSTED: {letter.condition}"
                outcomes.append(self.record(delivered.message, reason, delivered.position))
        return outcomes

    def record(self, message: IssueMessage, reason: str, source: Position) -> FailureOutcome:
        context = {"couponId": message.coupon_id, "userId": message.user_id, "requestId": str(message.request_id),
                   "position": str(source), "reason": reason}  # fmt: skip
        if self._ledger.has_issue(message.coupon_id, message.user_id):
            logger.info("dead letter for an issued user: nothing to release", extra=context)
            return FailureOutcome.ALREADY_ISSUED
        released = self._store.release(message.coupon_id, message.user_id, message.reserved_at)
        details = {"topic": source.topic, "partition": source.partition, "offset": source.offset,
                   "reservedAt": message.reserved_at, "release": released.value}  # fmt: skip
        if self._ledger.record_failure(message, reason, details):
            logger.info("failure recorded and reservation released", extra=context | {"release": released.value})
            return FailureOutcome.RECORDED
        return FailureOutcome.ALREADY_RECORDED
