"""The outbox relay's settings: how many events per transaction, and how long to wait for Kafka."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coupon_core.settings import FunctionSettings, KafkaSettings, Settings
from coupon_core.settings.backend import DatabaseSettings


class OutboxRelaySettings(Settings):
    """How many events the relay publishes per transaction, and how long it waits for Kafka."""

    batch: Annotated[int, Field(validation_alias="OUTBOX_BATCH", ge=1, le=10_000)] = 500
    publish_timeout_ms: Annotated[int, Field(validation_alias="OUTBOX_PUBLISH_TIMEOUT_MS", ge=100, le=60_000)] = 10_000


class RelaySettings(FunctionSettings):
    """The outbox relay: the database, and Kafka to publish to (KAFKA_TOPIC: the events topic)."""

    database: DatabaseSettings
    kafka: KafkaSettings
    relay: OutboxRelaySettings
