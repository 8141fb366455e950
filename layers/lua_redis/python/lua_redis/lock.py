"""A per-coupon Redis lock: owner token, lease, safe release, a wait that does not spin.

Built on python-redis-lock: acquisition is ``SET NX EX`` with a random owner token, release is a
Lua compare-and-delete that also pushes onto a signal list, and waiters block on ``BLPOP`` of
that list instead of polling. The database constraints remain the last guard should a lease
run out while its holder still works.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import redis
import redis_lock

from lua_redis.errors import LockUnavailableError, StateUnavailableError
from lua_redis.ids import validate_id

logger = logging.getLogger(__name__)


@contextmanager
def held_lock(client: redis.Redis, name: str, *, lease_s: int, wait_s: int) -> Iterator[None]:
    """Hold the lock ``lock:<name>`` for the ``with`` block.

    Waits at most ``wait_s`` seconds (whole seconds, at most ``lease_s``) and raises
    :class:`LockUnavailableError` if it is still held then; raises
    :class:`StateUnavailableError` if Redis cannot be reached. A lease that ran out before the
    release is logged, not raised: the work inside the block is done by then.
    """
    validate_id("lease_s", lease_s)
    validate_id("wait_s", wait_s)
    lock = redis_lock.Lock(client, name, expire=lease_s)
    try:
        acquired = lock.acquire(timeout=wait_s)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise StateUnavailableError(f"Redis unavailable while taking lock {name}: {exc}") from exc
    if not acquired:
        raise LockUnavailableError(f"lock {name} still held by another owner after {wait_s} s")
    try:
        yield
    finally:
        try:
            lock.release()
        except redis_lock.NotAcquired:
            logger.warning("lease of lock %s ran out before its release", name)
        except (redis.ConnectionError, redis.TimeoutError):
            logger.warning("could not release lock %s; its lease will expire", name, exc_info=True)
