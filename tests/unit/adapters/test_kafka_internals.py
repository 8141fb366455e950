"""The private parts of kafka-python the issue publisher reads (``publisher.PRODUCER_PATHS``):
present in the pinned release, pinned, and read by no other module. A release without one fails
here, naming it, before any container runs it."""

from __future__ import annotations

import operator
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer
from kafka.cluster import ClusterMetadata
from kafka.producer.sender import Sender

from coupon_core.adapters.kafka.publisher import (
    KAFKA_PYTHON_VERSION,
    PRODUCER_PATHS,
    await_producer_id,
    leader_connected,
)

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


class _Gone:
    """An attribute a release no longer has: reading or calling it fails as a missing one would."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError("gone")


def _walk(producer: KafkaProducer, monkeypatch: pytest.MonkeyPatch, gone: str | None) -> None:
    """Both branches of the leader check (a topic without metadata; a leader known and not
    connected, asked to connect) and the wait for the producer id, on a producer whose broker is
    played by stubs; ``gone``: the path a release lacks (a :class:`_Gone`)."""

    def put(owner: str, attribute: str, value: Any) -> None:
        if gone != f"{owner}.{attribute}".lstrip("."):
            monkeypatch.setattr(operator.attrgetter(owner)(producer) if owner else producer, attribute, value)

    if gone is not None:
        owner, _, name = gone.rpartition(".")
        monkeypatch.setattr(operator.attrgetter(owner)(producer) if owner else producer, name, _Gone())
    put("_sender._client", "connected", lambda node: False)
    put("_sender._client._net", "call_soon_threadsafe", lambda callback: callback())
    put("_sender._client", "maybe_connect", lambda node: None)
    put("_metadata", "leader_for_partition", lambda partition: 1)
    put("_metadata", "request_update", lambda: None)
    put("_sender", "add_topic", lambda topic: None)
    put("_sender", "wakeup", lambda: None)
    put("_transaction_manager", "has_producer_id", lambda: True)
    put("_metadata", "partitions_for_topic", lambda topic: set())  # no metadata yet
    assert leader_connected(producer, "t", b"k") is False
    put("_metadata", "partitions_for_topic", lambda topic: {0})  # a leader, not connected
    assert leader_connected(producer, "t", b"k") is False
    await_producer_id(producer, deadline=time.monotonic())


def test_the_walk_reads_through_every_path_of_a_whole_release(producer, monkeypatch):
    _walk(producer, monkeypatch, None)


@pytest.mark.parametrize("path", PRODUCER_PATHS)
def test_each_listed_path_is_one_the_publisher_reads(producer, monkeypatch, path):
    """Without ``path``, the walk fails: the list names what the two functions read, nothing stale."""
    with pytest.raises(AttributeError):
        _walk(producer, monkeypatch, path)


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
