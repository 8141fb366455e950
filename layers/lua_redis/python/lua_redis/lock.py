"""Per-coupon Redis locks: owner token, lease, safe release, a wait that does not spin.

Built on python-redis-lock: acquisition is ``SET NX EX`` with a random owner token, release is a
Lua compare-and-delete that also pushes onto a signal list, and waiters block on ``BLPOP`` of
that list instead of polling. The database constraints remain the last guard should a lease
run out while its holder still works.

:class:`RedisCouponLocks` is what the domain holds (its ``CouponLocks`` port): the two locks of a
coupon by purpose, so that no caller builds a lock name or touches the client.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import redis
import redis_lock

from coupon_core.backend_errors import LockUnavailableError
from coupon_core.domain.ids import validate_id
from lua_redis.client import redis_unavailable

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
    with redis_unavailable:
        acquired = lock.acquire(timeout=wait_s)
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


def state_lock_name(coupon_id: int) -> str:
    """Lock held while a coupon's state is built or reconciled (key ``lock:coupon-state:{id}``)."""
    return f"coupon-state:{{{coupon_id}}}"


def issue_lock_name(coupon_id: int) -> str:
    """Lock held by the worker while it persists a coupon's records (key ``lock:coupon-issue:{id}``)."""
    return f"coupon-issue:{{{coupon_id}}}"


class RedisCouponLocks:
    """The two locks of a coupon.

    The *state* lock serialises building and reconciling a coupon's Redis state; the *issue*
    lock serialises the worker's writes of one coupon. A waiter blocks on the client's socket,
    so its socket timeout must exceed the longest ``wait_s``.
    """

    def __init__(self, client: redis.Redis) -> None:
        self._client = client

    def state(self, coupon_id: int, *, lease_s: int, wait_s: int) -> AbstractContextManager[None]:
        return held_lock(self._client, state_lock_name(coupon_id), lease_s=lease_s, wait_s=wait_s)

    def issue(self, coupon_id: int, *, lease_s: int, wait_s: int) -> AbstractContextManager[None]:
        return held_lock(self._client, issue_lock_name(coupon_id), lease_s=lease_s, wait_s=wait_s)
