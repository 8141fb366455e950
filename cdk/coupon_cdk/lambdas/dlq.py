"""The DLQ handler: the dead letters of the worker's mapping, read back from the issue topic,
each reservation released and its failure recorded."""

from __future__ import annotations

from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs

from coupon_cdk.config import AwsEnvironment
from coupon_cdk.fleet import Fleet
from coupon_cdk.functions import Function, FunctionSpec
from coupon_cdk.lambdas import common
from coupon_cdk.stores import Kafka

DLQ_HANDLER_TIMEOUT_S = 60


def add(fleet: Fleet, aws: AwsEnvironment | None) -> Function:
    spec = FunctionSpec(name="dlq", handler="functions/worker/dlq.handler",
                        description="release and record failed requests", memory_mb=512,
                        timeout_s=DLQ_HANDLER_TIMEOUT_S,
                        reserved_concurrency=aws.concurrency.dlq_handler if aws else None)  # fmt: skip
    return fleet.add(spec, common.topic(fleet), redis=True, database=True)


def grant(fn: Function, kafka: Kafka) -> None:
    fn.allow(["kafka-cluster:Connect"], [kafka.cluster_arn])
    fn.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], [kafka.topic_arn])


def trigger(fn: Function, dlq: sqs.IQueue, aws: AwsEnvironment | None) -> None:
    """The DLQ's messages, ten at a time, as many batches at once as cdk.json's dlqMapping."""
    mapping = aws.concurrency.dlq_mapping if aws else None
    fn.function.add_event_source(
        sources.SqsEventSource(dlq, batch_size=10, report_batch_item_failures=True, max_concurrency=mapping)
    )


def alarms(watch: common.Watch, dlq: sqs.IQueue, redrive: sqs.IQueue) -> None:
    """A dead letter the handler has not settled in 15 minutes, and any it gave up on: each is an
    accepted request, the second waiting for a person (docs/operations.md)."""
    watch.alarm(
        "DlqDepth",
        dlq.metric_approximate_number_of_messages_visible(period=common.FIVE_MINUTES),
        1,
        "dead letters waiting for 15 minutes: the DLQ handler is failing or behind",
        periods=3,
    )
    watch.alarm(
        "DlqAge",
        dlq.metric_approximate_age_of_oldest_message(period=common.FIVE_MINUTES),
        900,
        "a dead letter older than 15 minutes: its reservation is still held",
    )
    watch.alarm(
        "RedriveDepth",
        redrive.metric_approximate_number_of_messages_visible(period=common.FIVE_MINUTES),
        1,
        "dead letters the handler gave up on: each is a request for a person (docs/operations.md)",
    )
