"""The Kafka cluster's deploy-time settings as custom resources: a function in the VPC makes the
topics with the Kafka admin protocol (IAM auth), because ``AWS::MSK::Topic`` and the MSK topic
API serve MSK Provisioned only (Kafka 3.6 or later), and dev runs MSK Serverless; and, where the
connection budget needs it, it raises the brokers' IAM connection limit (MSK's quota page names
the AlterConfigs API for it)."""

from __future__ import annotations

from typing import cast

from aws_cdk import CfnElement, CustomResource, Stack
from aws_cdk import aws_logs as logs
from aws_cdk import custom_resources as cr
from constructs import Construct

from coupon_cdk.functions import Function
from coupon_cdk.nag import PROVIDER_INVOKES_VERSIONS, accept

CLUSTER_DEFAULT = -1  # replication factor: the cluster's own, as MSK Serverless wants it


class KafkaTopics(Construct):
    """Topics created, or grown (never shrunk), by one handler; kept on delete. The same handler
    sets the brokers' IAM connection limit (:meth:`limit_iam_connections`)."""

    def __init__(self, scope: Construct, construct_id: str, *, handler: Function, cluster_arn: str) -> None:
        super().__init__(scope, construct_id)
        self._handler = handler
        self._cluster_arn = cluster_arn
        handler.allow(["kafka-cluster:Connect"], [cluster_arn])
        self._provider = cr.Provider(
            self, "Provider", on_event_handler=handler.function, log_group=logs.LogGroup(self, "ProviderLogs")
        )
        handler_id = Stack.of(self).get_logical_id(cast(CfnElement, handler.function.node.default_child))
        accept(self._provider, f"AwsSolutions-IAM5[Resource::<{handler_id}.Arn>:*]", reason=PROVIDER_INVOKES_VERSIONS)

    def add(
        self, construct_id: str, *, name: str, arn: str, partitions: int, replication_factor: int
    ) -> CustomResource:
        # CreateTopics, Metadata (describe), CreatePartitions: what the admin client sends
        self._handler.allow(
            ["kafka-cluster:CreateTopic", "kafka-cluster:DescribeTopic", "kafka-cluster:AlterTopic"], [arn]
        )
        return CustomResource(
            self,
            construct_id,
            service_token=self._provider.service_token,
            resource_type="Custom::KafkaTopic",
            properties={
                "TopicName": name,
                "Partitions": str(partitions),
                "ReplicationFactor": str(replication_factor),
            },
        )

    def limit_iam_connections(self, construct_id: str, *, limit: int) -> CustomResource:
        """Every broker's ``listener.name.client_iam.max.connections``, removed again on delete."""
        # DescribeCluster (the brokers' ids), IncrementalAlterConfigs on each broker
        self._handler.allow(
            ["kafka-cluster:DescribeCluster", "kafka-cluster:AlterClusterDynamicConfiguration"], [self._cluster_arn]
        )
        return CustomResource(
            self,
            construct_id,
            service_token=self._provider.service_token,
            resource_type="Custom::KafkaIamConnectionLimit",
            properties={"Limit": str(limit)},
        )
