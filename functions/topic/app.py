"""Custom resource handler: the Kafka cluster's deploy-time settings, made from inside the VPC.

CloudFormation (through CDK's provider framework) sends Create, Update and Delete; properties
arrive as strings. Two resource types:

- ``Custom::KafkaTopic``: Create and Update make sure the topic ``TopicName`` exists with at least
  the asked partitions (see :mod:`coupon_core.adapters.kafka.topics`); Delete keeps it: the
  records in it are accepted requests, and the cluster's own deletion takes the topic with it.
- ``Custom::KafkaIamConnectionLimit``: Create and Update set the brokers' IAM connection limit
  ``Limit`` (see :mod:`coupon_core.adapters.kafka.brokers`); Delete removes it, MSK's default again.
"""

import os
import re
from typing import Any

from aws_lambda_powertools.utilities.data_classes import CloudFormationCustomResourceEvent, event_source
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.adapters.kafka.brokers import set_iam_connection_limit
from coupon_core.adapters.kafka.topics import TopicSpec, ensure_topic
from coupon_core.errors import ConfigError
from coupon_core.observability import logger
from coupon_core.settings import KafkaSettings

TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")
INTEGER = re.compile(r"-?[0-9]{1,9}")  # ASCII digits only: str.isdigit() takes "²"
TOPIC, CONNECTION_LIMIT = "Custom::KafkaTopic", "Custom::KafkaIamConnectionLimit"


def _integer(properties: dict[str, Any], key: str) -> int:
    value = str(properties.get(key, ""))
    if not INTEGER.fullmatch(value):
        raise ConfigError(f"custom resource property {key} must be an integer, got {value!r}")
    return int(value)


def topic_spec(properties: dict[str, Any]) -> TopicSpec:
    """The topic the resource asks for: ``TopicName``, ``Partitions`` and ``ReplicationFactor``."""
    name = str(properties.get("TopicName", ""))
    if not TOPIC_NAME.fullmatch(name):
        raise ConfigError(f"custom resource property TopicName must be a Kafka topic name, got {name!r}")
    return TopicSpec(name, _integer(properties, "Partitions"), _integer(properties, "ReplicationFactor"))


def connection_limit(properties: dict[str, Any]) -> int:
    """The brokers' IAM connection limit the resource asks for: ``Limit``, at least MSK's 3,000."""
    limit = _integer(properties, "Limit")
    if limit < 3_000:
        raise ConfigError(f"custom resource property Limit must be at least MSK's default 3000, got {limit}")
    return limit


def _settings(topic: str) -> KafkaSettings:
    """Where the cluster is, and how to sign in (the function's environment)."""
    return KafkaSettings.from_env({**os.environ, "KAFKA_TOPIC": topic})


@logger.inject_lambda_context(clear_state=True)
@event_source(data_class=CloudFormationCustomResourceEvent)
def handler(event: CloudFormationCustomResourceEvent, context: LambdaContext) -> dict[str, Any]:
    properties = dict(event.resource_properties)
    if event.resource_type == CONNECTION_LIMIT:
        limit = None if event.request_type == "Delete" else connection_limit(properties)
        brokers = set_iam_connection_limit(_settings(os.environ["KAFKA_TOPIC"]), limit)
        logger.info("IAM connection limit set", extra={"limit": limit, "brokers": brokers})
        return {"PhysicalResourceId": "iam-connection-limit", "Data": {"Brokers": len(brokers)}}
    if event.resource_type != TOPIC:
        raise ConfigError(f"custom resource type must be {TOPIC} or {CONNECTION_LIMIT}, got {event.resource_type!r}")
    if event.request_type == "Delete":
        logger.info("topic kept", extra={"topic": event.physical_resource_id})
        return {"PhysicalResourceId": event.physical_resource_id}
    spec = topic_spec(properties)
    change = ensure_topic(_settings(spec.name), spec)
    logger.info("topic ready", extra={"topic": spec.name, "partitions": spec.partitions, "change": change})
    return {"PhysicalResourceId": spec.name, "Data": {"Partitions": spec.partitions, "Change": str(change)}}
