"""How a driver's errors become a layer's own, shared by both layers without importing a driver.

The Redis layer (``lua_redis``) and the coupon layer (``coupon_core``) each have one error root
(``LuaRedisError``, ``CouponError``). Their adapters turn what a driver raises (redis-py,
SQLAlchemy, kafka-python) into those with :class:`Reraise`, the one way errors are mapped in this
project, so that neither the domain nor a handler ever sees a driver's types. Every error that
means "a server did not answer as it should; the same call may succeed later" is also a
:class:`ServerUnavailableError`, whichever layer raised it, so that a handler answers all of them
(503 with ``Retry-After``) by catching one type.

It lives in this layer, beside ``lua_redis`` rather than in it, so that importing it does not
import redis-py: ``coupon_core``'s PostgreSQL and Kafka adapters use it too.
"""

from __future__ import annotations

from contextlib import ContextDecorator
from types import TracebackType


class ServerUnavailableError(Exception):
    """A server did not answer as it should; the same call may succeed later (a mixin of each
    layer's own "unavailable" errors)."""


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
