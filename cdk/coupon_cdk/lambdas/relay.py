"""The relay: the outbox published to ``coupon.events.v1`` every minute, one run at a time (that
keeps each coupon's events in order)."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

from coupon_cdk.config import RELAY_CONCURRENCY, AwsEnvironment
from coupon_cdk.fleet import Fleet
from coupon_cdk.functions import Function, FunctionSpec
from coupon_cdk.lambdas import common
from coupon_cdk.stores import EVENTS_TOPIC, Kafka

OUTBOX_LAG_S = 300  # the oldest unpublished event, with the relay running every minute


def add(fleet: Fleet, aws: AwsEnvironment | None) -> Function:
    spec = FunctionSpec(name="relay", handler="functions/relay/app.handler",
                        description="publish the outbox to coupon.events.v1", memory_mb=512, timeout_s=120,
                        reserved_concurrency=RELAY_CONCURRENCY if aws else None)  # fmt: skip
    return fleet.add(spec, common.topic(fleet, EVENTS_TOPIC), database=True)


def grant(fn: Function, kafka: Kafka) -> None:
    fn.allow(["kafka-cluster:Connect", "kafka-cluster:WriteDataIdempotently"], [kafka.cluster_arn])
    fn.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:WriteData"], [kafka.events_topic_arn])


def schedule(scope: Construct, fn: Function) -> None:
    events.Rule(
        scope,
        "RelaySchedule",
        description="publish the outbox to coupon.events.v1",
        schedule=events.Schedule.rate(Duration.minutes(1)),
        targets=[targets.LambdaFunction(fn.function)],
    )


def alarms(watch: common.Watch) -> None:
    """Events left in the outbox: the relay fails or falls behind."""
    lag = common.metric(watch.namespace, "OutboxLagSeconds", {"service": "coupon-relay"}, "Maximum")
    watch.alarm("OutboxLag", lag, OUTBOX_LAG_S, "events wait in the outbox: the relay fails or falls behind", periods=3)
