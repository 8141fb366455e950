"""The domain's integers: ids are positive integers below 2**63 (a PostgreSQL BIGINT), times are
epoch milliseconds. They are checked before any store is called, so that bad input never
changes state (invariant I5); the HTTP models bound their ids by the same limit."""

from __future__ import annotations

from coupon_core.errors import InvalidInputError

MAX_BIGINT = 2**63 - 1


def _validate_int(name: str, value: object, low: int) -> int:
    # bool is an int subclass but never a meaningful id; numeric strings and floats are refused
    # too: callers parse their own wire formats and hand over real integers.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{name} must be an integer, got {type(value).__name__}")
    if not low <= value <= MAX_BIGINT:
        raise InvalidInputError(f"{name} must be between {low} and {MAX_BIGINT}, got {value}")
    return value


def validate_id(name: str, value: object) -> int:
    """Return ``value`` if it is a positive integer below 2**63, else raise naming ``name``."""
    return _validate_int(name, value, 1)


def validate_millis(name: str, value: object) -> int:
    """Return ``value`` if it is a non-negative integer of epoch milliseconds."""
    return _validate_int(name, value, 0)
