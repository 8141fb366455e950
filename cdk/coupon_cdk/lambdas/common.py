"""What several functions have alike: a topic's variables, the caller's identity, the worker's
consumer group, and the reads of the records in flight."""

from __future__ import annotations

from coupon_cdk.config import EnvironmentConfig
from coupon_cdk.fleet import Fleet, worker_group
from coupon_cdk.functions import Function
from coupon_cdk.stores import TOPIC, Kafka


def topic(fleet: Fleet, name: str = TOPIC) -> dict[str, str]:
    """The brokers and the topic ``name`` (the issue topic unless named)."""
    return {**fleet.stores.kafka, "KAFKA_TOPIC": name}


def caller(config: EnvironmentConfig) -> dict[str, str]:
    """Where a public route's user id comes from, and the pages that may call it."""
    return {
        "USER_ID_SOURCE": config.api.user_id_source,
        "USER_ID_CLAIM": config.api.user_id_claim,
        "CORS_ORIGINS": ",".join(config.api.cors_origins),
    }


def in_flight(config: EnvironmentConfig) -> dict[str, str]:
    """Whose offsets mark the records in flight: the worker's consumer group."""
    return {"KAFKA_CONSUMER_GROUP": worker_group(config.name)}


def grant_in_flight_reads(fn: Function, kafka: Kafka, *, group: str) -> None:
    """The records after the worker group's offsets: the builder's and the rebuild's reads."""
    fn.allow(["kafka-cluster:Connect"], [kafka.cluster_arn])
    fn.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], [kafka.topic_arn])
    fn.allow(["kafka-cluster:DescribeGroup"], [group])
