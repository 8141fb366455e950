"""The private parts of kafka-python the issue publisher reads (``publisher.PRODUCER_PATHS``):
present in the pinned release, pinned, and read by no other module. A release without one fails
here, naming it, before any container runs it."""

from __future__ import annotations

import operator
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaProducer
from kafka.cluster import ClusterMetadata
from kafka.producer.sender import Sender

from coupon_core.adapters.kafka.publisher import KAFKA_PYTHON_VERSION, PRODUCER_PATHS

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def producer() -> Iterator[KafkaProducer]:
    """A producer of the installed release, as the publisher makes it (idempotent), on no broker."""
    made = KafkaProducer(bootstrap_servers="127.0.0.1:9", api_version=(2, 8), enable_idempotence=True, acks="all")
    yield made
    made.close(timeout=0)


def missing(producer: KafkaProducer) -> list[str]:
    """The paths of :data:`PRODUCER_PATHS` that ``producer`` lacks."""
    gone = []
    for path in PRODUCER_PATHS:
        try:
            operator.attrgetter(path)(producer)
        except AttributeError:
            gone.append(path)
    return gone


def test_the_pinned_release_has_every_internal_the_publisher_reads(producer):
    assert missing(producer) == []


def test_a_release_without_one_is_named(producer, monkeypatch):
    monkeypatch.delattr(Sender, "add_topic")
    monkeypatch.delattr(ClusterMetadata, "request_update")

    assert missing(producer) == ["_metadata.request_update", "_sender.add_topic"]


def test_the_release_they_were_read_from_is_the_one_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = project["dependency-groups"]["runtime"]
    assert f"kafka-python=={KAFKA_PYTHON_VERSION}" in runtime


PRIVATE_ROOTS = ("._sender", "._metadata", "._transaction_manager", "._net", "._struct", "._partition(")


def test_no_module_but_the_publisher_reads_kafka_pythons_private_attributes():
    """The pin and the check cover what this one module reads; a read elsewhere would escape both."""
    readers = sorted(
        str(path.relative_to(ROOT))
        for folder in ("layers", "functions")
        for path in (ROOT / folder).rglob("*.py")
        if any(private in path.read_text() for private in PRIVATE_ROOTS)
    )
    assert readers == ["layers/coupon_core/python/coupon_core/adapters/kafka/publisher.py"]
