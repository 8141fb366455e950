"""The API against a fuzzer nobody here wrote: schemathesis generates requests from
docs/openapi.json, valid and invalid, for every operation, and sends them through API Gateway's
proxy integration (as WSGI) to the real handler on the real services.

Checked for every answer: no server error; the status code, content type, headers and body are
the ones the document describes; invalid data is refused; and, ours, every answer is JSON with
``status`` (and ``error`` from 400 on), and an answer of 400 or more changed nothing in Redis,
the database or Kafka. ``make test`` runs a fixed, small sample (FUZZ_EXAMPLES per operation,
derandomized); ``make fuzz`` a larger random one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from kafka import KafkaConsumer, TopicPartition
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from functions.coupons import dependencies as coupons_dependencies
from functions.intake import dependencies as intake_dependencies
from local.testkit.gateway_wsgi import gateway
from local.testkit.http_functions import answer
from local.testkit.kafka_topics import client_options
from local.testkit.tables import row_counts
from tests.services.pipeline_support import SCHEDULE_EVENT, rebuild

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "20"))
RANDOM = os.environ.get("FUZZ_RANDOM") == "1"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    negative_data_rejection,
]

schema = schemathesis.openapi.from_wsgi("/openapi.json", gateway(answer))


# The routes that read a user id, from the body or (USER_ID_SOURCE=claims) the token: fuzzed in
# both modes; every other route runs the same code whichever the mode.
USER_ID_ROUTES = schema.include(path_regex=r"^/coupon-issues$|/issues/\{userId\}")
SAMPLE = settings(
    max_examples=EXAMPLES,
    derandomize=not RANDOM,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
World = Callable[[], tuple[Any, ...]]


def _world(mode: str, pipeline, migrated_engine, redis_client, monkeypatch) -> Iterator[World]:
    """How to read everything an answer may have changed: Redis, the database's rows, Kafka's ends;
    with the user id read as ``mode`` says (claims: the events carry no token, as a caller without
    one). The functions invoke the builder and the rebuild through Lambda's API on the loopback, as
    the deployed ones do."""
    monkeypatch.setenv("USER_ID_SOURCE", mode)
    intake_dependencies.reset()
    coupons_dependencies.reset()
    rebuild(SCHEDULE_EVENT)  # the fleet knows which coupons exist: none, here (the registry's load)
    consumer = KafkaConsumer(**client_options(pipeline.bootstrap_servers), enable_auto_commit=False)
    partitions = [TopicPartition(pipeline.topic, p) for p in sorted(consumer.partitions_for_topic(pipeline.topic))]

    def state() -> tuple[Any, ...]:
        # A lock's own keys are no state: held while a request looks a coupon up, and the list
        # that signals its waiters on release, which python-redis-lock expires within a second.
        keys = sorted(key for key in redis_client.keys("*") if not key.startswith(("lock:", "lock-signal:")))
        redis_state = {key: redis_client.dump(key) for key in keys}
        return redis_state, row_counts(migrated_engine), consumer.end_offsets(partitions)

    yield state
    consumer.close()


@pytest.fixture
def world(pipeline, migrated_engine, redis_client, monkeypatch) -> Iterator[World]:
    yield from _world("body", pipeline, migrated_engine, redis_client, monkeypatch)


@pytest.fixture
def world_of_tokens(pipeline, migrated_engine, redis_client, monkeypatch) -> Iterator[World]:
    yield from _world("claims", pipeline, migrated_engine, redis_client, monkeypatch)


@schema.parametrize()
@SAMPLE
def test_every_answer_is_as_documented_and_a_refusal_changes_nothing(case, world):
    _answered_as_documented(case, world)


@USER_ID_ROUTES.parametrize()
@SAMPLE
def test_with_the_user_id_from_the_token_every_answer_is_as_documented(case, world_of_tokens):
    _answered_as_documented(case, world_of_tokens)


def _answered_as_documented(case, world: World) -> None:
    before = world()

    response = case.call()

    case.validate_response(response, checks=CHECKS)
    content_type = response.headers.get("content-type", [""])[0]
    body = json.loads(response.content) if content_type.startswith("application/json") else None
    if response.status_code >= 400:
        assert isinstance(body, dict), response.content
        assert isinstance(body.get("status"), str), body
        assert isinstance(body.get("error"), str), body
        assert world() == before, (case.method, case.path, response.status_code, body)
    elif not content_type.startswith("text/csv"):
        assert isinstance(body, dict), response.content
        assert isinstance(body.get("status"), str), body
