"""The brokers' IAM connection limit, set through the Kafka admin protocol at deploy time.

Amazon MSK's quota page: a Standard broker takes 3,000 IAM-authenticated connections at once by
default, and ``listener.name.client_iam.max.connections``, set with the AlterConfigs API, raises
it (the page warns that a high value can make the broker unavailable). The stack sets it only
when its connection budget needs it, by a tenth at most (``coupon_cdk.config.iam_connection_limit``),
on every broker by id: kafka-python's admin client addresses a broker's configuration by its id.
"""

from __future__ import annotations

from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

from coupon_core.adapters.kafka.topics import admin_client
from coupon_core.errors import UnavailableError
from coupon_core.settings import KafkaSettings

IAM_MAX_CONNECTIONS = "listener.name.client_iam.max.connections"


def set_iam_connection_limit(settings: KafkaSettings, limit: int | None) -> list[int]:
    """Set ``limit`` on every broker of the cluster, or with None remove it (MSK's default
    again); the brokers set. Raises :class:`UnavailableError` if a broker refused it."""
    change = (AlterConfigOp.SET, str(limit)) if limit is not None else (AlterConfigOp.DELETE, None)
    with admin_client(settings, IAM_MAX_CONNECTIONS) as admin:
        brokers = sorted(int(broker["broker_id"]) for broker in admin.describe_cluster()["brokers"])
        resources = [ConfigResource(ConfigResourceType.BROKER, str(broker), {IAM_MAX_CONNECTIONS: change})
                     for broker in brokers]  # fmt: skip
        results = admin.alter_configs(resources, raise_on_unknown=False, incremental=True).get("broker", {})
    refused = {broker: result for broker, result in results.items() if result != "OK"}
    if refused or len(results) != len(brokers):
        raise UnavailableError(f"{IAM_MAX_CONNECTIONS} not set on every broker: {results or 'no answer'}")
    return brokers
