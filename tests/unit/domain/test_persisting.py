"""Persisting a batch through its ports: how each group's outcomes become per-record verdicts."""

from __future__ import annotations

import uuid

from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.ledger import GroupOutcome
from coupon_core.domain.persisting import IssuePersister, LockTimes, RecordOutcome, Throttle, Verdict
from coupon_core.domain.records import IssueRecord
from coupon_core.errors import StateUnavailableError
from tests.unit.domain import fakes

TOPIC = "coupon.issue.v1"


def record(partition: int, offset: int, coupon_id: int, user_id: int, reserved_at: int) -> Delivered:
    return Delivered(Position(TOPIC, partition, offset), IssueRecord(coupon_id, user_id, uuid.uuid4(), reserved_at))


def malformed(partition: int, offset: int) -> Delivered:
    return Delivered(Position(TOPIC, partition, offset), None, "value is not JSON", "e30=")


def persister(
    ledger: fakes.IssueLedger, locks: fakes.Locks | None = None, dlq: fakes.DeadLetterQueue | None = None
) -> IssuePersister:
    return IssuePersister(ledger, locks or fakes.Locks(), dlq or fakes.DeadLetterQueue(), LockTimes(5, 1))


def test_each_group_outcome_becomes_its_verdict_and_rejections_go_to_the_dlq():
    batch = [record(0, i, 1, 10 + i, 100 + i) for i in range(4)] + [record(1, 0, 2, 13, 103)]
    ledger = fakes.IssueLedger(
        {
            1: [GroupOutcome.ISSUED, GroupOutcome.ALREADY_ISSUED, GroupOutcome.ALREADY_FAILED, GroupOutcome.NO_STOCK],
            2: [GroupOutcome.COUPON_NOT_FOUND],
        }
    )
    dlq = fakes.DeadLetterQueue()

    verdicts = persister(ledger, dlq=dlq).persist(batch)

    assert [verdicts[r.position] for r in batch] == [
        Verdict(RecordOutcome.ISSUED),
        Verdict(RecordOutcome.ALREADY_ISSUED),
        Verdict(RecordOutcome.ALREADY_FAILED, "the request has a recorded failure"),
        Verdict(RecordOutcome.REJECTED, "NO_STOCK"),
        Verdict(RecordOutcome.REJECTED, "COUPON_NOT_FOUND"),
    ]
    assert [(r.delivered.position, r.reason) for r in dlq.sent] == [
        (batch[3].position, "NO_STOCK"),
        (batch[4].position, "COUPON_NOT_FOUND"),
    ]


def test_a_malformed_record_is_rejected_alone_and_the_others_persist():
    batch = [malformed(0, 0), record(0, 1, 1, 10, 100)]
    ledger, dlq = fakes.IssueLedger({1: [GroupOutcome.ISSUED]}), fakes.DeadLetterQueue()

    verdicts = persister(ledger, dlq=dlq).persist(batch)

    assert verdicts[batch[0].position] == Verdict(RecordOutcome.REJECTED, "MALFORMED: value is not JSON")
    assert verdicts[batch[1].position] == Verdict(RecordOutcome.ISSUED)
    assert [r.delivered.position for r in dlq.sent] == [batch[0].position]


def test_a_group_goes_to_the_ledger_in_kafka_order():
    batch = [record(0, 2, 1, 12, 300), record(0, 0, 1, 10, 100), record(0, 1, 1, 11, 200)]
    ledger = fakes.IssueLedger({1: [GroupOutcome.ISSUED] * 3})

    persister(ledger).persist(batch)

    assert [m.user_id for m in ledger.groups[1]] == [10, 11, 12]


def test_a_held_lock_or_a_database_outage_makes_only_that_group_transient():
    batch = [record(0, 0, 1, 10, 100), record(1, 0, 2, 20, 200), record(2, 0, 3, 30, 300)]
    ledger = fakes.IssueLedger({3: [GroupOutcome.ISSUED]}, down={2})
    dlq = fakes.DeadLetterQueue()

    verdicts = persister(ledger, fakes.Locks(held={1}), dlq).persist(batch)

    assert [verdicts[r.position].outcome for r in batch] == [
        RecordOutcome.TRANSIENT,
        RecordOutcome.TRANSIENT,
        RecordOutcome.ISSUED,
    ]
    assert "held" in verdicts[batch[0].position].reason
    assert "could not write" in verdicts[batch[1].position].reason
    assert dlq.sent == []


def test_redis_down_at_the_lock_is_transient():
    batch = [record(0, 0, 1, 10, 100)]
    verdicts = persister(fakes.IssueLedger(), locks=fakes.Locks(down=True)).persist(batch)
    assert verdicts[batch[0].position].outcome is RecordOutcome.TRANSIENT


def test_a_rejection_the_dlq_refuses_is_transient_so_that_the_mapping_retries_it():
    batch = [record(0, 0, 1, 10, 100), record(0, 1, 1, 11, 101)]
    ledger = fakes.IssueLedger({1: [GroupOutcome.NO_STOCK, GroupOutcome.NO_STOCK]})
    dlq = fakes.DeadLetterQueue(refuses={batch[1].position})

    verdicts = persister(ledger, dlq=dlq).persist(batch)

    assert verdicts[batch[0].position] == Verdict(RecordOutcome.REJECTED, "NO_STOCK")
    assert verdicts[batch[1].position] == Verdict(RecordOutcome.TRANSIENT, "dead letter not accepted by the DLQ")


class Limit:
    """Answers each take from a script: a wait in seconds, None (refused), or an exception."""

    def __init__(self, *answers: float | Exception | None) -> None:
        self.answers = list(answers)
        self.taken: list[tuple[int, float]] = []

    def take(self, writes: int, max_wait_s: float) -> float | None:
        self.taken.append((writes, max_wait_s))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def throttled(ledger: fakes.IssueLedger, limit: Limit, slept: list[float], budget_s: float = 10) -> IssuePersister:
    throttle = Throttle(limit, budget_s=budget_s, sleep=slept.append)
    return IssuePersister(ledger, fakes.Locks(), fakes.DeadLetterQueue(), LockTimes(5, 1), throttle)


def test_each_group_waits_what_the_limit_says_within_one_budget_for_the_batch():
    batch = [record(0, 0, 1, 10, 100), record(0, 1, 1, 11, 101), record(1, 0, 2, 12, 102)]
    ledger = fakes.IssueLedger({1: [GroupOutcome.ISSUED] * 2, 2: [GroupOutcome.ISSUED]})
    limit, slept = Limit(0.0, 2.5), []

    verdicts = throttled(ledger, limit, slept).persist(batch)

    assert {v.outcome for v in verdicts.values()} == {RecordOutcome.ISSUED}
    assert limit.taken == [(2, 10), (1, 10)]  # writes per group, and what is left of the budget
    assert slept == [2.5]


def test_a_group_the_limit_cannot_admit_in_time_is_retried_never_dead_lettered():
    batch = [record(0, 0, 1, 10, 100), record(1, 0, 2, 12, 102), record(2, 0, 3, 13, 103)]
    ledger = fakes.IssueLedger({1: [GroupOutcome.ISSUED], 2: [GroupOutcome.ISSUED], 3: [GroupOutcome.ISSUED]})
    limit, slept = Limit(6.0, None, StateUnavailableError("Redis gone")), []
    dlq = fakes.DeadLetterQueue()
    throttle = Throttle(limit, budget_s=10, sleep=slept.append)

    verdicts = IssuePersister(ledger, fakes.Locks(), dlq, LockTimes(5, 1), throttle).persist(batch)

    assert [verdicts[r.position].outcome for r in batch] == [
        RecordOutcome.ISSUED,
        RecordOutcome.TRANSIENT,  # the limit would have it wait past the budget
        RecordOutcome.TRANSIENT,  # the limit is unavailable
    ]
    assert limit.taken[1] == (1, 4.0)  # the budget left after the first group's 6 s
    assert dlq.sent == []
    assert list(ledger.groups) == [1]  # only the admitted group was written
