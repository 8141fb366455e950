"""Fixtures for tests against the real embedded Valkey: a flushed server for every test."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
import redis
from moto import mock_aws

from functions.coupons import dependencies as coupons_dependencies
from functions.intake import dependencies as intake_dependencies
from functions.rebuild import app as rebuild_app
from functions.rebuild import build as builder_app
from functions.rebuild import dependencies as rebuild_dependencies
from functions.worker import dependencies as worker_dependencies
from functions.worker import dlq_dependencies
from local.testkit.kafka_topics import create_topic
from local.testkit.lambda_service import LambdaService
from local.testkit.stores import WholeStore
from lua_redis.client import connect
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
def store(redis_client: redis.Redis) -> WholeStore:
    return WholeStore(redis_client)


@pytest.fixture(scope="session")
def lambda_service() -> Iterator[LambdaService]:
    """Lambda's Invoke API for the HTTP functions' calls to the builder and the rebuild, run in-process."""
    service = LambdaService({"rebuild": rebuild_app.handler, "builder": builder_app.handler})
    yield service
    service.close()


@pytest.fixture
def pipeline(
    monkeypatch, redis_client, redis_url, migrated_engine, database_url, kafka_bootstrap_servers, lambda_service
) -> Iterator[Pipeline]:
    """Every function wired to the real services through its environment; SQS from moto, and the
    builder and the rebuild invoked through Lambda's API on the loopback (``LambdaService``)."""
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
            "WORKER_LOCK_WAIT_S": "1",
            "REBUILD_FUNCTION": "rebuild",
            "BUILDER_FUNCTION": "builder",
            "AWS_ENDPOINT_URL_LAMBDA": lambda_service.url,
        }.items():
            monkeypatch.setenv(name, value)
        _reset_functions()
        pipeline = Pipeline(kafka_bootstrap_servers, topic, sqs, dlq_url, f"coupon-worker-{topic}")
        yield pipeline
        pipeline.close()
        _reset_functions()


def _reset_functions() -> None:
    intake_dependencies.reset()
    coupons_dependencies.reset()
    worker_dependencies.reset()
    dlq_dependencies.reset()
    rebuild_dependencies.wiring.cache_clear()
