"""Fixtures for tests against the real embedded Valkey: a flushed server for every test."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
import redis
from moto import mock_aws

from functions.intake import dependencies as intake_dependencies
from functions.rebuild import dependencies as rebuild_dependencies
from functions.worker import dependencies as worker_dependencies
from local.testkit.kafka_topics import create_topic
from lua_redis import ReservationStore, connect
from tests.database_support import empty_tables
from tests.services.pipeline_support import Pipeline


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = connect(redis_url)
    client.flushall()
    client.config_resetstat()
    yield client
    client.close()


@pytest.fixture
def store(redis_client: redis.Redis) -> ReservationStore:
    return ReservationStore(redis_client)


@pytest.fixture
def pipeline(
    monkeypatch, redis_client, redis_url, migrated_engine, database_url, kafka_bootstrap_servers
) -> Iterator[Pipeline]:
    """Every function wired to the real services through its environment; SQS from moto."""
    empty_tables(migrated_engine)
    topic = create_topic(kafka_bootstrap_servers)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        sqs = boto3.client("sqs", region_name="eu-west-1")
        dlq_url = sqs.create_queue(QueueName="coupon-dlq")["QueueUrl"]
        for name, value in {
            "REDIS_URL": redis_url,
            "DATABASE_URL": database_url,
            "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap_servers,
            "KAFKA_TOPIC": topic,
            "DLQ_URL": dlq_url,
            "KAFKA_CONSUMER_GROUP": f"coupon-worker-{topic}",
            "KAFKA_PRODUCE_TIMEOUT_MS": "2000",
            "WORKER_LOCK_WAIT_S": "1",
        }.items():
            monkeypatch.setenv(name, value)
        _reset_functions()
        pipeline = Pipeline(kafka_bootstrap_servers, topic, sqs, dlq_url, f"coupon-worker-{topic}")
        yield pipeline
        pipeline.close()
        _reset_functions()


def _reset_functions() -> None:
    intake_dependencies.reset()
    worker_dependencies.reset()
    rebuild_dependencies.wiring.cache_clear()
