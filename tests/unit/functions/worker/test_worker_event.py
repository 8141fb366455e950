"""The worker's reading of MSK events, without servers: once, through Powertools' Kafka event type."""

from __future__ import annotations

import base64

import pytest

from coupon_core.domain.delivery import Delivered, Position
from functions.worker.app import MalformedEventError, _read
from local.testkit.lambda_events import msk_event

WHERE = Position("coupon.issue.v1", 0, 1)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "record has no value"),
        ("***", "value is not base64"),
        (base64.b64encode(b"{").decode(), "value is not JSON"),
        (base64.b64encode(b'{"v": 1}').decode(), "missing fields"),
    ],
)
def test_undecodable_values_carry_their_problem(value, problem):
    delivered = Delivered.decode(WHERE, value)
    assert delivered.record is None
    assert problem in delivered.problem


@pytest.mark.parametrize(
    ("event", "error"),
    [
        ({}, "an MSK event has 'records'"),
        ({"records": []}, "an MSK event has 'records'"),
        ({"records": {"t-0": [{"topic": "t", "partition": 0}]}}, "lacks topic, partition or offset"),
    ],
)
def test_an_event_that_is_not_an_msk_event_is_refused(event, error):
    with pytest.raises(MalformedEventError, match=error):
        _read(event)


def test_records_come_out_of_every_topic_partition():
    event = msk_event([("t", 0, 5, b"x"), ("t", 1, 9, b"y")])
    read = _read(event)
    assert [delivered.position for _, delivered in read] == [Position("t", 0, 5), Position("t", 1, 9)]
    assert [record.raw_event for record, _ in read] == [*event["records"]["t-0"], *event["records"]["t-1"]]
