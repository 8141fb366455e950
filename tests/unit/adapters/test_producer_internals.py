"""The private parts of kafka-python the issue publisher reads: present in the pinned release, and
a release without one refused loudly, never worked around."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer
from kafka.cluster import ClusterMetadata
from kafka.producer.sender import Sender

from coupon_core.adapters.kafka.producer_internals import (
    KAFKA_PYTHON_VERSION,
    KafkaInternalsChangedError,
    check_producer,
)
from coupon_core.adapters.kafka.publisher import IssuePublisher
from coupon_core.settings import KafkaSettings

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def producer() -> Iterator[KafkaProducer]:
    """A producer of the installed release, as the publisher makes it (idempotent), on no broker."""
    made = KafkaProducer(bootstrap_servers="127.0.0.1:9", api_version=(2, 8), enable_idempotence=True, acks="all")
    yield made
    made.close(timeout=0)


def test_the_pinned_release_has_every_internal_the_publisher_reads(producer):
    check_producer(producer)  # raises, naming what is gone, otherwise


def test_the_release_they_were_read_from_is_the_one_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = project["dependency-groups"]["runtime"]
    assert f"kafka-python=={KAFKA_PYTHON_VERSION}" in runtime


def test_a_release_without_one_is_refused_naming_what_is_gone(producer, monkeypatch):
    monkeypatch.delattr(Sender, "add_topic")
    monkeypatch.delattr(ClusterMetadata, "request_update")

    with pytest.raises(KafkaInternalsChangedError, match=r"lacks _metadata\.request_update, _sender\.add_topic,"):
        check_producer(producer)


def test_the_publisher_refuses_to_make_a_producer_on_such_a_release(monkeypatch):
    monkeypatch.delattr(ClusterMetadata, "request_update")
    publisher = IssuePublisher(
        KafkaSettings.from_env({"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9", "KAFKA_TOPIC": "t"}), timeout_ms=200
    )
    monkeypatch.setattr(KafkaProducer, "__init__", _without_a_broker(KafkaProducer.__init__))

    with pytest.raises(KafkaInternalsChangedError, match=r"_metadata\.request_update"):
        publisher.connect()


def _without_a_broker(init: Callable[..., None]) -> Callable[..., None]:
    """KafkaProducer's constructor with the broker's version given, so that it asks no broker."""

    def made(self: KafkaProducer, **config: Any) -> None:
        init(self, **(config | {"api_version": (2, 8)}))

    return made


PRIVATE_ROOTS = ("._sender", "._metadata", "._transaction_manager", "._net", "._struct", "._partition(")


def test_no_module_but_producer_internals_reads_kafka_pythons_private_attributes():
    """The pin and the check cover what this one module reads; a read elsewhere would escape both."""
    root = Path(__file__).resolve().parents[3]
    readers = sorted(
        str(path.relative_to(root))
        for folder in ("layers", "functions")
        for path in (root / folder).rglob("*.py")
        if any(private in path.read_text() for private in PRIVATE_ROOTS)
    )
    assert readers == ["layers/coupon_core/python/coupon_core/adapters/kafka/producer_internals.py"]
