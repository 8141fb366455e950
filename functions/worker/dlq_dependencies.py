"""The DLQ handler's collaborators, built once per Lambda container."""

from __future__ import annotations

import functools

from coupon_core.adapters.kafka.range_reader import KafkaRangeReader
from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.adapters.postgres.ledger import SqlLedger
from coupon_core.domain.failures import RELEASE_LOCK_WAIT_S, FailureRecorder
from coupon_core.settings.worker import DlqHandlerSettings
from lua_redis.client import redis_client
from lua_redis.lock import RedisCouponLocks
from lua_redis.store import ReservationStore


@functools.cache
def failure_recorder() -> FailureRecorder:
    """Read the DLQ handler's settings and wire the recorder."""
    settings = DlqHandlerSettings.from_env()
    client = redis_client(settings.redis, socket_timeout=RELEASE_LOCK_WAIT_S + 5)  # BLPOP waits on this socket
    return FailureRecorder(
        SqlLedger(make_engine(settings.database)),
        ReservationStore(client),
        RedisCouponLocks(client),
        KafkaRangeReader(
            settings.kafka, max_records=settings.read_back.max_records, timeout_s=settings.read_back.timeout_s
        ),
    )


def reset() -> None:
    """Forget the wired collaborators (tests change the environment between cases)."""
    failure_recorder.cache_clear()
