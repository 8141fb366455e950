"""Every exception of the Redis state layer, and the one way Redis errors become them.

    InvalidInputError (ValueError)  an argument is malformed; raised before Redis is touched
    StateUnavailableError           Redis could not be reached, did not answer in time, or is
                                    full (``noeviction`` refuses writes): callers answer 503
                                    or retry later
    LockUnavailableError            a lock was still held by another owner when the wait ran out

redis-py's connection and timeout errors never leave this layer: every call that reaches Redis
runs under :data:`redis_unavailable` (a ``with`` block or a decorator), which raises
:class:`StateUnavailableError` with the driver's error chained as ``__cause__``. The
``coupon_core`` layer maps its own drivers' errors with the same :class:`Reraise`.
"""

from __future__ import annotations

from contextlib import ContextDecorator
from types import TracebackType

import redis


class InvalidInputError(ValueError):
    """An argument is malformed; raised before Redis is touched."""


class StateUnavailableError(Exception):
    """Redis could not be reached, did not answer in time, or is full; the original error is ``__cause__``."""


class LockUnavailableError(Exception):
    """A lock was still held by someone else when the wait ran out."""


class Reraise(ContextDecorator):
    """Raise ``error("<context>: <cause>")``, chained, for any of ``causes`` raised in the block.

    Stateless, so one instance serves as a ``with`` block and as a decorator, as often as needed.
    """

    def __init__(self, error: type[Exception], context: str, causes: tuple[type[Exception], ...]) -> None:
        self._error = error
        self._context = context
        self._causes = causes

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if isinstance(exc, self._causes):
            raise self._error(f"{self._context}: {exc!r}") from exc


redis_unavailable = Reraise(
    StateUnavailableError, "Redis unavailable", (redis.ConnectionError, redis.TimeoutError, redis.OutOfMemoryError)
)
