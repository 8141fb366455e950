"""The worker: the issue topic's records, delivered in batches by an MSK event source mapping,
persisted to PostgreSQL; a record that fails for good goes to the DLQ."""

from __future__ import annotations

from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from coupon_cdk.config import AwsEnvironment, EnvironmentConfig, KafkaConfig
from coupon_cdk.fleet import Fleet
from coupon_cdk.functions import Function, FunctionSpec
from coupon_cdk.lambdas import common
from coupon_cdk.stores import TOPIC, Kafka


def add(fleet: Fleet, config: EnvironmentConfig, aws: AwsEnvironment | None, dlq: sqs.IQueue) -> Function:
    spec = FunctionSpec(name="worker", handler="functions/worker/app.handler",
                        description="MSK batches to PostgreSQL", memory_mb=config.worker_memory_mb, timeout_s=120,
                        # the MSK mapping runs at most one batch per partition at a time
                        reserved_concurrency=aws.kafka.partitions if aws else None)  # fmt: skip
    return fleet.add(spec, {"DLQ_URL": dlq.queue_url} | _write_limit(aws), redis=True, database=True)


def _write_limit(aws: AwsEnvironment | None) -> dict[str, str]:
    limit = aws.processing_limit if aws else None
    if limit is None:
        return {}
    return {"WORKER_WRITES_PER_SECOND": str(limit.writes_per_second), "WORKER_WRITE_BURST": str(limit.burst)}


def grant(fn: Function, kafka: Kafka, *, group: str) -> None:
    """The mapping uses the worker's role: AWSLambdaMSKExecutionRole's actions (the ENI actions
    come with every function in the VPC), then the consumer's own."""
    cluster = [kafka.cluster_arn]
    fn.allow(["kafka:DescribeClusterV2", "kafka:GetBootstrapBrokers"], cluster)
    fn.allow(["ec2:DescribeVpcs", "ec2:DescribeSecurityGroups"], ["*"])
    fn.allow(["kafka-cluster:Connect", "kafka-cluster:DescribeClusterDynamicConfiguration"], cluster)
    fn.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], [kafka.topic_arn])
    fn.allow(["kafka-cluster:AlterGroup", "kafka-cluster:DescribeGroup"], [group])


def mapping(scope: Construct, fn: Function, kafka: KafkaConfig, *, cluster_arn: str, dlq_arn: str,
            group: str) -> lambda_.CfnEventSourceMapping:  # fmt: skip
    """The MSK event source mapping: batches of the issue topic, a failed record's offsets to the DLQ."""
    return lambda_.CfnEventSourceMapping(
        scope,
        "WorkerMapping",
        function_name=fn.function.function_name,
        event_source_arn=cluster_arn,
        topics=[TOPIC],
        starting_position="TRIM_HORIZON",
        batch_size=kafka.batch_size,
        maximum_batching_window_in_seconds=kafka.batching_window_s,
        function_response_types=["ReportBatchItemFailures"],
        maximum_retry_attempts=kafka.max_retry_attempts,
        provisioned_poller_config=lambda_.CfnEventSourceMapping.ProvisionedPollerConfigProperty(
            minimum_pollers=kafka.min_pollers, maximum_pollers=kafka.max_pollers
        ),
        amazon_managed_kafka_event_source_config=lambda_.CfnEventSourceMapping.AmazonManagedKafkaEventSourceConfigProperty(
            consumer_group_id=group
        ),
        destination_config=lambda_.CfnEventSourceMapping.DestinationConfigProperty(
            on_failure=lambda_.CfnEventSourceMapping.OnFailureProperty(destination=dlq_arn)
        ),
        metrics_config=lambda_.CfnEventSourceMapping.MetricsConfigProperty(
            metrics=["EventCount", "ErrorCount", "KafkaMetrics"]
        ),
    )


def alarms(watch: common.Watch, fn: lambda_.IFunction) -> None:
    """The worker falling behind the topic (the mapping's offset lag)."""
    lag = common.metric("AWS/Lambda", "OffsetLag", {"FunctionName": fn.function_name}, "Maximum")
    watch.alarm("OffsetLag", lag, 10_000, "the worker falls behind the topic", periods=3)
