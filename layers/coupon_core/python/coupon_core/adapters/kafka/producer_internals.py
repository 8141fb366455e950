"""The private parts of kafka-python the issue publisher needs, read in one place and checked.

kafka-python has no public call to ask whether a producer holds a connection to a partition's
leader without sending to it, or to wait for an idempotent producer's id; the functions here do
each from the library's private attributes, and ``publisher.py`` calls them: nothing else of
the project touches those. A release may change them without notice, so the version is pinned
(pyproject.toml, :data:`KAFKA_PYTHON_VERSION`) and :func:`check_producer` fails loudly, at a
container's INIT and in the unit tests, when one is gone. There is no fallback: the 503 answer relies on "nothing is
sent without a connection to the leader", and a publisher that could not tell would drop it.
"""

from __future__ import annotations

import operator
import time

import kafka
from kafka import KafkaProducer, TopicPartition

KAFKA_PYTHON_VERSION = "3.0.12"  # the release these paths were read from; pyproject.toml pins it

# Attribute paths, from a KafkaProducer, that the functions below read.
PRODUCER_PATHS = (
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


class KafkaInternalsChangedError(RuntimeError):
    """The installed kafka-python lacks a private attribute the publisher reads."""


def check_producer(producer: KafkaProducer) -> None:
    """Raise :class:`KafkaInternalsChangedError`, naming every missing path, unless ``producer``
    has every attribute the publisher reads."""
    missing = [path for path in PRODUCER_PATHS if not _resolves(producer, path)]
    if missing:
        raise KafkaInternalsChangedError(
            f"kafka-python {kafka.__version__} lacks {', '.join(missing)}, which the issue publisher reads "
            f"(written against {KAFKA_PYTHON_VERSION}; coupon_core/adapters/kafka/producer_internals.py)"
        )


def _resolves(root: object, path: str) -> bool:
    try:
        operator.attrgetter(path)(root)
    except AttributeError:
        return False
    return True


def await_producer_id(producer: KafkaProducer, *, deadline: float) -> None:
    """An idempotent producer's I/O thread asks the broker for its producer id as it starts and
    sends nothing before it has one; wait for it."""
    manager = producer._transaction_manager
    while not manager.has_producer_id() and time.monotonic() < deadline:
        time.sleep(0.001)


def leader_connected(producer: KafkaProducer, topic: str, key: bytes) -> bool:
    """Whether the producer holds a connection to the leader of the partition ``key`` goes to;
    if not, its I/O thread is asked for one (the topic's metadata, or a connection to the leader
    it knows, which waits out the connection's backoff). No fallback: a record sent without a
    leader's connection is what the 503 answer promises did not happen."""
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
