"""Exceptions raised by the Redis state layer."""

from __future__ import annotations


class InvalidInputError(ValueError):
    """An argument is malformed; raised before Redis is touched."""


class StateUnavailableError(Exception):
    """Redis could not be reached or did not answer in time.

    The one exception type callers catch to answer 503 or to retry later; the original
    redis-py error is chained as ``__cause__``.
    """


class LockUnavailableError(Exception):
    """A lock was still held by someone else when the wait ran out."""
