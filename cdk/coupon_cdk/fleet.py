"""The seven functions of every environment, and the wiring between them: who invokes whom, which
stores each is given, the DLQ handler's mapping, and the intake's scheduled warm-up.

The functions are made at the stack's level, not under a construct of their own: their logical
ids, and so the names AWS gives them, stay what they are across a refactoring of this code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import Duration
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from coupon_cdk.code import Layers, function_code
from coupon_cdk.config import (
    BUILDER_CONCURRENCY,
    REBUILD_CONCURRENCY,
    RELAY_CONCURRENCY,
    AwsEnvironment,
    EnvironmentConfig,
    LocalEnvironment,
    WarmupConfig,
)
from coupon_cdk.functions import Function, FunctionSpec, Placement
from coupon_cdk.stores import EVENTS_TOPIC, TOPIC

DLQ_HANDLER_TIMEOUT_S = 60
API_INTEGRATION_TIMEOUT_S = 29  # API Gateway's: the coupons function's reconcile route waits for the rebuild


def worker_group(environment: str) -> str:
    """The consumer group of the worker's event source mapping (and of the local bridge)."""
    return f"coupon-worker-{environment}"


@dataclass(frozen=True)
class StoreAccess:
    """How the functions reach the stores of one environment: where they run, and the variables
    that name the cache, the database and the brokers."""

    placement: Placement
    redis: dict[str, str]
    database: dict[str, str]
    kafka: dict[str, str]


@dataclass(frozen=True)
class Shared:
    """What every function of the environment gets: its code and layers, the common variables,
    its log retention."""

    code: lambda_.Code
    layers: Layers
    environment: dict[str, str]
    log_retention: logs.RetentionDays


@dataclass
class Fleet:
    """The functions of one environment, made by :meth:`build`; ``redis_users`` and
    ``database_users`` are those given each store, which the stack grants."""

    scope: Construct
    stores: StoreAccess
    shared: Shared
    redis_users: list[Function] = field(default_factory=list)
    database_users: list[Function] = field(default_factory=list)

    def add(self, spec: FunctionSpec, environment: dict[str, str], *, redis: bool = False,
            database: bool = False) -> Function:  # fmt: skip
        """A function given the common variables, those of the stores it uses (and only those)
        and its own."""
        stores = (self.stores.redis if redis else {}) | (self.stores.database if database else {})
        fn = Function(
            self.scope, spec.name.title(), spec=spec, environment=self.shared.environment | stores | environment,
            code=self.shared.code, layers=self.shared.layers, placement=self.stores.placement.of(database=database),
            log_retention=self.shared.log_retention,
        )  # fmt: skip
        if redis:
            self.redis_users.append(fn)
        if database:
            self.database_users.append(fn)
        return fn


@dataclass(frozen=True)
class Functions:
    """The seven functions of every environment (the deploy-time ones are the AWS half's)."""

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
    def build(cls, fleet: Fleet, *, config: EnvironmentConfig, dlq: sqs.IQueue) -> Functions:
        aws = config if isinstance(config, AwsEnvironment) else None  # LocalStack reserves no concurrency
        sizing, kafka = aws.concurrency if aws else None, fleet.stores.kafka
        topic_env = {**kafka, "KAFKA_TOPIC": TOPIC}
        in_flight_env = {"KAFKA_CONSUMER_GROUP": worker_group(config.name)}  # whose offsets mark the records in flight
        # a SUCCESS waits for the replicas cdk.json asks for (CacheConfig.wait_replicas)
        wait_env = {"REDIS_WAIT_REPLICAS": str(aws.cache.wait_replicas)} if aws else {}
        caller_env = {
            "USER_ID_SOURCE": config.api.user_id_source,
            "USER_ID_CLAIM": config.api.user_id_claim,
            "CORS_ORIGINS": ",".join(config.api.cors_origins),
        }
        spec = FunctionSpec

        def on_aws(reserved: int) -> int | None:
            return reserved if aws else None

        # The function every user reaches holds no database credential and has no path to it: a
        # state it finds missing is built by the builder function, which it invokes.
        functions = cls(
            fleet,
            intake=fleet.add(spec(name="intake", handler="functions/intake/app.handler",
                                  description="HTTP API: POST /coupon-issues, reserve and publish",
                                  memory_mb=config.intake_memory_mb, timeout_s=10,
                                  reserved_concurrency=sizing.intake if sizing else None),
                             topic_env | caller_env | wait_env, redis=True),
            coupons=fleet.add(spec(name="coupons", handler="functions/coupons/app.handler",
                                   description="HTTP API: every route but POST /coupon-issues",
                                   memory_mb=512, timeout_s=API_INTEGRATION_TIMEOUT_S,
                                   reserved_concurrency=sizing.coupons if sizing else None),
                              caller_env, redis=True, database=True),
            worker=fleet.add(spec(name="worker", handler="functions/worker/app.handler",
                                  description="MSK batches to PostgreSQL", memory_mb=config.worker_memory_mb,
                                  timeout_s=120,
                                  # the MSK mapping runs at most one batch per partition at a time
                                  reserved_concurrency=aws.kafka.partitions if aws else None),
                             {"DLQ_URL": dlq.queue_url} | _write_limit_env(aws), redis=True, database=True),
            dlq_handler=fleet.add(spec(name="dlq", handler="functions/worker/dlq.handler",
                                       description="release and record failed requests", memory_mb=512,
                                       timeout_s=DLQ_HANDLER_TIMEOUT_S,
                                       reserved_concurrency=sizing.dlq_handler if sizing else None),
                                  topic_env, redis=True, database=True),
            builder=fleet.add(spec(name="builder", handler="functions/rebuild/build.handler",
                                   description="build the Redis state of a coupon the intake found missing",
                                   memory_mb=1024, timeout_s=60,
                                   reserved_concurrency=on_aws(BUILDER_CONCURRENCY)),
                              topic_env | in_flight_env, redis=True, database=True),
            rebuild=fleet.add(spec(name="rebuild", handler="functions/rebuild/app.handler",
                                   description="reconcile Redis with PostgreSQL", memory_mb=1024, timeout_s=300,
                                   reserved_concurrency=on_aws(REBUILD_CONCURRENCY)),
                              topic_env | in_flight_env, redis=True, database=True),
            relay=fleet.add(spec(name="relay", handler="functions/relay/app.handler",
                                 description="publish the outbox to coupon.events.v1", memory_mb=512, timeout_s=120,
                                 reserved_concurrency=on_aws(RELAY_CONCURRENCY)),
                            {**kafka, "KAFKA_TOPIC": EVENTS_TOPIC}, database=True),
        )  # fmt: skip
        functions._wire(dlq, dlq_mapping=sizing.dlq_mapping if sizing else None)
        return functions

    def _wire(self, dlq: sqs.IQueue, *, dlq_mapping: int | None) -> None:
        dlq.grant_send_messages(self.worker.role)
        # the intake has a missing state built by the builder; the operators' reconcile route runs
        # the rebuild for one coupon and returns its report
        for fn, invoked, variable in (
            (self.intake, self.builder, "BUILDER_FUNCTION"),
            (self.coupons, self.rebuild, "REBUILD_FUNCTION"),
        ):
            fn.function.add_environment(variable, invoked.function.function_name)
            fn.allow(["lambda:InvokeFunction"], [invoked.function.function_arn])
        self.dlq_handler.function.add_event_source(
            sources.SqsEventSource(dlq, batch_size=10, report_batch_item_failures=True, max_concurrency=dlq_mapping)
        )

    def schedule(self, *, reconcile_every_minutes: int) -> None:
        """The rebuild reconciles on its schedule; the relay runs every minute."""
        events.Rule(
            self.fleet.scope,
            "RebuildSchedule",
            description="reconcile Redis with PostgreSQL for coupons near their window",
            schedule=events.Schedule.rate(Duration.minutes(reconcile_every_minutes)),
            targets=[targets.LambdaFunction(self.rebuild.function)],
        )
        events.Rule(
            self.fleet.scope,
            "RelaySchedule",
            description="publish the outbox to coupon.events.v1",
            schedule=events.Schedule.rate(Duration.minutes(1)),
            targets=[targets.LambdaFunction(self.relay.function)],
        )

    def intake_target(self, warmup: WarmupConfig | None) -> lambda_.IFunction:
        """What the API calls for ``POST /coupon-issues``: the intake, or, with a warm-up, an alias
        whose provisioned concurrency is scheduled (the warm-up's ``provisioned`` containers from
        its ``starts`` to its ``ends``, none otherwise)."""
        if warmup is None:
            return self.intake.function
        alias = lambda_.Alias(
            self.fleet.scope, "IntakeLive", alias_name="live", version=self.intake.function.current_version
        )
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


def shared(scope: Construct, config: EnvironmentConfig, environment: dict[str, str],
           log_retention: logs.RetentionDays) -> Shared:  # fmt: skip
    """The code, layers and common variables of the environment's functions."""
    local = isinstance(config, LocalEnvironment)
    return Shared(function_code(local=local), Layers(scope, "Layers", local=local), environment, log_retention)


def _write_limit_env(aws: AwsEnvironment | None) -> dict[str, str]:
    if aws is None:
        return {}
    limit = aws.processing_limit
    return {"WORKER_WRITES_PER_SECOND": str(limit.writes_per_second), "WORKER_WRITE_BURST": str(limit.burst)}
