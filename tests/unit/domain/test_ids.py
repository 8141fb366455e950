"""Id and time validation, without Redis."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coupon_core.domain.ids import validate_id, validate_millis
from coupon_core.domain.records import MAX_BIGINT
from coupon_core.errors import InvalidInputError


@given(st.integers(min_value=1, max_value=MAX_BIGINT))
def test_every_positive_bigint_is_a_valid_id(value):
    assert validate_id("userId", value) == value


@given(st.integers(max_value=0) | st.integers(min_value=MAX_BIGINT + 1))
def test_integers_outside_the_range_are_refused_with_the_name(value):
    with pytest.raises(InvalidInputError, match=r"userId must be between 1 and 9223372036854775807"):
        validate_id("userId", value)


@pytest.mark.parametrize("value", ["1", 1.0, True, None, [1], b"1"], ids=repr)
def test_non_integers_are_refused_with_their_type(value):
    with pytest.raises(InvalidInputError, match=f"couponId must be an integer, got {type(value).__name__}"):
        validate_id("couponId", value)


def test_zero_is_a_valid_time_but_not_a_valid_id():
    assert validate_millis("reservedAt", 0) == 0
    with pytest.raises(InvalidInputError):
        validate_id("userId", 0)
    with pytest.raises(InvalidInputError, match="reservedAt"):
        validate_millis("reservedAt", -1)
