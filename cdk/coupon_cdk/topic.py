"""The Kafka topic as a custom resource: a function in the VPC creates it with the Kafka admin
protocol (IAM auth), because ``AWS::MSK::Topic`` and the MSK topic API serve MSK Provisioned
only (Kafka 3.6 or later), and dev runs MSK Serverless."""

from __future__ import annotations

from typing import cast

from aws_cdk import CfnElement, CustomResource, Stack
from aws_cdk import aws_logs as logs
from aws_cdk import custom_resources as cr
from constructs import Construct

from coupon_cdk.functions import Function
from coupon_cdk.nag import PROVIDER_INVOKES_VERSIONS, accept

CLUSTER_DEFAULT = -1  # replication factor: the cluster's own, as MSK Serverless wants it


class KafkaTopic(Construct):
    """Creates the topic, or grows its partitions (never shrinks them); kept on delete."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        handler: Function,
        cluster_arn: str,
        topic_arn: str,
        partitions: int,
        replication_factor: int,
    ) -> None:
        super().__init__(scope, construct_id)
        handler.allow(["kafka-cluster:Connect"], [cluster_arn])
        # CreateTopics, Metadata (describe), CreatePartitions: what the admin client sends
        handler.allow(
            ["kafka-cluster:CreateTopic", "kafka-cluster:DescribeTopic", "kafka-cluster:AlterTopic"], [topic_arn]
        )
        provider = cr.Provider(
            self, "Provider", on_event_handler=handler.function, log_group=logs.LogGroup(self, "ProviderLogs")
        )
        handler_id = Stack.of(self).get_logical_id(cast(CfnElement, handler.function.node.default_child))
        accept(provider, f"AwsSolutions-IAM5[Resource::<{handler_id}.Arn>:*]", reason=PROVIDER_INVOKES_VERSIONS)
        self.resource = CustomResource(
            self,
            "Resource",
            service_token=provider.service_token,
            resource_type="Custom::KafkaTopic",
            properties={"Partitions": str(partitions), "ReplicationFactor": str(replication_factor)},
        )
