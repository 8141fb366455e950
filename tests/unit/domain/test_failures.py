"""Settling dead letters through the ports: each path, and what it changes in which order."""

from __future__ import annotations

import json
import uuid

import pytest

from coupon_core.backend_errors import LockUnavailableError, UnreadableDeadLetterError
from coupon_core.domain.dead_letters import Rejection
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.failures import FailureRecorder
from coupon_core.domain.ledger import FailureOutcome
from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import ReleaseOutcome
from tests.unit.domain import fakes

TOPIC = "coupon.issue.v1"
MESSAGE = IssueRecord(3, 7, uuid.UUID("00000000-0000-4000-8000-000000000009"), 1_700_000_000_123)
WHERE = Position(TOPIC, 2, 41)


def rejection_letter(message: IssueRecord = MESSAGE, reason: str = "NO_STOCK") -> str:
    return json.dumps(Rejection(Delivered(WHERE, message), reason).envelope())


def on_failure_letter(first: int, last: int) -> str:
    return json.dumps(
        {
            "requestContext": {"condition": "RetryAttemptsExhausted"},
            "KafkaBatchInfo": {
                "recordsInfo": {f"{TOPIC}-2": {"firstRecordOffset": str(first), "lastRecordOffset": str(last)}}
            },
        }
    )


def recorder(
    ledger: fakes.FailureLedger,
    store: fakes.Reservations,
    reader: fakes.RangeReader | None = None,
    locks: fakes.Locks | None = None,
) -> FailureRecorder:
    return FailureRecorder(ledger, store, locks or fakes.Locks(), reader or fakes.RangeReader())


def test_a_rejection_is_recorded_then_released_fenced_and_the_release_kept():
    ledger, store = fakes.FailureLedger(), fakes.Reservations(release_answer=ReleaseOutcome.STALE)

    assert recorder(ledger, store).handle(rejection_letter()) == [FailureOutcome.RECORDED]

    assert store.releases == [(3, 7, MESSAGE.reserved_at)]
    failure = ledger.failures[MESSAGE.request_id]
    assert (failure.record, failure.reason, failure.source) == (MESSAGE, "NO_STOCK", WHERE)
    assert ledger.releases == {MESSAGE.request_id: ReleaseOutcome.STALE}


def test_a_letter_handled_twice_is_recorded_once_and_released_again_harmlessly():
    ledger, store = fakes.FailureLedger(), fakes.Reservations()
    handler = recorder(ledger, store)
    assert handler.handle(rejection_letter()) == [FailureOutcome.RECORDED]
    store.release_answer = ReleaseOutcome.NOT_HELD
    assert handler.handle(rejection_letter()) == [FailureOutcome.ALREADY_RECORDED]
    assert len(ledger.failures) == 1
    assert ledger.releases == {MESSAGE.request_id: ReleaseOutcome.RELEASED}  # the first release is kept


def test_a_letter_for_an_issued_user_changes_nothing():
    ledger, store = fakes.FailureLedger(issued={(3, 7)}), fakes.Reservations()
    assert recorder(ledger, store).handle(rejection_letter()) == [FailureOutcome.ALREADY_ISSUED]
    assert (store.releases, ledger.failures) == ([], {})


def test_nothing_is_released_when_the_failure_could_not_be_recorded():
    class DatabaseDown(fakes.FailureLedger):
        def record_failures(self, coupon_id, failures):
            raise RuntimeError("database down")

    store = fakes.Reservations()
    with pytest.raises(RuntimeError):
        recorder(DatabaseDown(), store).handle(rejection_letter())
    assert store.releases == []  # released only once the failure is committed


def test_an_on_failure_letter_is_read_back_and_settled_in_one_transaction_per_coupon():
    other = IssueRecord(3, 8, uuid.uuid4(), 1_700_000_000_200)
    elsewhere = IssueRecord(4, 7, uuid.uuid4(), 1_700_000_000_300)
    reader = fakes.RangeReader(
        [
            Delivered(Position(TOPIC, 2, 10), MESSAGE),
            Delivered(Position(TOPIC, 2, 11), None, "value is not JSON"),
            Delivered(Position(TOPIC, 2, 12), other),
            Delivered(Position(TOPIC, 2, 13), elsewhere),
            Delivered(Position(TOPIC, 2, 14), IssueRecord(3, 9, uuid.uuid4(), 1)),  # outside the range
        ]
    )
    ledger, store = fakes.FailureLedger(issued={(3, 8)}), fakes.Reservations()

    outcomes = recorder(ledger, store, reader).handle(on_failure_letter(10, 13))

    assert outcomes == [FailureOutcome.RECORDED, FailureOutcome.ALREADY_ISSUED, FailureOutcome.RECORDED]
    assert ledger.transactions == [3, 4]
    assert store.releases == [(3, 7, MESSAGE.reserved_at), (4, 7, elsewhere.reserved_at)]
    assert ledger.failures[MESSAGE.request_id].reason == "RETRIES_EXHAUSTED: RetryAttemptsExhausted"


@pytest.mark.parametrize("body", ["not json", "[]", json.dumps({"kind": "something.else", "v": 1})])
def test_an_unreadable_letter_raises_and_changes_nothing(body):
    ledger, store = fakes.FailureLedger(), fakes.Reservations()
    with pytest.raises(UnreadableDeadLetterError):
        recorder(ledger, store).handle(body)
    assert (store.releases, ledger.failures) == ([], {})


def test_the_release_is_made_under_the_coupons_state_lock_the_reconciles():
    ledger, store, locks = fakes.FailureLedger(), fakes.Reservations(), fakes.Locks()
    recorder(ledger, store, locks=locks).handle(rejection_letter())
    assert locks.taken == [("state", 3)]
    assert store.releases == [(3, 7, MESSAGE.reserved_at)]


def test_a_state_lock_held_past_its_wait_raises_after_the_commit_and_the_redelivery_releases():
    ledger, store, locks = fakes.FailureLedger(), fakes.Reservations(), fakes.Locks(held={3})
    handler = recorder(ledger, store, locks=locks)
    with pytest.raises(LockUnavailableError):
        handler.handle(rejection_letter())  # SQS redelivers the letter
    assert (list(ledger.failures), store.releases) == ([MESSAGE.request_id], [])

    locks.held.clear()
    assert handler.handle(rejection_letter()) == [FailureOutcome.ALREADY_RECORDED]
    assert store.releases == [(3, 7, MESSAGE.reserved_at)]
    assert ledger.releases == {MESSAGE.request_id: ReleaseOutcome.RELEASED}
