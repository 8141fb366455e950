"""The rebuild's settings: which coupons the schedule reconciles, and when a stray reservation
is old enough to release."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, model_validator

from coupon_core.settings import FunctionSettings, KafkaSettings, ProduceBounds, RedisSettings
from coupon_core.settings.backend import (
    HOUR_MS,
    ConsumerGroupSettings,
    DatabaseSettings,
    ReadBackSettings,
    RetentionSettings,
)


class ReconcileSettings(ProduceBounds, RetentionSettings):
    """Which coupons the schedule reconciles, and how old a stray reservation must be to be
    released (the skew, which a produce and its resend must fit)."""

    lookback_hours: Annotated[int, Field(validation_alias="RECONCILE_LOOKBACK_HOURS", ge=0, le=24 * 366)] = 24
    lookahead_minutes: Annotated[int, Field(validation_alias="RECONCILE_LOOKAHEAD_MINUTES", ge=0, le=7 * 24 * 60)] = 60

    @model_validator(mode="after")
    def _looks_back_within_the_retention(self) -> Self:
        if self.lookback_ms >= self.state_ms:
            raise ValueError("RECONCILE_LOOKBACK_HOURS must be shorter than STATE_RETENTION_HOURS")
        return self

    @property
    def lookback_ms(self) -> int:
        return self.lookback_hours * HOUR_MS

    @property
    def lookahead_ms(self) -> int:
        return self.lookahead_minutes * 60_000

    @property
    def produce_bound_ms(self) -> int:
        """A send and its resend: how long a lost state waits before its rebuild."""
        return 2 * self.produce_timeout_ms


class RebuildSettings(FunctionSettings):
    """Kafka to read the records in flight: the topic's tail after the worker group's offsets."""

    redis: RedisSettings
    database: DatabaseSettings
    retention: RetentionSettings
    reconcile: ReconcileSettings
    kafka: KafkaSettings
    consumer_group: ConsumerGroupSettings
    read_back: ReadBackSettings
