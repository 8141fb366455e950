"""The Kafka record format: round trip, and precise reasons for every malformed value."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coupon_core.backend_errors import MalformedRecordError
from coupon_core.domain.delivery import decode_record
from coupon_core.domain.records import MAX_BIGINT, IssueRecord

ids = st.integers(min_value=1, max_value=MAX_BIGINT)


@given(ids, ids, st.uuids(), st.integers(min_value=0, max_value=2**53))
def test_round_trip(coupon_id, user_id, request_id, reserved_at):
    message = IssueRecord(coupon_id, user_id, request_id, reserved_at)
    assert decode_record(message.encode()) == message
    assert message.key == str(coupon_id).encode()


def test_the_agreed_format():
    message = IssueRecord(3, 7, uuid.UUID("00000000-0000-4000-8000-000000000001"), 1_700_000_000_000)
    assert json.loads(message.encode()) == {
        "v": 1,
        "couponId": 3,
        "userId": 7,
        "requestId": "00000000-0000-4000-8000-000000000001",
        "reservedAt": 1_700_000_000_000,
    }


GOOD = {"v": 1, "couponId": 3, "userId": 7, "requestId": "00000000-0000-4000-8000-000000000001", "reservedAt": 5}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff\xfe", "value is not JSON"),
        (b"{not json", "value is not JSON"),
        (b"[1, 2]", "value must be a JSON object, got list"),
        (json.dumps({"v": 1}).encode(), "missing fields: couponId, userId, requestId, reservedAt"),
        (json.dumps({**GOOD, "v": 2}).encode(), "unsupported version 2"),
        (json.dumps({**GOOD, "couponId": "3"}).encode(), "couponId must be an integer, got str"),
        (json.dumps({**GOOD, "userId": 0}).encode(), "userId must be between 1 and"),
        (json.dumps({**GOOD, "requestId": "nope"}).encode(), "requestId must be a UUID string"),
        (json.dumps({**GOOD, "requestId": 5}).encode(), "requestId must be a UUID string"),
        (json.dumps({**GOOD, "reservedAt": -1}).encode(), "reservedAt must be between 0 and"),
        (json.dumps({**GOOD, "reservedAt": 1.5}).encode(), "reservedAt must be an integer, got float"),
        (b'{"v": 1, "couponId": ' + b"9" * 100_000 + b"}", "missing fields: userId"),
        (json.dumps({**GOOD, "userId": int("9" * 100)}).encode(), "userId must be between 1 and"),
        (b"[" * 100_000 + b"]" * 100_000, "value is not JSON: nested too deeply"),
    ],
)
def test_malformed_values_are_refused_with_a_reason(raw, reason):
    with pytest.raises(MalformedRecordError, match=reason):
        decode_record(raw)
