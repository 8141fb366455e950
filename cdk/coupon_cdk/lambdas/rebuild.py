"""The rebuild: Redis reconciled with PostgreSQL, on its schedule for the coupons near their
window, and for one coupon on an operator's reconcile route."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

from coupon_cdk.config import REBUILD_CONCURRENCY, AwsEnvironment, EnvironmentConfig
from coupon_cdk.fleet import Fleet
from coupon_cdk.functions import Function, FunctionSpec
from coupon_cdk.lambdas import common

DRIFT_THRESHOLD = 100  # users added or released by reconcile in five minutes


def add(fleet: Fleet, config: EnvironmentConfig, aws: AwsEnvironment | None) -> Function:
    spec = FunctionSpec(name="rebuild", handler="functions/rebuild/app.handler",
                        description="reconcile Redis with PostgreSQL", memory_mb=1024, timeout_s=300,
                        reserved_concurrency=REBUILD_CONCURRENCY if aws else None)  # fmt: skip
    return fleet.add(spec, common.topic(fleet) | common.in_flight(config), redis=True, database=True)


def schedule(scope: Construct, fn: Function, *, every_minutes: int) -> None:
    events.Rule(
        scope,
        "RebuildSchedule",
        description="reconcile Redis with PostgreSQL for coupons near their window",
        schedule=events.Schedule.rate(Duration.minutes(every_minutes)),
        targets=[targets.LambdaFunction(fn.function)],
    )


def alarms(watch: common.Watch) -> None:
    """Reconcile repairing Redis run after run: something leaks reservations or loses keys."""
    drift = common.metric(watch.namespace, "ReconcileDrift", {"service": "coupon-rebuild"}, "Sum")
    watch.alarm(
        "ReconcileDrift", drift, DRIFT_THRESHOLD, "reconcile keeps repairing Redis: look for leaks or lost keys"
    )
