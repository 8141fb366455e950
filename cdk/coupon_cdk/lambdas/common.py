"""What several functions have alike: a topic's variables, the caller's identity, the worker's
consumer group, the reads of the records in flight, and where a function's alarms go (:class:`Watch`)."""

from __future__ import annotations

from typing import Protocol

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

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


ONE_MINUTE = Duration.minutes(1)
FIVE_MINUTES = Duration.minutes(5)


class Watch(Protocol):
    """Where a function's module puts its alarms and graphs (``monitoring.Monitoring``): each alarm
    pages the alarm topic, and each shows on the dashboard, in the order given."""

    @property
    def namespace(self) -> str:
        """The functions' own metrics' namespace."""
        ...

    def alarm(
        self, name: str, metric: cloudwatch.IMetric, threshold: float, description: str, *,
        periods: int = 1, datapoints: int | None = None,
    ) -> None:  # fmt: skip
        """An alarm at ``threshold`` or above for ``datapoints`` (default: all) of ``periods``."""
        ...

    def graph(self, title: str, *metrics: cloudwatch.IMetric) -> None:
        """A graph on the dashboard, no alarm."""
        ...


def metric(namespace: str, name: str, dimensions: dict[str, str], statistic: str) -> cloudwatch.Metric:
    """A metric of five-minute periods."""
    return cloudwatch.Metric(
        namespace=namespace, metric_name=name, dimensions_map=dimensions, statistic=statistic, period=FIVE_MINUTES
    )


def grant_in_flight_reads(fn: Function, kafka: Kafka, *, group: str) -> None:
    """The records after the worker group's offsets: the builder's and the rebuild's reads."""
    fn.allow(["kafka-cluster:Connect"], [kafka.cluster_arn])
    fn.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], [kafka.topic_arn])
    fn.allow(["kafka-cluster:DescribeGroup"], [group])
