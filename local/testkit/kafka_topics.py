"""Kafka clients of tests and tools: how they connect, creating topics, reading records back by
offset, and committing a consumer group's offsets."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.admin import NewTopic
from kafka.consumer.fetcher import ConsumerRecord

from coupon_core.adapters.kafka.connection import connection_config
from coupon_core.settings import KafkaSettings

CLIENT_TIMEOUT_MS = 10_000


def kafka_settings(
    bootstrap_servers: str | Iterable[str], topic: str = "any", environ: Mapping[str, str] = os.environ
) -> KafkaSettings:
    """The settings a function would read for these brokers and topic: over TLS when
    ``KAFKA_TLS=on`` in ``environ`` (set for the local stack's broker, which serves only TLS)."""
    servers = bootstrap_servers if isinstance(bootstrap_servers, str) else ",".join(bootstrap_servers)
    tls = environ.get("KAFKA_TLS", "off")
    return KafkaSettings.from_env({"KAFKA_BOOTSTRAP_SERVERS": servers, "KAFKA_TOPIC": topic, "KAFKA_TLS": tls})


def client_options(
    bootstrap_servers: str | Iterable[str], environ: Mapping[str, str] = os.environ, **overrides: Any
) -> dict[str, Any]:
    """The options of a kafka-python client that reaches the brokers as the functions do
    (``connection_config`` of :func:`kafka_settings`); ``overrides`` replace any of them."""
    return {**connection_config(kafka_settings(bootstrap_servers, environ=environ), CLIENT_TIMEOUT_MS), **overrides}


def create_topic(bootstrap_servers: str, partitions: int = 3, name: str | None = None) -> str:
    """A new topic, with a unique name unless one is given."""
    name = name or f"coupon.issue.test-{uuid.uuid4().hex[:12]}"
    admin = KafkaAdminClient(**client_options(bootstrap_servers))
    try:
        admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    finally:
        admin.close()
    return name


def read_all(bootstrap_servers: str, topic: str, timeout_s: float = 10.0) -> list[ConsumerRecord]:
    """Every record on the topic now, read by offset without a consumer group."""
    log = TopicLog(bootstrap_servers, topic)
    try:
        return log.read(timeout_s)
    finally:
        log.close()


class TopicLog:
    """A topic's records, read by offset without a consumer group, each once: a reader that asks
    again and again (a test's pipeline) keeps one consumer and reads only what is new."""

    def __init__(self, bootstrap_servers: str, topic: str) -> None:
        self._consumer = KafkaConsumer(**client_options(bootstrap_servers), enable_auto_commit=False)
        self._topic = topic
        self._partitions = [TopicPartition(topic, p) for p in sorted(self._consumer.partitions_for_topic(topic) or ())]
        self._consumer.assign(self._partitions)
        self._consumer.seek_to_beginning(*self._partitions)
        self._records: list[ConsumerRecord] = []

    def read(self, timeout_s: float = 10.0) -> list[ConsumerRecord]:
        """Every record on the topic now."""
        ends = self._consumer.end_offsets(self._partitions)
        deadline = time.monotonic() + timeout_s
        while any(self._consumer.position(tp) < ends[tp] for tp in self._partitions):
            if time.monotonic() > deadline:
                raise TimeoutError(f"could not read {self._topic} to its end in {timeout_s} s")
            for batch in self._consumer.poll(timeout_ms=200).values():
                self._records.extend(batch)
        return list(self._records)

    def close(self) -> None:
        self._consumer.close()


def commit_offsets(bootstrap_servers: str, topic: str, group: str, offsets: dict[int, int]) -> None:
    """Commit ``partition -> next offset`` for ``group``, as the event source mapping does after a batch."""
    consumer = KafkaConsumer(**client_options(bootstrap_servers), group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})
    finally:
        consumer.close()
