"""Persisting a batch of accepted requests: the worker's domain.

Records are grouped by coupon. For each coupon the worker takes its writes from the processing
limit (waiting as long as it says), then the coupon's Redis lock once, and writes the whole
group in one database transaction.
Every record gets a verdict: ISSUED, ALREADY_ISSUED (a replay), ALREADY_FAILED (a replay of a
request the DLQ handler settled: never issued), REJECTED (terminal: sent to the DLQ as a
rejection letter) or TRANSIENT (retried by the event source mapping).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from coupon_core.backend_errors import DatabaseUnavailableError, LockUnavailableError
from coupon_core.domain.dead_letters import Rejection
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.ledger import GroupOutcome, IssueLedger
from coupon_core.domain.ports import CouponLocks
from coupon_core.errors import StateUnavailableError

logger = logging.getLogger(__name__)


class WriteLimit(Protocol):
    """The processing limit on database writes (``lua_redis.limit.RedisWriteLimit``), shared by every worker.

    ``take`` answers how many seconds to wait before writing ``writes`` records (then counted),
    or None when that would pass ``max_wait_s`` (nothing counted); ``StateUnavailableError``
    when Redis cannot be reached."""

    def take(self, writes: int, max_wait_s: float) -> float | None: ...


class DeadLetterQueue(Protocol):
    """The DLQ: takes the worker's rejections; returns the positions of those it did not accept."""

    def send(self, rejections: Sequence[Rejection]) -> set[Position]: ...


class RecordOutcome(StrEnum):
    ISSUED = "ISSUED"
    ALREADY_ISSUED = "ALREADY_ISSUED"
    ALREADY_FAILED = "ALREADY_FAILED"
    REJECTED = "REJECTED"
    TRANSIENT = "TRANSIENT"


@dataclass(frozen=True)
class Verdict:
    outcome: RecordOutcome
    reason: str = ""


_GROUP_VERDICTS = {
    GroupOutcome.ISSUED: Verdict(RecordOutcome.ISSUED),
    GroupOutcome.ALREADY_ISSUED: Verdict(RecordOutcome.ALREADY_ISSUED),
    GroupOutcome.ALREADY_FAILED: Verdict(RecordOutcome.ALREADY_FAILED, "the request has a recorded failure"),
    GroupOutcome.COUPON_NOT_FOUND: Verdict(RecordOutcome.REJECTED, "COUPON_NOT_FOUND"),
    GroupOutcome.NO_STOCK: Verdict(RecordOutcome.REJECTED, "NO_STOCK"),
}


@dataclass(frozen=True)
class LockTimes:
    lease_s: int
    wait_s: int


@dataclass(frozen=True)
class Throttle:
    """The processing limit, and how long one batch may wait for it in all (below the worker's
    timeout): a group that would wait longer is TRANSIENT, retried by the mapping, never a
    dead letter."""

    limit: WriteLimit
    budget_s: float
    sleep: Callable[[float], None] = time.sleep


class IssuePersister:
    def __init__(
        self,
        ledger: IssueLedger,
        locks: CouponLocks,
        dlq: DeadLetterQueue,
        lock: LockTimes,
        throttle: Throttle | None = None,
    ) -> None:
        self._ledger = ledger
        self._locks = locks
        self._dlq = dlq
        self._lock = lock
        self._throttle = throttle
        self._waited_s = 0.0  # for the processing limit, within the batch being persisted

    def persist(self, batch: Sequence[Delivered]) -> dict[Position, Verdict]:
        """A verdict for every record of the batch; one bad record never blocks the others."""
        self._waited_s = 0.0
        verdicts: dict[Position, Verdict] = {}
        rejections: list[Rejection] = []
        groups: dict[int, list[Delivered]] = defaultdict(list)
        for delivered in sorted(batch, key=lambda delivered: delivered.position):  # Kafka order
            if delivered.record is None:
                reason = f"MALFORMED: {delivered.problem}"
                verdicts[delivered.position] = Verdict(RecordOutcome.REJECTED, reason)
                rejections.append(Rejection(delivered, reason))
            else:
                groups[delivered.record.coupon_id].append(delivered)
        for coupon_id, group in groups.items():
            group_verdicts = self._persist_group(coupon_id, group)
            verdicts.update(group_verdicts)
            rejections.extend(
                Rejection(delivered, group_verdicts[delivered.position].reason)
                for delivered in group
                if group_verdicts[delivered.position].outcome is RecordOutcome.REJECTED
            )
        for position in self._dlq.send(rejections) if rejections else set():
            verdicts[position] = Verdict(RecordOutcome.TRANSIENT, "dead letter not accepted by the DLQ")
        return verdicts

    def _persist_group(self, coupon_id: int, group: list[Delivered]) -> dict[Position, Verdict]:
        records = [delivered.record for delivered in group if delivered.record is not None]
        try:
            if not self._admitted(len(records)):
                reason = "the processing limit admits no more writes within this batch's wait"
                logger.info("coupon group deferred by the processing limit", extra={"couponId": coupon_id})
                return {delivered.position: Verdict(RecordOutcome.TRANSIENT, reason) for delivered in group}
            with self._locks.issue(coupon_id, lease_s=self._lock.lease_s, wait_s=self._lock.wait_s):
                outcomes = self._ledger.record_group(coupon_id, records)
        except (LockUnavailableError, StateUnavailableError, DatabaseUnavailableError) as exc:
            logger.warning("coupon group will be retried", extra={"couponId": coupon_id, "detail": str(exc)})
            return {delivered.position: Verdict(RecordOutcome.TRANSIENT, str(exc)) for delivered in group}
        verdicts = zip(group, outcomes, strict=True)
        return {delivered.position: _GROUP_VERDICTS[outcome] for delivered, outcome in verdicts}

    def _admitted(self, writes: int) -> bool:
        """Wait until the processing limit admits ``writes`` (at once without a limit)."""
        if self._throttle is None:
            return True
        wait_s = self._throttle.limit.take(writes, self._throttle.budget_s - self._waited_s)
        if wait_s is None:
            return False
        if wait_s > 0:
            self._throttle.sleep(wait_s)
            self._waited_s += wait_s
        return True
