"""Publishing the coupon event stream: a batch of outbox events, acknowledged as a whole."""

from __future__ import annotations

from collections.abc import Sequence

from kafka import KafkaProducer
from kafka.errors import KafkaError

from coupon_core.adapters.kafka.publisher import producer_config
from coupon_core.domain.outbox_relay import CouponEvent
from coupon_core.errors import PublishError, Reraise
from coupon_core.settings import KafkaSettings

_not_published = Reraise(PublishError, "events not acknowledged by Kafka", (KafkaError, OSError))


class EventPublisher:
    """Sends events in order on one idempotent producer (acks=all) and returns once Kafka has
    every one of them; raises :class:`PublishError` otherwise (some may be written: the relay
    sends the whole batch again, and consumers drop the repeats by event id)."""

    def __init__(self, settings: KafkaSettings, *, timeout_ms: int) -> None:
        self._settings = settings
        self._timeout_ms = timeout_ms
        self._producer: KafkaProducer | None = None

    def publish(self, events: Sequence[CouponEvent]) -> None:
        try:
            with _not_published:
                producer = self._get_producer()
                futures = [producer.send(self._settings.topic, key=e.key, value=e.encode()) for e in events]
                producer.flush(timeout=self._timeout_ms / 1000)
                for future in futures:
                    future.get(timeout=self._timeout_ms / 1000)
        except PublishError:
            self.close()
            raise

    def close(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            producer.close(timeout=0)

    def _get_producer(self) -> KafkaProducer:
        if self._producer is None:
            config = producer_config(self._settings, self._timeout_ms) | {"client_id": "coupon-relay"}
            self._producer = KafkaProducer(**config)
        return self._producer
