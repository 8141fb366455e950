"""The issue request's two readings agree: a body pydantic's JSON reader parses and validates in
one call (``IssueRequest.model_validate_json``, the intake's fast reading) is one the reading that
names each problem (``untrusted_json`` then ``IssueRequest.model_validate``) accepts too, with the
same coupon and user. A body the fast reading refuses is answered by the other one alone, so the
answers cannot differ; a body it accepted that the other refuses would be a request let through."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from functions.http_api.answers import RequestRefusedError, problems
from functions.http_api.issue_body import IssueRequest
from functions.http_api.request import _body, issue_request
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


def _fast(text: str) -> tuple[int, int | None] | None:
    try:
        request = IssueRequest.model_validate_json(text)
    except ValidationError:
        return None
    return request.couponId, request.userId


@settings(max_examples=1500)
@given(bodies())
def test_a_body_the_fast_reading_accepts_is_accepted_alike_by_the_reading_that_names_problems(text):
    fast = _fast(text)
    errors, request = _body(text)
    if fast is not None:
        assert errors == [], text
        assert request is not None
        assert (request.couponId, request.userId) == fast


def test_the_fast_reading_accepts_the_request_of_a_sale():
    assert _fast('{"couponId": 7, "userId": 12345}') == (7, 12345)


@given(bodies())
def test_a_refused_body_is_answered_with_the_problems_the_slow_reading_names(text):
    event = api_event("POST", "/coupon-issues", raw_body=text)
    errors, request = _body(text)
    if errors:
        with pytest.raises(RequestRefusedError) as refused:
            issue_request(event)
        assert refused.value.answer.body["error"] == problems(errors)
    else:
        assert request is not None
        issue, _ = issue_request(event)
        assert (issue.couponId, issue.userId) == (request.couponId, request.userId)
