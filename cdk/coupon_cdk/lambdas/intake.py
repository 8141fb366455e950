"""The intake: ``POST /coupon-issues``, reserve in Redis and publish to the issue topic. It holds
no database credential and has no path to it: a state it finds missing is built by the builder
function, which it invokes."""

from __future__ import annotations

from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_

from coupon_cdk.config import AwsEnvironment, EnvironmentConfig, WarmupConfig
from coupon_cdk.fleet import Fleet
from coupon_cdk.functions import Function, FunctionSpec
from coupon_cdk.lambdas import common
from coupon_cdk.stores import Kafka


def add(fleet: Fleet, config: EnvironmentConfig, aws: AwsEnvironment | None) -> Function:
    # a SUCCESS waits for the replicas cdk.json asks for (CacheConfig.wait_replicas)
    wait = {"REDIS_WAIT_REPLICAS": str(aws.cache.wait_replicas)} if aws else {}
    spec = FunctionSpec(name="intake", handler="functions/intake/app.handler",
                        description="HTTP API: POST /coupon-issues, reserve and publish",
                        memory_mb=config.intake_memory_mb, timeout_s=10,
                        reserved_concurrency=aws.concurrency.intake if aws else None)  # fmt: skip
    return fleet.add(spec, common.topic(fleet) | common.caller(config) | wait, redis=True)


def grant(fn: Function, kafka: Kafka) -> None:
    # The producer is idempotent (kafka-python's default with acks=all): InitProducerId needs
    # WriteDataIdempotently on the cluster, which WriteData on the topic does not imply.
    fn.allow(["kafka-cluster:Connect", "kafka-cluster:WriteDataIdempotently"], [kafka.cluster_arn])
    fn.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:WriteData"], [kafka.topic_arn])


def target(fleet: Fleet, fn: Function, warmup: WarmupConfig | None) -> lambda_.IFunction:
    """What the API calls for ``POST /coupon-issues``: the intake, or, with a warm-up, an alias
    whose provisioned concurrency is scheduled (the warm-up's ``provisioned`` containers from
    its ``starts`` to its ``ends``, none otherwise)."""
    if warmup is None:
        return fn.function
    alias = lambda_.Alias(fleet.scope, "IntakeLive", alias_name="live", version=fn.function.current_version)
    scaling = alias.add_auto_scaling(min_capacity=0, max_capacity=warmup.provisioned)
    scaling.scale_on_schedule(
        "WarmUp",
        schedule=appscaling.Schedule.expression(warmup.starts),
        min_capacity=warmup.provisioned,
        max_capacity=warmup.provisioned,
    )
    scaling.scale_on_schedule(
        "CoolDown", schedule=appscaling.Schedule.expression(warmup.ends), min_capacity=0, max_capacity=0
    )
    return alias


def alarms(watch: common.Watch) -> None:
    """No alarm, a graph: the intake's memory (docs/design.md), the answers it gave without Redis
    and the refusals it learned from Redis (its refreshes: about one a second per container and coupon)."""
    per_second = [
        cloudwatch.MathExpression(
            expression=f"{key} / PERIOD({key})",  # one id per metric in a graph
            using_metrics={key: common.metric(watch.namespace, name, {"service": "coupon-intake"}, "Sum")},
            label=label,
            period=common.ONE_MINUTE,
        )
        for key, name, label in (
            ("remembered", "IssueFromMemory", "answers from memory/s"),
            ("refreshes", "IssueMemoryRefresh", "refreshes/s"),
        )
    ]
    watch.graph("Intake memory", *per_second)
