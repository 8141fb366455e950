"""The worker's settings and its DLQ handler's: the dead-letter queue, the per-coupon lock and
the processing limit."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import AfterValidator, Field, model_validator

from coupon_core.settings import FunctionSettings, KafkaSettings, RedisSettings, Settings, url_of
from coupon_core.settings.backend import DatabaseSettings, ReadBackSettings


class DlqSettings(Settings):
    """The SQS DLQ the worker sends its rejection letters to."""

    url: Annotated[str, Field(validation_alias="DLQ_URL"), AfterValidator(url_of("https", "http"))]


class WorkerLockSettings(Settings):
    """The worker's per-coupon issue lock: its lease, and how long to wait for it (at most the lease)."""

    lease_s: Annotated[int, Field(validation_alias="WORKER_LOCK_LEASE_S", ge=1, le=900)] = 30
    wait_s: Annotated[int, Field(validation_alias="WORKER_LOCK_WAIT_S")] = 5

    @model_validator(mode="after")
    def _wait_within_the_lease(self) -> Self:
        if "wait_s" in self.model_fields_set and not 1 <= self.wait_s <= self.lease_s:
            raise ValueError(f"WORKER_LOCK_WAIT_S must be between 1 and {self.lease_s}; got {self.wait_s}")
        return self


class WriteLimitSettings(Settings):
    """The processing limit (docs/design.md, Processing limit): database writes per second across
    every worker (0: none), the burst it allows (by default one second's writes), and how long one
    batch may wait for it."""

    per_second: Annotated[int, Field(validation_alias="WORKER_WRITES_PER_SECOND", ge=0, le=1_000_000)] = 0
    burst_asked: Annotated[int | None, Field(validation_alias="WORKER_WRITE_BURST", ge=1, le=10_000_000)] = None
    wait_s: Annotated[int, Field(validation_alias="WORKER_WRITE_WAIT_S", ge=1, le=600)] = 60

    @property
    def burst(self) -> int:
        return self.burst_asked if self.burst_asked is not None else max(1, self.per_second)


class WorkerSettings(FunctionSettings):
    redis: RedisSettings
    database: DatabaseSettings
    dlq: DlqSettings
    lock: WorkerLockSettings
    write_limit: WriteLimitSettings


class DlqHandlerSettings(FunctionSettings):
    """Kafka only to read records back by offset."""

    redis: RedisSettings
    database: DatabaseSettings
    kafka: KafkaSettings
    read_back: ReadBackSettings
