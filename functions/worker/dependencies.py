"""The worker's and the DLQ handler's collaborators, built once per Lambda container."""

from __future__ import annotations

import functools

from coupon_core.db.engine import make_engine
from coupon_core.db.ledger import SqlIssueLedger
from coupon_core.dead_letter_queue import SqsDeadLetterQueue
from coupon_core.failures import FailureRecorder
from coupon_core.kafka_reader import KafkaRangeReader
from coupon_core.persisting import IssuePersister, LockTimes
from coupon_core.settings import DeadLetterSettings, WorkerSettings
from lua_redis import ReservationStore, connect


@functools.cache
def persister() -> IssuePersister:
    """Read the worker's settings (failing with the variable's name) and wire the persister."""
    settings = WorkerSettings.from_env()
    client = connect(settings.redis.url, socket_timeout=settings.lock_wait_s + 2)  # BLPOP waits on this socket
    return IssuePersister(
        SqlIssueLedger(make_engine(settings.database)),
        ReservationStore(client),
        client,
        SqsDeadLetterQueue(settings.dlq_url),
        LockTimes(lease_s=settings.lock_lease_s, wait_s=settings.lock_wait_s),
    )


@functools.cache
def failure_recorder() -> FailureRecorder:
    """Read the DLQ handler's settings and wire the recorder."""
    settings = DeadLetterSettings.from_env()
    return FailureRecorder(
        SqlIssueLedger(make_engine(settings.database)),
        ReservationStore(connect(settings.redis.url)),
        KafkaRangeReader(
            settings.kafka, max_records=settings.read_back_max_records, timeout_s=settings.read_back_timeout_s
        ),
    )


def reset() -> None:
    """Forget the wired collaborators (tests change the environment between cases)."""
    persister.cache_clear()
    failure_recorder.cache_clear()
