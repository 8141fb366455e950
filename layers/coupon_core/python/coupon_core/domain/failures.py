"""Settling dead letters: release the reservations and record the failures (the DLQ handler's domain).

A dead letter names failed requests: one (a rejection letter) or a range of Kafka records (an
on-failure letter, read back by offset). They are settled coupon by coupon. For each coupon,
one transaction, serialised with the worker's on the coupon row, records a
``coupon_issue_failures`` row per request, unless its user holds an issue (an earlier attempt
committed: that issue is the request's outcome). Once it commits, the reservations of the
recorded requests are released in one call, fenced by their reservation times so that a stale
letter never frees a newer reservation, and what each release found is kept on its row. So every
SUCCESS ends as exactly one of an issue or a recorded failure (invariant I3), and a record
replayed later is never issued (the worker refuses request ids with a failure).

Releasing after the commit, not before, is what keeps an issued user's copy: a release that ran
first could free a copy the worker was about to issue.

The release is made under the coupon's state lock, the reconcile's. A reconcile counts a record
after the worker group's committed offsets as a holder unless its failure is recorded, and the
group may not have moved past a dead-lettered record yet. Under the lock, a reconcile either
reads the database after the failure's commit (and leaves the request out) or applies its
changes before the release (which then removes what it kept): it never puts the released
holder back. A lock still held after its wait raises, and SQS redelivers the letter: the
failure is already recorded, and the release is made again.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from coupon_core.domain.dead_letters import OffsetRange, OnFailureLetter, RejectionLetter, read_dead_letter
from coupon_core.domain.delivery import Delivered
from coupon_core.domain.ledger import Failure, FailureLedger, FailureOutcome
from coupon_core.domain.ports import CouponLocks, Reservations

logger = logging.getLogger(__name__)

RELEASE_LOCK_LEASE_S = 30
RELEASE_LOCK_WAIT_S = 10  # as long as a reconcile waits for it; the client's socket timeout exceeds it


class RangeReader(Protocol):
    """Reads records back from Kafka by offset; raises ``ReadBackError``."""

    def read(self, offsets: OffsetRange) -> Sequence[Delivered]: ...


class FailureRecorder:
    def __init__(self, ledger: FailureLedger, store: Reservations, locks: CouponLocks, reader: RangeReader) -> None:
        self._ledger = ledger
        self._store = store
        self._locks = locks
        self._reader = reader

    def handle(self, body: str) -> list[FailureOutcome]:
        """Settle one DLQ message; raises if it cannot be read or settled (SQS then redelivers it)."""
        letter = read_dead_letter(body)
        if isinstance(letter, RejectionLetter):
            failures = [Failure(letter.record, letter.reason, letter.source)]
        else:
            failures = self._read_back(letter)
        by_coupon: dict[int, list[Failure]] = defaultdict(list)
        for failure in failures:
            by_coupon[failure.record.coupon_id].append(failure)
        return [outcome for coupon_id, group in by_coupon.items() for outcome in self._settle(coupon_id, group)]

    def _read_back(self, letter: OnFailureLetter) -> list[Failure]:
        failures = []
        for offsets in letter.ranges:
            for delivered in self._reader.read(offsets):
                if delivered.record is None:  # the worker sent it to the DLQ itself, as malformed
                    logger.warning("skipping a malformed record", extra={"position": str(delivered.position)})
                    continue
                failures.append(Failure(delivered.record, f"RETRIES_EXHAUSTED: {letter.condition}", delivered.position))
        return failures

    def _settle(self, coupon_id: int, failures: Sequence[Failure]) -> list[FailureOutcome]:
        outcomes = self._ledger.record_failures(coupon_id, failures)
        settled = [
            f for f, outcome in zip(failures, outcomes, strict=True) if outcome is not FailureOutcome.ALREADY_ISSUED
        ]
        if settled:
            with self._locks.state(coupon_id, lease_s=RELEASE_LOCK_LEASE_S, wait_s=RELEASE_LOCK_WAIT_S):
                found = self._store.release_all(coupon_id, [(f.record.user_id, f.record.reserved_at) for f in settled])
            self._ledger.note_releases(
                {f.record.request_id: release for f, release in zip(settled, found, strict=True)}
            )
        logger.info(
            "dead letters settled",
            extra={"couponId": coupon_id, "outcomes": {o.value: outcomes.count(o) for o in set(outcomes)}},
        )
        return outcomes
