"""The worker's collaborators, built once per Lambda container (the DLQ handler's: ``dlq_dependencies.py``)."""

from __future__ import annotations

import functools

from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.adapters.postgres.ledger import SqlLedger
from coupon_core.adapters.sqs_dlq import SqsDeadLetterQueue
from coupon_core.domain.persisting import IssuePersister, LockTimes, Throttle
from coupon_core.settings.worker import WorkerSettings
from lua_redis.client import redis_client
from lua_redis.limit import RedisWriteLimit, WriteRate
from lua_redis.lock import RedisCouponLocks


@functools.cache
def persister() -> IssuePersister:
    """Read the worker's settings (failing with the variable's name) and wire the persister."""
    settings = WorkerSettings.from_env()
    client = redis_client(settings.redis, socket_timeout=settings.lock.wait_s + 2)  # BLPOP waits on this socket
    limit = settings.write_limit
    throttle = (
        Throttle(RedisWriteLimit(client, WriteRate(limit.per_second, limit.burst)), budget_s=limit.wait_s)
        if limit.per_second
        else None
    )
    return IssuePersister(
        SqlLedger(make_engine(settings.database)),
        RedisCouponLocks(client),
        SqsDeadLetterQueue(settings.dlq.url),
        LockTimes(lease_s=settings.lock.lease_s, wait_s=settings.lock.wait_s),
        throttle,
    )


def reset() -> None:
    """Forget the wired collaborators (tests change the environment between cases)."""
    persister.cache_clear()
