"""Publishing accepted requests to Kafka and waiting for the broker's acknowledgement.

One producer per Lambda container, created on first use and reused. ``acks=all`` with
idempotence: a retry inside the producer never writes a record twice. Every wait is bounded,
so a request never hangs on the broker; a producer that failed is closed and replaced on the
next call, which is also how a container thawed after a long freeze gets fresh connections.

A record is sent only once the producer holds a connection to its partition's leader: each
attempt waits for one within the produce timeout (kafka-python's reconnect backoff, jittered,
paces the tries), then for the acknowledgement within what is left of it. An attempt that gets
no connection (a cold start whose connections the broker refused: MSK takes a limited rate of new
IAM connections per broker) sent nothing, so the request is released and answered 503, and the
producer is kept, its backoff with it. Sending at once instead left records that never left the
producer counted as possibly sent (reservations held without a record until reconcile), and
replaced producers, whose new connections fed the storm (docs/benchmarks.md, The first seconds).

kafka-python has no public call to ask whether a producer holds a connection to a partition's
leader without sending to it, or to wait for an idempotent producer's id: :func:`leader_connected`
and :func:`await_producer_id` read its private attributes (:data:`PRODUCER_PATHS`), and no other
module of the project does. The version is pinned (pyproject.toml, :data:`KAFKA_PYTHON_VERSION`),
and a unit test fails, naming the path, when the pinned release lacks one. There is no fallback:
the 503 answer relies on "nothing is sent without a connection to the leader".
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Any

from kafka import KafkaProducer, TopicPartition
from kafka.errors import KafkaError

from coupon_core.adapters.kafka.connection import connection_config
from coupon_core.domain.records import IssueRecord
from coupon_core.errors import NotPublishedError, PublishUnconfirmedError, Reraise
from coupon_core.settings import KafkaSettings

logger = logging.getLogger(__name__)

_not_sent = Reraise(NotPublishedError, "the record could not be sent to Kafka", (KafkaError, OSError))
_not_acknowledged = Reraise(PublishUnconfirmedError, "Kafka did not acknowledge the record", (KafkaError, OSError))


def producer_config(settings: KafkaSettings, timeout_ms: int) -> dict[str, Any]:
    """kafka-python settings: durable (acks=all, idempotent), and bounded by ``timeout_ms``.

    Without kafka-python's own metrics: nothing reads them (the functions report through
    Powertools Metrics and MSK through CloudWatch), and recording their sensors on every send
    and response was about a sixth of a produce's CPU (docs/benchmarks.md).
    """
    return connection_config(settings, timeout_ms) | {
        "client_id": "coupon-intake",
        "acks": "all",
        "enable_idempotence": True,
        "linger_ms": 0,
        "max_block_ms": timeout_ms,
        "delivery_timeout_ms": timeout_ms,
        "metrics_enabled": False,
    }


CONNECTION_POLL_S = (0.005, 0.02)  # how often a waiting attempt looks again, jittered
KAFKA_PYTHON_VERSION = "3.0.12"  # the release the private paths below were read from; pyproject.toml pins it
PRODUCER_PATHS = (  # what the two functions below read, from a KafkaProducer
    "_metadata.partitions_for_topic",
    "_metadata.leader_for_partition",
    "_metadata.request_update",
    "_partition",
    "_sender.add_topic",
    "_sender.wakeup",
    "_sender._client.connected",
    "_sender._client.maybe_connect",
    "_sender._client._net.call_soon_threadsafe",
    "_transaction_manager.has_producer_id",
)


def await_producer_id(producer: KafkaProducer, *, deadline: float) -> None:
    """An idempotent producer's I/O thread asks the broker for its producer id as it starts and
    sends nothing before it has one; wait for it."""
    manager = producer._transaction_manager
    while not manager.has_producer_id() and time.monotonic() < deadline:
        time.sleep(0.001)


def leader_connected(producer: KafkaProducer, topic: str, key: bytes) -> bool:
    """Whether the producer holds a connection to the leader of the partition ``key`` goes to;
    if not, its I/O thread is asked for one (the topic's metadata, or a connection to the leader
    it knows, which waits out the connection's backoff)."""
    metadata, sender = producer._metadata, producer._sender
    leader = None
    if metadata.partitions_for_topic(topic):
        partition = producer._partition(topic, None, None, None, key, b"")
        leader = metadata.leader_for_partition(TopicPartition(topic, partition))
    client = sender._client
    if leader is None or leader == -1:  # what send() asks for, without blocking on it
        sender.add_topic(topic)
        metadata.request_update()
        sender.wakeup()
        return False
    if client.connected(leader):
        return True
    client._net.call_soon_threadsafe(lambda: client.maybe_connect(leader))
    return False


class IssuePublisher:
    """Sends :class:`IssueRecord` records and waits for their acknowledgement."""

    def __init__(self, settings: KafkaSettings, *, timeout_ms: int) -> None:
        self._settings = settings
        self._timeout_ms = timeout_ms
        self._producer: KafkaProducer | None = None
        self._lock = threading.Lock()

    def publish(self, record: IssueRecord) -> None:
        """Return once the broker has the record (acks=all); raise :class:`PublishError` otherwise.

        An acknowledgement that never came (lost, or late) leaves the record possibly written:
        the same record (same request id: the worker persists it once) is sent once more on a
        fresh producer, and a resend that is acknowledged is a success. If the resend fails
        too, :class:`PublishUnconfirmedError` says the record may be in the log; only a record
        that never left the producer raises :class:`NotPublishedError`. The two attempts take
        at most twice the timeout, which the settings keep shorter than the reconcile skew.
        """
        try:
            self._send(record)
        except PublishUnconfirmedError as unconfirmed:
            logger.warning(
                "no acknowledgement: the same record again, on a fresh producer", extra={"detail": str(unconfirmed)}
            )
            try:
                self._send(record)
            except NotPublishedError as exc:
                raise PublishUnconfirmedError(f"{unconfirmed}; the resend could not be sent: {exc}") from exc

    def _send(self, record: IssueRecord) -> None:
        # kafka-python's errors are mapped in place (Reraise's ``causes`` and ``mapped``), without
        # a context manager's calls on every request; a failed send or acknowledgement discards
        # the producer, a leader not reached in time keeps it (a new one would start over).
        deadline = time.monotonic() + self._timeout_ms / 1000
        try:
            producer = self._get_producer()
            while not leader_connected(producer, self._settings.topic, record.key):
                if time.monotonic() >= deadline:
                    raise NotPublishedError(
                        "no connection to the partition's leader within the timeout: nothing was sent"
                    )
                time.sleep(random.uniform(*CONNECTION_POLL_S))
        except _not_sent.causes as exc:
            raise _not_sent.mapped(exc) from exc
        try:
            future = producer.send(self._settings.topic, key=record.key, value=record.encode())
        except _not_sent.causes as exc:
            self._discard_producer()
            raise _not_sent.mapped(exc) from exc
        try:
            future.get(timeout=max(deadline - time.monotonic(), 0.001))
        except _not_acknowledged.causes as exc:
            self._discard_producer()
            raise _not_acknowledged.mapped(exc) from exc

    def connect(self) -> None:
        """Create the producer, fetch the topic's metadata and wait for the producer id (bounded by
        the timeout), so that the first publish sends at once."""
        with _not_sent:
            producer = self._get_producer()
            producer.partitions_for(self._settings.topic)
            await_producer_id(producer, deadline=time.monotonic() + self._timeout_ms / 1000)

    def close(self) -> None:
        self._discard_producer()

    def _get_producer(self) -> KafkaProducer:
        with self._lock:
            if self._producer is None:
                self._producer = KafkaProducer(**producer_config(self._settings, self._timeout_ms))
            return self._producer

    def _discard_producer(self) -> None:
        with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            try:
                producer.close(timeout=0)
            except Exception:  # closing a broken producer must not hide the original error
                logger.warning("closing a failed Kafka producer raised", exc_info=True)
