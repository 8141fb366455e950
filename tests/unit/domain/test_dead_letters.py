"""Dead letters without servers: the rejection letter, the SQS DLQ adapter (moto), reading letters."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest

from coupon_core.adapters.sqs_dlq import SqsDeadLetterQueue
from coupon_core.backend_errors import UnreadableDeadLetterError
from coupon_core.domain.dead_letters import (
    OffsetRange,
    OnFailureLetter,
    Rejection,
    RejectionLetter,
    read_dead_letter,
)
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.records import IssueRecord

MESSAGE = IssueRecord(3, 7, uuid.UUID("00000000-0000-4000-8000-000000000009"), 1_700_000_000_123)
WHERE = Position("coupon.issue.v1", 2, 41)


@pytest.fixture
def sqs(aws):
    return boto3.client("sqs", region_name=aws)


def test_a_rejection_round_trips_through_its_envelope():
    envelope = Rejection(Delivered(WHERE, MESSAGE), "NO_STOCK").envelope()
    assert envelope["kind"] == "coupon.issue.rejected"
    assert envelope["v"] == 1
    assert read_dead_letter(json.dumps(envelope)) == RejectionLetter(MESSAGE, "NO_STOCK", WHERE)


def test_the_sink_sends_one_message_per_rejection_in_batches_of_ten(sqs):
    url = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    rejections = [Rejection(Delivered(Position("t", 0, offset), MESSAGE), "NO_STOCK") for offset in range(23)]

    unsent = SqsDeadLetterQueue(url, sqs).send(rejections)

    assert unsent == set()
    bodies = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for message in messages:
            bodies.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert sorted(body["source"]["offset"] for body in bodies) == list(range(23))


def test_a_queue_that_refuses_returns_every_position_as_unsent(sqs):
    missing = "https://sqs.eu-west-1.amazonaws.com/123456789012/no-such-queue"
    rejections = [Rejection(Delivered(Position("t", 0, offset), MESSAGE), "NO_STOCK") for offset in range(3)]
    assert SqsDeadLetterQueue(missing, sqs).send(rejections) == {Position("t", 0, o) for o in range(3)}


def test_the_mappings_on_failure_record_becomes_offset_ranges():
    body = {
        "requestContext": {"condition": "RetryAttemptsExhausted"},
        "KafkaBatchInfo": {
            "recordsInfo": {
                "coupon.issue.v1-0": {"firstRecordOffset": "10", "lastRecordOffset": "12"},
                "coupon.issue.v1-11": {"firstRecordOffset": "5", "lastRecordOffset": "5"},
            }
        },
    }
    assert read_dead_letter(json.dumps(body)) == OnFailureLetter(
        "RetryAttemptsExhausted",
        (OffsetRange("coupon.issue.v1", 0, 10, 12), OffsetRange("coupon.issue.v1", 11, 5, 5)),
    )


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("nope", "body is not JSON"),
        ("[]", "body is not a JSON object"),
        (json.dumps({"kind": "x", "v": 1}), "unknown dead letter kind 'x'"),
        (json.dumps({"kind": "coupon.issue.rejected", "v": 2}), "version 2"),
        (json.dumps({"kind": "coupon.issue.rejected", "v": 1, "couponId": 1}), "incomplete envelope"),
        (json.dumps({"kind": "coupon.issue.malformed", "v": 1, "reason": "x"}), "malformed Kafka record"),
        (json.dumps({"KafkaBatchInfo": {}}), "incomplete on-failure record"),
        (json.dumps({"KafkaBatchInfo": {"recordsInfo": {}}}), "without a valid offset range"),
        (
            json.dumps(
                {"KafkaBatchInfo": {"recordsInfo": {"t-0": {"firstRecordOffset": "9", "lastRecordOffset": "3"}}}}
            ),
            "without a valid offset range",
        ),
    ],
)
def test_unreadable_messages_say_why(body, reason):
    with pytest.raises(UnreadableDeadLetterError, match=reason):
        read_dead_letter(body)
