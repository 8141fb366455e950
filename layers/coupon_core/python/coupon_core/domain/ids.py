"""Ids and times checked where they enter a store or a record from anywhere but the HTTP models
(which bound them themselves): an id is a positive integer below 2**63 (a PostgreSQL BIGINT), a
time a non-negative integer of epoch milliseconds. A bad one raises ``InvalidInputError`` naming
it, before any store is called (invariant I5)."""

from __future__ import annotations

from coupon_core.domain.records import MAX_BIGINT
from coupon_core.errors import InvalidInputError


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
