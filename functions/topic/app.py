"""Custom resource handler: the Kafka topic, made at deploy time from inside the VPC.

CloudFormation (through CDK's provider framework) sends Create, Update and Delete; properties
arrive as strings. Create and Update make sure the topic exists with at least the asked
partitions (see :mod:`coupon_core.adapters.kafka.topics`); Delete keeps it: the records in it
are accepted requests, and the cluster's own deletion takes the topic with it.
"""

import os
from typing import Any

from aws_lambda_powertools.utilities.data_classes import CloudFormationCustomResourceEvent, event_source
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.adapters.kafka.topics import TopicSpec, ensure_topic
from coupon_core.errors import ConfigError
from coupon_core.observability import logger
from coupon_core.settings import KafkaSettings


def topic_spec(settings: KafkaSettings, properties: dict[str, Any]) -> TopicSpec:
    """The topic the resource asks for: KAFKA_TOPIC, with its ``Partitions`` and ``ReplicationFactor``."""
    numbers = {}
    for key in ("Partitions", "ReplicationFactor"):
        value = str(properties.get(key, ""))
        if not value.lstrip("-").isascii() or not value.lstrip("-").isdigit():
            raise ConfigError(f"custom resource property {key} must be an integer, got {value!r}")
        numbers[key] = int(value)
    return TopicSpec(settings.topic, numbers["Partitions"], numbers["ReplicationFactor"])


@logger.inject_lambda_context(clear_state=True)
@event_source(data_class=CloudFormationCustomResourceEvent)
def handler(event: CloudFormationCustomResourceEvent, context: LambdaContext) -> dict[str, Any]:
    settings = KafkaSettings.from_env(os.environ)
    if event.request_type == "Delete":
        logger.info("topic kept", extra={"topic": settings.topic})
        return {"PhysicalResourceId": event.physical_resource_id}
    spec = topic_spec(settings, dict(event.resource_properties))
    change = ensure_topic(settings, spec)
    logger.info("topic ready", extra={"topic": spec.name, "partitions": spec.partitions, "change": change})
    return {"PhysicalResourceId": spec.name, "Data": {"Partitions": spec.partitions, "Change": str(change)}}
