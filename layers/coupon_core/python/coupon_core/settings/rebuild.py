"""The rebuild's settings: which coupons the schedule reconciles, and when a stray reservation
is old enough to release."""

from __future__ import annotations

from dataclasses import dataclass

from coupon_core.errors import ConfigError
from coupon_core.settings import (
    HOUR_MS,
    ConsumerGroupSettings,
    DatabaseSettings,
    FunctionSettings,
    KafkaSettings,
    ReadBackSettings,
    RedisSettings,
    RetentionSettings,
    produce_bounds,
)
from coupon_core.settings import variables as var
from coupon_core.settings.variables import Environ


@dataclass(frozen=True)
class ReconcileSettings:
    """Which coupons the schedule reconciles, and how old a stray reservation must be to be released."""

    skew_ms: int
    lookback_ms: int
    lookahead_ms: int
    produce_bound_ms: int  # a send and its resend: how long a lost state waits before its rebuild

    @classmethod
    def from_env(cls, environ: Environ) -> ReconcileSettings:
        lookback_ms = var.integer(environ, "RECONCILE_LOOKBACK_HOURS", 24, low=0, high=24 * 366) * HOUR_MS
        if lookback_ms >= RetentionSettings.from_env(environ).state_ms:
            raise ConfigError("RECONCILE_LOOKBACK_HOURS must be shorter than STATE_RETENTION_HOURS")
        produce_timeout_ms, skew_ms = produce_bounds(environ)
        return cls(
            skew_ms=skew_ms,
            produce_bound_ms=2 * produce_timeout_ms,
            lookback_ms=lookback_ms,
            lookahead_ms=var.integer(environ, "RECONCILE_LOOKAHEAD_MINUTES", 60, low=0, high=7 * 24 * 60) * 60_000,
        )


@dataclass(frozen=True)
class RebuildSettings(FunctionSettings):
    """Kafka to read the records in flight: the topic's tail after the worker group's offsets."""

    redis: RedisSettings
    database: DatabaseSettings
    retention: RetentionSettings
    reconcile: ReconcileSettings
    kafka: KafkaSettings
    consumer_group: ConsumerGroupSettings
    read_back: ReadBackSettings
