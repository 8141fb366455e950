"""The intake's Kafka publisher against the real broker: what its producer does not do."""

from __future__ import annotations

from kafka import KafkaProducer

from coupon_core.adapters.kafka.publisher import producer_config
from local.testkit.kafka_topics import create_topic, kafka_settings


def test_the_producer_records_no_metrics_of_its_own(kafka_bootstrap_servers):
    """Nothing reads kafka-python's metrics, and recording them cost a sixth of a produce's CPU."""
    topic = create_topic(kafka_bootstrap_servers)
    settings = kafka_settings(kafka_bootstrap_servers, topic)
    producer = KafkaProducer(**producer_config(settings, timeout_ms=3000))
    try:
        producer.send(topic, key=b"1", value=b"{}").get(timeout=3)

        assert producer.metrics() is None
    finally:
        producer.close(timeout=1)
