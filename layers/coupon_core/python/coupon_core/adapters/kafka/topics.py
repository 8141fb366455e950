"""The topic, made through the Kafka admin protocol: the one way that works on MSK Serverless
and Provisioned alike (the MSK topic API, and with it ``AWS::MSK::Topic``, is Provisioned only).

Idempotent, as a deploy step must be: a topic that exists is left as it is, or given more
partitions; it is never shrunk (Kafka cannot, and a smaller count would move keys between
partitions, so the order of one coupon's records would no longer hold).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum

from kafka import KafkaAdminClient
from kafka.admin import NewPartitions, NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError

from coupon_core.adapters.kafka.connection import connection_config
from coupon_core.backend_errors import TopicShrinkError
from coupon_core.errors import ConfigError, UnavailableError
from coupon_core.settings import KafkaSettings

CLUSTER_DEFAULT = -1  # replication factor: the cluster's own (MSK Serverless fixes it at 3)
ADMIN_TIMEOUT_MS = 30_000


class TopicChange(StrEnum):
    CREATED = "CREATED"
    GROWN = "GROWN"
    UNCHANGED = "UNCHANGED"


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    replication_factor: int

    def __post_init__(self) -> None:
        if self.partitions < 1:
            raise ConfigError(f"topic {self.name}: partitions must be at least 1, got {self.partitions}")
        if self.replication_factor != CLUSTER_DEFAULT and self.replication_factor < 1:
            raise ConfigError(
                f"topic {self.name}: replication factor must be at least 1 (or -1, the cluster's default), "
                f"got {self.replication_factor}"
            )


def plan(spec: TopicSpec, existing_partitions: int | None) -> TopicChange:
    """What ``ensure_topic`` does to a topic that has ``existing_partitions`` (None: absent)."""
    if existing_partitions is None:
        return TopicChange.CREATED
    if existing_partitions > spec.partitions:
        raise TopicShrinkError(
            f"topic {spec.name} has {existing_partitions} partitions; asked for {spec.partitions}, "
            "but a topic's partitions can only grow"
        )
    return TopicChange.GROWN if existing_partitions < spec.partitions else TopicChange.UNCHANGED


@contextmanager
def admin_client(settings: KafkaSettings, doing: str) -> Iterator[KafkaAdminClient]:
    """A Kafka admin client for the block, closed after it; a Kafka error, connecting or in the
    block, is an :class:`UnavailableError` (``doing`` names what the block was doing)."""
    try:
        admin = KafkaAdminClient(**connection_config(settings, ADMIN_TIMEOUT_MS))
    except KafkaError as exc:
        raise UnavailableError(f"Kafka admin connection: {exc!r}") from exc
    try:
        yield admin
    except KafkaError as exc:
        raise UnavailableError(f"{doing}: {exc!r}") from exc
    finally:
        admin.close()


def ensure_topic(settings: KafkaSettings, spec: TopicSpec) -> TopicChange:
    """Create the topic, or grow it to the partitions of ``spec``; what was done."""
    with admin_client(settings, f"topic {spec.name}") as admin:
        change = plan(spec, _partitions(admin, spec.name))
        if change is TopicChange.CREATED:
            try:
                admin.create_topics([NewTopic(spec.name, spec.partitions, spec.replication_factor)])
                return change
            except TopicAlreadyExistsError:  # made meanwhile (a retried deploy): take it as it is
                change = plan(spec, _partitions(admin, spec.name))
                if change is TopicChange.CREATED:
                    raise UnavailableError(f"topic {spec.name} exists but is not described yet") from None
        if change is TopicChange.GROWN:
            admin.create_partitions({spec.name: NewPartitions(spec.partitions)})
        return change


def _partitions(admin: KafkaAdminClient, name: str) -> int | None:
    (topic,) = admin.describe_topics([name])
    if topic["error_code"] == 3:  # UNKNOWN_TOPIC_OR_PARTITION
        return None
    if topic["error_code"]:
        raise UnavailableError(f"describing topic {name}: error code {topic['error_code']}")
    return len(topic["partitions"])
