"""The outbox relay's settings: how many events per transaction, and how long to wait for Kafka."""

from __future__ import annotations

from dataclasses import dataclass

from coupon_core.settings import DatabaseSettings, FunctionSettings, KafkaSettings
from coupon_core.settings import variables as var
from coupon_core.settings.variables import Environ


@dataclass(frozen=True)
class OutboxRelaySettings:
    """How many events the relay publishes per transaction, and how long it waits for Kafka."""

    batch: int
    publish_timeout_ms: int

    @classmethod
    def from_env(cls, environ: Environ) -> OutboxRelaySettings:
        return cls(
            batch=var.integer(environ, "OUTBOX_BATCH", 500, low=1, high=10_000),
            publish_timeout_ms=var.integer(environ, "OUTBOX_PUBLISH_TIMEOUT_MS", 10_000, low=100, high=60_000),
        )


@dataclass(frozen=True)
class RelaySettings(FunctionSettings):
    """The outbox relay: the database, and Kafka to publish to (KAFKA_TOPIC: the events topic)."""

    database: DatabaseSettings
    kafka: KafkaSettings
    relay: OutboxRelaySettings
