"""The worker's settings and its DLQ handler's: the dead-letter queue, the per-coupon lock and
the processing limit."""

from __future__ import annotations

from dataclasses import dataclass

from coupon_core.settings import DatabaseSettings, FunctionSettings, KafkaSettings, ReadBackSettings, RedisSettings
from coupon_core.settings import variables as var
from coupon_core.settings.variables import Environ


@dataclass(frozen=True)
class DlqSettings:
    """The SQS DLQ the worker sends its rejection letters to."""

    url: str

    @classmethod
    def from_env(cls, environ: Environ) -> DlqSettings:
        return cls(url=var.url(environ, "DLQ_URL", ("https", "http")))


@dataclass(frozen=True)
class WorkerLockSettings:
    """The worker's per-coupon issue lock: its lease, and how long to wait for it."""

    lease_s: int
    wait_s: int

    @classmethod
    def from_env(cls, environ: Environ) -> WorkerLockSettings:
        lease = var.integer(environ, "WORKER_LOCK_LEASE_S", 30, low=1, high=900)
        return cls(lease_s=lease, wait_s=var.integer(environ, "WORKER_LOCK_WAIT_S", 5, low=1, high=lease))


@dataclass(frozen=True)
class WriteLimitSettings:
    """The processing limit (docs/design.md, Processing limit): database writes per second across
    every worker (0: none), the burst it allows, and how long one batch may wait for it."""

    per_second: int
    burst: int
    wait_s: int

    @classmethod
    def from_env(cls, environ: Environ) -> WriteLimitSettings:
        per_second = var.integer(environ, "WORKER_WRITES_PER_SECOND", 0, low=0, high=1_000_000)
        return cls(
            per_second=per_second,
            burst=var.integer(environ, "WORKER_WRITE_BURST", max(1, per_second), low=1, high=10_000_000),
            wait_s=var.integer(environ, "WORKER_WRITE_WAIT_S", 60, low=1, high=600),
        )


@dataclass(frozen=True)
class WorkerSettings(FunctionSettings):
    redis: RedisSettings
    database: DatabaseSettings
    dlq: DlqSettings
    lock: WorkerLockSettings
    write_limit: WriteLimitSettings


@dataclass(frozen=True)
class DlqHandlerSettings(FunctionSettings):
    """Kafka only to read records back by offset."""

    redis: RedisSettings
    database: DatabaseSettings
    kafka: KafkaSettings
    read_back: ReadBackSettings
