"""The issue request read from hostile bodies: JSON-like text with repeated names, odd spellings
of numbers and bytes around it. Each is read once; a valid one is the request, anything else a
422 naming each problem as Python's JSON reader and the model name them, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
from hypothesis import given
from hypothesis import strategies as st

from functions.http_api.answers import RequestRefusedError, problems
from functions.intake.request import _body, issue_request
from local.testkit.lambda_events import api_event

MAX = 2**63 - 1
NAMES = st.sampled_from(["couponId", "userId", "coupon\\u0049d", "other", ""])
NUMBERS = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([0, 1, MAX, MAX + 1, 10**30, -(10**30)]),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
)
# How a number may be written that json.dumps does not write: exponents, leading zeros, NaN, ...
SPELLINGS = st.sampled_from(["1e2", "-0", "05", "1.0", "NaN", "Infinity", "-Infinity", "0x10", "+1", "1_0", '"7"'])
DECORATIONS = st.sampled_from(["", " ", "\n", "\ufeff", "\x00", ",", "}", " //", "\t\r\n"])


@st.composite
def bodies(draw: Any) -> str:
    """JSON-like text: objects of likely and unlikely members, written with json.dumps or by hand,
    with repeated names, odd spellings of numbers, and bytes before or after."""
    members = draw(st.lists(st.tuples(NAMES, NUMBERS | SPELLINGS.map(lambda s: ("raw", s))), max_size=4))
    parts = []
    for name, value in members:
        text = value[1] if isinstance(value, tuple) else json.dumps(value)
        parts.append(f'"{name}"{draw(st.sampled_from([":", " : "]))}{text}')
    document = "{" + ",".join(parts) + "}"
    if draw(st.booleans()):
        document = draw(st.sampled_from(["[", "[[", '"', "1", "null"])) + document[: draw(st.integers(0, 40))]
    return draw(DECORATIONS) + document + draw(DECORATIONS)


@given(bodies())
def test_a_body_is_the_request_or_a_refusal_naming_its_problems(text):
    event = APIGatewayProxyEvent(api_event("POST", "/coupon-issues", raw_body=text))
    errors, request = _body(text)
    if errors:
        with pytest.raises(RequestRefusedError) as refused:
            issue_request(event)
        assert refused.value.answer.body["error"] == problems(errors)
    else:
        assert request is not None
        issue, _ = issue_request(event)
        assert (issue.couponId, issue.userId) == (request.couponId, request.userId)


def test_the_request_of_a_sale_is_read_with_its_key():
    event = api_event("POST", "/coupon-issues", {"couponId": 7, "userId": 12345}, headers={"Idempotency-Key": "k-1"})
    issue, key = issue_request(APIGatewayProxyEvent(event))
    assert (issue.couponId, issue.userId, key) == (7, 12345, "k-1")
