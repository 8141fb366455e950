"""The seven functions of every environment, one module each: what makes it itself (its spec,
its variables), what its role is granted on the brokers, what triggers it, and the alarms of
its own work (an ``alarms`` function ``monitoring.Monitoring`` calls with a ``common.Watch``). This package
builds them in one order and wires the invocations between them; the stores' grants common to
several functions are ``coupon_cdk.managed``'s.

intake.py    POST /coupon-issues: reserve, publish; its warm-up alias
coupons.py   every other route
worker.py    the issue topic's batches to PostgreSQL; its MSK mapping
dlq.py       the worker's dead letters released and recorded; its SQS mapping
builder.py   a missing state built, for the intake
rebuild.py   the reconcile, on its schedule and for the operators' route
relay.py     the outbox published every minute
common.py    what several of them have alike, and where their alarms go (Watch)

LocalStack reserves no concurrency: a function's reserved concurrency is set on AWS only. The
functions are made at the stack's level, not under a construct of their own: their logical
ids, and so the names AWS gives them, stay what they are across a refactoring of this code.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import aws_sqs as sqs

from coupon_cdk.config import AwsEnvironment, EnvironmentConfig
from coupon_cdk.fleet import Fleet
from coupon_cdk.functions import Function
from coupon_cdk.lambdas import builder, common, coupons, dlq, intake, rebuild, relay, worker
from coupon_cdk.stores import Kafka


@dataclass(frozen=True)
class Functions:
    """The seven functions of one environment."""

    fleet: Fleet
    intake: Function
    coupons: Function
    worker: Function
    dlq_handler: Function
    builder: Function
    rebuild: Function
    relay: Function

    @property
    def every(self) -> tuple[Function, ...]:
        return self.intake, self.coupons, self.worker, self.dlq_handler, self.builder, self.rebuild, self.relay

    @classmethod
    def build(cls, fleet: Fleet, *, config: EnvironmentConfig, dlq_queue: sqs.IQueue) -> Functions:
        aws = config if isinstance(config, AwsEnvironment) else None
        functions = cls(
            fleet,
            intake=intake.add(fleet, config, aws),
            coupons=coupons.add(fleet, config, aws),
            worker=worker.add(fleet, config, aws, dlq_queue),
            dlq_handler=dlq.add(fleet, aws),
            builder=builder.add(fleet, config, aws),
            rebuild=rebuild.add(fleet, config, aws),
            relay=relay.add(fleet, aws),
        )
        functions._wire(dlq_queue, aws)
        return functions

    def _wire(self, dlq_queue: sqs.IQueue, aws: AwsEnvironment | None) -> None:
        dlq_queue.grant_send_messages(self.worker.role)
        # the intake has a missing state built by the builder; the operators' reconcile route runs
        # the rebuild for one coupon and returns its report
        for fn, invoked, variable in (
            (self.intake, self.builder, "BUILDER_FUNCTION"),
            (self.coupons, self.rebuild, "REBUILD_FUNCTION"),
        ):
            fn.function.add_environment(variable, invoked.function.function_name)
            fn.allow(["lambda:InvokeFunction"], [invoked.function.function_arn])
        dlq.trigger(self.dlq_handler, dlq_queue, aws)

    def schedule(self, *, reconcile_every_minutes: int) -> None:
        """The rebuild reconciles on its schedule; the relay runs every minute."""
        rebuild.schedule(self.fleet.scope, self.rebuild, every_minutes=reconcile_every_minutes)
        relay.schedule(self.fleet.scope, self.relay)

    def grant_kafka(self, kafka: Kafka, *, group: str) -> None:
        """What each function does on the brokers (MSK's IAM access control, "common use cases");
        ``group``: the worker's consumer group's ARN."""
        intake.grant(self.intake, kafka)
        for in_flight_reader in (self.builder, self.rebuild):
            common.grant_in_flight_reads(in_flight_reader, kafka, group=group)
        dlq.grant(self.dlq_handler, kafka)
        worker.grant(self.worker, kafka, group=group)
        relay.grant(self.relay, kafka)
