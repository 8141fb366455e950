"""Who holds a copy: the records in flight merged with the database's snapshot."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from coupon_core.domain.coupons import Coupon, IssuedUsers
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.in_flight import InFlight
from coupon_core.domain.records import IssueRecord

NOW = datetime(2026, 12, 1, tzinfo=UTC)
COUPON = Coupon(3, "c", 10, 9, NOW, NOW, issued=1)


def in_flight(*messages: IssueRecord) -> InFlight:
    return InFlight.of_records([Delivered(Position("t", 0, i), m) for i, m in enumerate(messages)])


def test_holders_are_the_users_in_flight_and_the_issued_ones_over_them():
    flying, issued = IssueRecord(3, 7, uuid.uuid4(), 100), uuid.uuid4()
    snapshot = IssuedUsers(COUPON, reserved_at={8: 50}, request_ids={8: str(issued)})
    assert in_flight(flying).with_issued(snapshot) == ({7: 100, 8: 50}, {7: str(flying.request_id), 8: str(issued)})


def test_a_record_in_flight_whose_failure_is_recorded_holds_nothing():
    failed, other = IssueRecord(3, 7, uuid.uuid4(), 100), IssueRecord(3, 9, uuid.uuid4(), 120)
    snapshot = IssuedUsers(COUPON, reserved_at={}, settled_requests=frozenset({str(failed.request_id)}))
    assert in_flight(failed, other).with_issued(snapshot) == ({9: 120}, {9: str(other.request_id)})


def test_a_users_newer_request_after_a_failed_one_holds_its_copy():
    failed, newer = IssueRecord(3, 7, uuid.uuid4(), 100), IssueRecord(3, 7, uuid.uuid4(), 200)
    snapshot = IssuedUsers(COUPON, reserved_at={}, settled_requests=frozenset({str(failed.request_id)}))
    assert in_flight(failed, newer).with_issued(snapshot) == ({7: 200}, {7: str(newer.request_id)})


def test_a_record_in_flight_whose_copy_was_issued_and_canceled_holds_nothing():
    """A tail read before the worker issued the request, applied after its user canceled it on a
    coupon that allows a second take: the database says the copy went back to stock."""
    canceled = IssueRecord(3, 7, uuid.uuid4(), 100)
    snapshot = IssuedUsers(COUPON, reserved_at={}, settled_requests=frozenset({str(canceled.request_id)}))
    assert in_flight(canceled).with_issued(snapshot) == ({}, {})
