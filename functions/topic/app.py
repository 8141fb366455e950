"""Custom resource handler: the Kafka topic, made at deploy time from inside the VPC.

CloudFormation (through CDK's provider framework) sends Create, Update and Delete; properties
arrive as strings. Create and Update make sure the topic ``TopicName`` exists with at least the asked
partitions (see :mod:`coupon_core.adapters.kafka.topics`); Delete keeps it: the records in it
are accepted requests, and the cluster's own deletion takes the topic with it.
"""

import os
import re
from typing import Any

from aws_lambda_powertools.utilities.data_classes import CloudFormationCustomResourceEvent, event_source
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.adapters.kafka.topics import TopicSpec, ensure_topic
from coupon_core.errors import ConfigError
from coupon_core.observability import logger
from coupon_core.settings import KafkaSettings

TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")
INTEGER = re.compile(r"-?[0-9]{1,9}")  # ASCII digits only: str.isdigit() takes "²"


def topic_spec(properties: dict[str, Any]) -> TopicSpec:
    """The topic the resource asks for: ``TopicName``, ``Partitions`` and ``ReplicationFactor``."""
    name = str(properties.get("TopicName", ""))
    if not TOPIC_NAME.fullmatch(name):
        raise ConfigError(f"custom resource property TopicName must be a Kafka topic name, got {name!r}")
    numbers = {}
    for key in ("Partitions", "ReplicationFactor"):
        value = str(properties.get(key, ""))
        if not INTEGER.fullmatch(value):
            raise ConfigError(f"custom resource property {key} must be an integer, got {value!r}")
        numbers[key] = int(value)
    return TopicSpec(name, numbers["Partitions"], numbers["ReplicationFactor"])


@logger.inject_lambda_context(clear_state=True)
@event_source(data_class=CloudFormationCustomResourceEvent)
def handler(event: CloudFormationCustomResourceEvent, context: LambdaContext) -> dict[str, Any]:
    if event.request_type == "Delete":
        logger.info("topic kept", extra={"topic": event.physical_resource_id})
        return {"PhysicalResourceId": event.physical_resource_id}
    spec = topic_spec(dict(event.resource_properties))
    settings = KafkaSettings.from_env({**os.environ, "KAFKA_TOPIC": spec.name})  # where, and how to sign in
    change = ensure_topic(settings, spec)
    logger.info("topic ready", extra={"topic": spec.name, "partitions": spec.partitions, "change": change})
    return {"PhysicalResourceId": spec.name, "Data": {"Partitions": spec.partitions, "Change": str(change)}}
