"""The cluster's deploy-time custom resources against the real broker: the topic created once,
left alone, never shrunk; the brokers' IAM connection limit set on every broker, and removed."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from kafka import KafkaAdminClient

from coupon_core.adapters.kafka.topics import CLUSTER_DEFAULT, TopicChange, TopicSpec, ensure_topic
from coupon_core.backend_errors import TopicShrinkError
from coupon_core.errors import ConfigError, UnavailableError
from coupon_core.settings import KafkaSettings
from functions.topic.app import handler
from local.testkit.kafka_topics import client_options, kafka_settings
from local.testkit.lambda_events import InProcessContext


@pytest.fixture
def settings(kafka_bootstrap_servers: str) -> KafkaSettings:
    name = f"coupon.issue.topic-test-{uuid.uuid4().hex[:10]}"
    return kafka_settings(kafka_bootstrap_servers, name)


def partitions(settings: KafkaSettings) -> int | None:
    admin = KafkaAdminClient(**client_options(settings.bootstrap_servers))
    try:
        (topic,) = admin.describe_topics([settings.topic])
    finally:
        admin.close()
    return None if topic["error_code"] else len(topic["partitions"])


def test_the_topic_is_created_once_and_then_left_as_it_is(settings):
    spec = TopicSpec(settings.topic, 4, CLUSTER_DEFAULT)
    assert ensure_topic(settings, spec) is TopicChange.CREATED
    assert ensure_topic(settings, spec) is TopicChange.UNCHANGED
    assert partitions(settings) == 4


def test_a_topic_is_never_shrunk(settings):
    ensure_topic(settings, TopicSpec(settings.topic, 4, CLUSTER_DEFAULT))
    with pytest.raises(TopicShrinkError, match="has 4 partitions; asked for 2, but a topic's partitions can only grow"):
        ensure_topic(settings, TopicSpec(settings.topic, 2, CLUSTER_DEFAULT))
    assert partitions(settings) == 4


def test_growing_asks_the_broker_for_partitions(settings):
    """Tansu has no CreatePartitions (MSK has): the request reaches the broker and its refusal
    comes back as an error that fails the deployment, with the topic as it was."""
    ensure_topic(settings, TopicSpec(settings.topic, 2, CLUSTER_DEFAULT))
    with pytest.raises(UnavailableError, match="CreatePartitions"):
        ensure_topic(settings, TopicSpec(settings.topic, 6, CLUSTER_DEFAULT))
    assert partitions(settings) == 2


def test_two_deployments_at_once_make_one_topic(settings):
    spec = TopicSpec(settings.topic, 3, CLUSTER_DEFAULT)
    with ThreadPoolExecutor(4) as pool:
        changes = list(pool.map(lambda _: ensure_topic(settings, spec), range(4)))
    assert TopicChange.CREATED in changes
    assert set(changes) <= {TopicChange.CREATED, TopicChange.UNCHANGED}
    assert partitions(settings) == 3


def cloudformation_event(
    request_type: str, properties: dict[str, str], resource_type: str = "Custom::KafkaTopic"
) -> dict[str, object]:
    return {
        "RequestType": request_type,
        "ServiceToken": "arn:aws:lambda:eu-west-1:123456789012:function:provider",
        "ResponseURL": "https://example.invalid/response",
        "StackId": "arn:aws:cloudformation:eu-west-1:123456789012:stack/Coupons-dev/1",
        "RequestId": str(uuid.uuid4()),
        "LogicalResourceId": "KafkaTopicResource",
        "PhysicalResourceId": "coupon.issue.v1",
        "ResourceType": resource_type,
        "ResourceProperties": {"ServiceToken": "arn", **properties},
    }


def test_the_handler_creates_on_create_and_keeps_on_delete(settings, monkeypatch):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", ",".join(settings.bootstrap_servers))
    properties = {"TopicName": settings.topic, "Partitions": "3", "ReplicationFactor": "-1"}
    created = handler(cloudformation_event("Create", properties), InProcessContext())
    assert created == {"PhysicalResourceId": settings.topic, "Data": {"Partitions": 3, "Change": "CREATED"}}
    deleted = handler(cloudformation_event("Delete", properties), InProcessContext())
    assert deleted == {"PhysicalResourceId": "coupon.issue.v1"}
    assert partitions(settings) == 3


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"Partitions": "three", "ReplicationFactor": "3"}, "property Partitions must be an integer, got 'three'"),
        ({"ReplicationFactor": "3"}, "property Partitions must be an integer, got ''"),
        ({"Partitions": "\u0663", "ReplicationFactor": "3"}, "property Partitions must be an integer"),
        ({"Partitions": "3", "ReplicationFactor": "--1"}, "property ReplicationFactor must be an integer"),
        ({"Partitions": "0", "ReplicationFactor": "3"}, "partitions must be at least 1, got 0"),
        ({"Partitions": "3", "ReplicationFactor": "0"}, "replication factor must be at least 1 .or -1"),
        ({"TopicName": "no spaces", "Partitions": "3", "ReplicationFactor": "3"}, "TopicName must be a Kafka topic"),
    ],
)
def test_the_handler_refuses_malformed_properties_and_makes_nothing(settings, monkeypatch, properties, message):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", ",".join(settings.bootstrap_servers))
    with pytest.raises(ConfigError, match=message):
        handler(cloudformation_event("Create", {"TopicName": settings.topic, **properties}), InProcessContext())
    assert partitions(settings) is None


def test_the_connection_limit_is_set_on_every_broker_and_removed_on_delete(settings, monkeypatch):
    """Tansu answers IncrementalAlterConfigs for each broker by id, as MSK does (it keeps no such
    listener: what MSK does with the value is its quota page's word, not this test's)."""
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", ",".join(settings.bootstrap_servers))
    monkeypatch.setenv("KAFKA_TOPIC", settings.topic)
    for request_type in ("Create", "Update", "Delete"):
        answer = handler(
            cloudformation_event(request_type, {"Limit": "3100"}, "Custom::KafkaIamConnectionLimit"),
            InProcessContext(),
        )
        assert answer == {"PhysicalResourceId": "iam-connection-limit", "Data": {"Brokers": 1}}


@pytest.mark.parametrize(
    ("properties", "message"),
    [({"Limit": "2999"}, "at least MSK's default 3000"), ({"Limit": "many"}, "property Limit must be an integer")],
)
def test_a_malformed_connection_limit_is_refused_before_any_broker_is_asked(monkeypatch, properties, message):
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9")  # nothing listens: asking would fail otherwise
    monkeypatch.setenv("KAFKA_TOPIC", "coupon.issue.v1")
    with pytest.raises(ConfigError, match=message):
        handler(cloudformation_event("Create", properties, "Custom::KafkaIamConnectionLimit"), InProcessContext())


def test_an_unknown_resource_type_is_refused(monkeypatch):
    with pytest.raises(ConfigError, match="custom resource type must be"):
        handler(cloudformation_event("Create", {}, "Custom::Something"), InProcessContext())
