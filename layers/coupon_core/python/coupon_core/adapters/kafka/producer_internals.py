"""The private parts of kafka-python the issue publisher reads, named and checked in one place.

kafka-python has no public call to ask whether a producer holds a connection to a partition's
leader without sending to it, to wait for an idempotent producer's id, or to compile the produce
codecs ahead of the first send; ``publisher.py`` reads them from the library's private
attributes. A release may change those without notice, so the version is pinned (pyproject.toml,
:data:`KAFKA_PYTHON_VERSION`) and :func:`check_producer` fails loudly, at a container's INIT and in
the unit tests, when one is gone. There is no fallback: the 503 answer relies on "nothing is sent
without a connection to the leader", and a publisher that could not tell would drop it.
"""

from __future__ import annotations

import operator

import kafka
from kafka import KafkaProducer
from kafka.protocol.producer import ProduceRequest, ProduceResponse

KAFKA_PYTHON_VERSION = "3.0.12"  # the release these paths were read from; pyproject.toml pins it

# Attribute paths, from a KafkaProducer, that publisher.py reads.
PRODUCER_PATHS = (
    "_metadata.partitions_for_topic",
    "_metadata.leader_for_partition",
    "_metadata.request_update",
    "_partition",
    "_sender.add_topic",
    "_sender.wakeup",
    "_sender._client.connected",
    "_sender._client.maybe_connect",
    "_sender._client.api_version",
    "_sender._client._net.call_soon_threadsafe",
    "_transaction_manager.has_producer_id",
)
# Attribute paths of the protocol's classes, for the codecs compiled ahead of the first publish.
CODEC_PATHS = {
    ProduceRequest: ("flexible_version_q", "_struct.compiled_encode_into"),
    ProduceResponse: ("_struct.compiled_decode_from",),
}


class KafkaInternalsChangedError(RuntimeError):
    """The installed kafka-python lacks a private attribute the publisher reads."""


def check_producer(producer: KafkaProducer) -> None:
    """Raise :class:`KafkaInternalsChangedError`, naming every missing path, unless ``producer``
    and the protocol's classes have every attribute the publisher reads."""
    missing = [path for path in PRODUCER_PATHS if not _resolves(producer, path)]
    missing += [
        f"{owner.__name__}.{path}"
        for owner, paths in CODEC_PATHS.items()
        for path in paths
        if not _resolves(owner, path)
    ]
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
