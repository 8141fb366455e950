"""The intake's Kafka publisher against the real broker: what ``connect`` leaves the first publish,
and what its producer does not do."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from kafka import KafkaProducer

from coupon_core.adapters.kafka.publisher import producer_config
from local.testkit.kafka_topics import create_topic, kafka_settings

# In a fresh interpreter (kafka-python's generated codecs are cached per process): optionally
# connect, then publish once and list the Kafka codecs compiled during that publish.
FIRST_PUBLISH = """
import builtins, json, os, sys, time, uuid
from coupon_core.adapters.kafka.publisher import IssuePublisher
from coupon_core.domain.records import IssueRecord
from coupon_core.settings import KafkaSettings

servers, topic, connect = sys.argv[1], sys.argv[2], sys.argv[3] == "connect"
settings = KafkaSettings.from_env({**os.environ, "KAFKA_BOOTSTRAP_SERVERS": servers, "KAFKA_TOPIC": topic})
publisher = IssuePublisher(settings, timeout_ms=3000)
if connect:
    publisher.connect()
compiled, real_compile = [], builtins.compile

def counting_compile(source, filename, *args, **kwargs):
    compiled.append(filename)
    return real_compile(source, filename, *args, **kwargs)

builtins.compile = counting_compile  # the producer's I/O thread calls the builtin too
publisher.publish(IssueRecord(1, 7, uuid.uuid4(), int(time.time() * 1000)))
builtins.compile = real_compile
publisher.close()
print(json.dumps([name for name in compiled if name.startswith("<codegen")]))
"""


def _codecs_compiled_by_the_first_publish(servers: str, topic: str, mode: str) -> list[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-c", FIRST_PUBLISH, servers, topic, mode]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize(("mode", "compiles"), [("connect", False), ("no-connect", True)])
def test_after_connect_the_first_publish_compiles_no_codec(kafka_bootstrap_servers, mode, compiles):
    """``connect`` runs in Lambda's INIT: the first request of a container then does not pay for
    kafka-python's generated produce codecs (without it, it does: the second case)."""
    topic = create_topic(kafka_bootstrap_servers)

    compiled = _codecs_compiled_by_the_first_publish(kafka_bootstrap_servers, topic, mode)

    assert bool(compiled) is compiles, compiled


def test_the_producer_records_no_metrics_of_its_own(kafka_bootstrap_servers):
    """Nothing reads kafka-python's metrics, and recording them cost a sixth of a produce's CPU."""
    topic = create_topic(kafka_bootstrap_servers)
    settings = kafka_settings(kafka_bootstrap_servers, topic)
    producer = KafkaProducer(**producer_config(settings, timeout_ms=3000))
    try:
        producer.send(topic, key=b"1", value=b"{}").get(timeout=3)

        assert producer.metrics() is None
    finally:
        producer.close(timeout=1)
