"""Every exception of the Redis state layer, and the one way Redis errors become them.

    LuaRedisError                       the root of this layer's exceptions
    ├── InvalidInputError (ValueError)  an argument is malformed; raised before Redis is touched
    ├── StateUnavailableError           Redis could not be reached, did not answer in time, or is
    │                                   full (``noeviction`` refuses writes): callers answer 503
    │                                   or retry later
    └── LockUnavailableError            a lock was still held by another owner when the wait ran out

The two "unavailable" errors are also ``driver_errors.ServerUnavailableError``, as the coupon
layer's are. redis-py's connection and timeout errors never leave this layer: every call that
reaches Redis runs under ``client.redis_unavailable`` (a ``with`` block or a decorator), which
raises :class:`StateUnavailableError` with the driver's error chained as ``__cause__``. This
module imports no driver, so that the domain can name these errors without loading redis-py.
"""

from __future__ import annotations

from driver_errors import ServerUnavailableError


class LuaRedisError(Exception):
    """The root of this layer's exceptions."""


class InvalidInputError(LuaRedisError, ValueError):
    """An argument is malformed; raised before Redis is touched."""


class StateUnavailableError(LuaRedisError, ServerUnavailableError):
    """Redis could not be reached, did not answer in time, or is full; the original error is ``__cause__``."""


class LockUnavailableError(LuaRedisError, ServerUnavailableError):
    """A lock was still held by someone else when the wait ran out."""
