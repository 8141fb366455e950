"""The whole system as one stack per environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import Aspects, CfnOutput, Duration, Stack, triggers
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from coupon_cdk.api import Api
from coupon_cdk.code import Layers, function_code
from coupon_cdk.config import (
    BUILDER_CONCURRENCY,
    MSK_IAM_CONNECTIONS,
    REBUILD_CONCURRENCY,
    RELAY_CONCURRENCY,
    CdkContextError,
    EnvironmentConfig,
    LocalConfig,
    WarmupConfig,
    iam_connection_limit,
)
from coupon_cdk.functions import Function, FunctionSpec, Placement
from coupon_cdk.monitoring import DataStores, Monitoring
from coupon_cdk.nag import LAMBDA_BASIC_POLICY, accept
from coupon_cdk.network import Network
from coupon_cdk.queues import DeadLetterQueues
from coupon_cdk.retention import Retention
from coupon_cdk.stores import EVENTS_TOPIC, TOPIC, Cache, Database, Kafka
from coupon_cdk.topic import CLUSTER_DEFAULT, KafkaTopics
from coupon_cdk.waf import ApiFirewall

DLQ_HANDLER_TIMEOUT_S = 60


def worker_group(environment: str) -> str:
    """The consumer group of the worker's event source mapping (and of the local bridge)."""
    return f"coupon-worker-{environment}"


class CouponStack(Stack):
    """One environment: on LocalStack with the embedded services (``local``), or on AWS.

    Both halves (:meth:`_on_localstack`, :meth:`_on_aws`) build the same functions, schedules
    and API; the AWS half first builds the managed services they reach, then what exists only
    in AWS (MSK access and topics, the worker's mapping, the migration, the WAF, the alarms).
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: EnvironmentConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        Aspects.of(self).add(Retention(config.log_retention_days, config.removal_policy))
        self._log_retention = _retention(config.log_retention_days)
        self._namespace = f"CouponSystem-{config.name}"
        self._common = {"POWERTOOLS_METRICS_NAMESPACE": self._namespace, "LOG_LEVEL": "info"}
        self._code, self._layers = function_code(local=config.is_local), Layers(self, "Layers", local=config.is_local)
        self.queues = DeadLetterQueues(self, "DeadLetters", handler_timeout_s=DLQ_HANDLER_TIMEOUT_S)
        if config.local is not None:
            self._on_localstack(config.local)
        else:
            self._on_aws(config)
        accept(self, LAMBDA_BASIC_POLICY)  # CDK's own provider functions, see coupon_cdk/nag.py
        CfnOutput(self, "ApiUrl", value=self.api.rest_api.url)
        CfnOutput(self, "DlqUrl", value=self.queues.dlq.queue_url)
        # where the functions' metrics are, for the operators' live view (coupon_client/metrics.py)
        CfnOutput(self, "MetricsNamespace", value=self._namespace)

    def _on_localstack(self, local: LocalConfig) -> None:
        """The local environment: functions outside any VPC that reach the embedded services on
        the host's loopback over TLS, the database through its secret as on AWS
        (docs/architecture.md says where that differs from AWS)."""
        # No X-Ray on LocalStack's free edition: the SDK would only log every subsegment it drops.
        self._common["POWERTOOLS_TRACE_DISABLED"] = "true"
        self._functions(
            Placement(),
            redis_env={"REDIS_URL": local.redis_url},
            database_env={"DB_SECRET_ARN": local.database_secret_arn},
            kafka_env={
                "KAFKA_BOOTSTRAP_SERVERS": local.kafka_bootstrap_servers,
                "KAFKA_AUTH": "none",
                "KAFKA_TLS": local.kafka_tls,
            },
        )
        self._schedules()
        self._api(edge_validation=False)
        secret = secretsmanager.Secret.from_secret_complete_arn(self, "DatabaseSecret", local.database_secret_arn)
        for fn in self._database_users:
            secret.grant_read(fn.role)

    @property
    def _every_function(self) -> tuple[Function, ...]:
        """The functions of every environment (not the deploy-time ones)."""
        return self.intake, self.coupons, self.worker, self.dlq_handler, self.builder, self.rebuild, self.relay

    def _on_aws(self, config: EnvironmentConfig) -> None:
        """An AWS environment: the managed services in a VPC, the functions in it reaching them
        with credentials, and what exists only in AWS."""
        aws = AwsParts.build(self, config, self._log_retention)
        self._functions(
            Placement(
                aws.network.vpc, aws.network.subnets, aws.network.functions, aws.network.functions_without_database
            ),
            redis_env=aws.cache.environment,
            database_env={"DB_SECRET_ARN": aws.database.secret.secret_arn, "DB_HOST": aws.database.host},
            kafka_env={"KAFKA_BOOTSTRAP_SERVERS": aws.kafka.bootstrap_servers, "KAFKA_AUTH": "iam"},
        )
        self._schedules()
        self._api(edge_validation=True)
        self._grant_stores(aws)
        mapping = self._topics_and_mapping(aws, config)
        self._one_scheduled_run_at_a_time()
        self._migrate_first(aws, mapping)
        if config.api.waf_requests_per_5_min:
            ApiFirewall(
                self,
                "Firewall",
                stage_arn=self.api.rest_api.deployment_stage.stage_arn,
                requests_per_5_min=config.api.waf_requests_per_5_min,
                requests_per_5_min_per_caller=config.api.waf_requests_per_5_min_per_caller,
                bot_control=config.api.bot_control,
            )
        self._monitoring(aws, config)

    def _function(
        self, spec: FunctionSpec, environment: dict[str, str], *, redis: bool = False, database: bool = False
    ) -> Function:
        """A function of this environment: its placement, the common variables, those of the
        stores it uses (``redis``, ``database``: it is given and granted only those), its own."""
        stores = (self._redis_env if redis else {}) | (self._database_env if database else {})
        fn = Function(
            self, spec.name.title(), spec=spec, environment=self._common | stores | environment,
            code=self._code, layers=self._layers, placement=self._placement.of(database=database),
            log_retention=self._log_retention,
        )  # fmt: skip
        if redis:
            self._redis_users.append(fn)
        if database:
            self._database_users.append(fn)
        return fn

    def _functions(
        self,
        placement: Placement,
        *,
        redis_env: dict[str, str],
        database_env: dict[str, str],
        kafka_env: dict[str, str],
    ) -> None:
        """The seven functions of every environment, and the wiring between them."""
        config, sizing = self.config, self.config.concurrency
        self._placement, self._redis_env, self._database_env = placement, redis_env, database_env
        self._redis_users: list[Function] = []
        self._database_users: list[Function] = []
        topic_env = {**kafka_env, "KAFKA_TOPIC": TOPIC}
        in_flight_env = {"KAFKA_CONSUMER_GROUP": worker_group(config.name)}  # whose offsets mark the records in flight
        caller_env = {"USER_ID_SOURCE": config.api.user_id_source, "USER_ID_CLAIM": config.api.user_id_claim}
        # The function every user reaches holds no database credential and has no path to it: a
        # state it finds missing is built by the builder function, which it invokes.
        self.intake = self._function(
            FunctionSpec(
                "intake",
                "functions/intake/app.handler",
                "HTTP API: POST /coupon-issues, reserve and publish",
                config.intake_memory_mb,
                10,
                sizing.intake if sizing else None,
            ),
            topic_env | caller_env,
            redis=True,
        )
        self.coupons = self._function(
            FunctionSpec(
                "coupons",
                "functions/coupons/app.handler",
                "HTTP API: every route but POST /coupon-issues",
                512,
                29,  # API Gateway's integration timeout; the reconcile route waits for the rebuild
                sizing.coupons if sizing else None,
            ),
            caller_env,
            redis=True,
            database=True,
        )
        self.worker = self._function(
            FunctionSpec(
                "worker",
                "functions/worker/app.handler",
                "MSK batches to PostgreSQL",
                config.worker_memory_mb,
                120,
                # the MSK mapping runs at most one batch per partition at a time
                config.kafka.partitions if config.kafka else None,
            ),
            {"DLQ_URL": self.queues.dlq.queue_url} | _write_limit_env(config),
            redis=True,
            database=True,
        )
        self.dlq_handler = self._function(
            FunctionSpec(
                "dlq",
                "functions/worker/dlq.handler",
                "release and record failed requests",
                512,
                DLQ_HANDLER_TIMEOUT_S,
                sizing.dlq_handler if sizing else None,
            ),
            topic_env,
            redis=True,
            database=True,
        )
        self.builder = self._function(
            FunctionSpec(
                "builder",
                "functions/rebuild/build.handler",
                "build the Redis state of a coupon the intake found missing",
                1024,
                60,
                None if config.is_local else BUILDER_CONCURRENCY,
            ),
            topic_env | in_flight_env,
            redis=True,
            database=True,
        )
        self.rebuild = self._function(
            FunctionSpec(
                "rebuild",
                "functions/rebuild/app.handler",
                "reconcile Redis with PostgreSQL",
                1024,
                300,
                None if config.is_local else REBUILD_CONCURRENCY,
            ),
            topic_env | in_flight_env,
            redis=True,
            database=True,
        )
        self.relay = self._function(
            FunctionSpec(
                "relay",
                "functions/relay/app.handler",
                "publish the outbox to coupon.events.v1",
                512,
                120,
                None if config.is_local else RELAY_CONCURRENCY,
            ),
            {**kafka_env, "KAFKA_TOPIC": EVENTS_TOPIC},
            database=True,
        )
        self.queues.dlq.grant_send_messages(self.worker.role)
        # the intake has a missing state built by the builder; the operators' reconcile route runs
        # the rebuild for one coupon and returns its report
        for fn, invoked, variable in (
            (self.intake, self.builder, "BUILDER_FUNCTION"),
            (self.coupons, self.rebuild, "REBUILD_FUNCTION"),
        ):
            fn.function.add_environment(variable, invoked.function.function_name)
            fn.allow(["lambda:InvokeFunction"], [invoked.function.function_arn])  # fmt: skip
        self.dlq_handler.function.add_event_source(
            sources.SqsEventSource(
                self.queues.dlq,
                batch_size=10,
                report_batch_item_failures=True,
                max_concurrency=sizing.dlq_mapping if sizing else None,
            )
        )

    def _schedules(self) -> None:
        events.Rule(
            self,
            "RebuildSchedule",
            description="reconcile Redis with PostgreSQL for coupons near their window",
            schedule=events.Schedule.rate(Duration.minutes(self.config.reconcile_every_minutes)),
            targets=[targets.LambdaFunction(self.rebuild.function)],
        )
        events.Rule(
            self,
            "RelaySchedule",
            description="publish the outbox to coupon.events.v1",
            schedule=events.Schedule.rate(Duration.minutes(1)),
            targets=[targets.LambdaFunction(self.relay.function)],
        )

    def _api(self, *, edge_validation: bool) -> None:
        sizing = self.config.concurrency
        self.api = Api(
            self,
            "Api",
            config=self.config.api,
            stage=self.config.name,
            intake=self._warm_intake(sizing.warmup) if sizing and sizing.warmup else self.intake.function,
            coupons=self.coupons.function,
            log_retention=self._log_retention,
            edge_validation=edge_validation,
        )

    def _warm_intake(self, warmup: WarmupConfig) -> lambda_.IFunction:
        """The API calls the intake through an alias whose provisioned concurrency is scheduled:
        ``concurrency.warmup.provisioned`` containers from ``starts`` to ``ends``, none otherwise."""
        alias = lambda_.Alias(self, "IntakeLive", alias_name="live", version=self.intake.function.current_version)
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

    def _grant_stores(self, aws: AwsParts) -> None:
        """Each function reads the database secret, connects to the cache if it uses Redis, and
        gets what its Kafka requests need."""
        kafka, database = aws.kafka, aws.database
        for fn in self._database_users:
            database.secret.grant_read(fn.role)
        for fn in self._redis_users:
            aws.cache.grant_connect(fn.role)
        cluster, topic, group = (
            [kafka.cluster_arn],
            [kafka.topic_arn],
            [kafka.group_arn_prefix + worker_group(self.config.name)],
        )
        # Each client gets what its requests need (MSK's IAM access control, "common use cases").
        # The intake's producer is idempotent (kafka-python's default with acks=all): InitProducerId
        # needs WriteDataIdempotently on the cluster, which WriteData on the topic does not imply.
        self.intake.allow(["kafka-cluster:Connect", "kafka-cluster:WriteDataIdempotently"], cluster)
        self.intake.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:WriteData"], topic)
        for in_flight_reader in (self.builder, self.rebuild):  # the records after the worker group's offsets
            in_flight_reader.allow(["kafka-cluster:Connect"], cluster)
            in_flight_reader.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], topic)
            in_flight_reader.allow(["kafka-cluster:DescribeGroup"], group)
        self.dlq_handler.allow(["kafka-cluster:Connect"], cluster)
        self.dlq_handler.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], topic)
        # The MSK event source mapping uses the worker's role: AWSLambdaMSKExecutionRole's actions
        # (the ENI actions come with every function in the VPC), then the consumer's own.
        self.worker.allow(["kafka:DescribeClusterV2", "kafka:GetBootstrapBrokers"], cluster)
        self.worker.allow(["ec2:DescribeVpcs", "ec2:DescribeSecurityGroups"], ["*"])
        self.worker.allow(["kafka-cluster:Connect", "kafka-cluster:DescribeClusterDynamicConfiguration"], cluster)
        self.worker.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], topic)
        self.worker.allow(["kafka-cluster:AlterGroup", "kafka-cluster:DescribeGroup"], group)
        self.relay.allow(["kafka-cluster:Connect", "kafka-cluster:WriteDataIdempotently"], cluster)
        self.relay.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:WriteData"], [kafka.events_topic_arn])

    def _topics_and_mapping(self, aws: AwsParts, config: EnvironmentConfig) -> lambda_.CfnEventSourceMapping:
        """The topics, made at deploy time, and the worker's MSK event source mapping."""
        assert config.kafka is not None
        kafka = aws.kafka
        topic_maker = self._function(
            FunctionSpec(
                "topic",
                "functions/topic/app.handler",
                "make the Kafka topics, limit the brokers' connections",
                256,
                120,
            ),
            {"KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers, "KAFKA_AUTH": "iam", "KAFKA_TOPIC": TOPIC},
        )
        topics = KafkaTopics(self, "KafkaTopics", handler=topic_maker, cluster_arn=kafka.cluster_arn)
        replicas = CLUSTER_DEFAULT if config.kafka.kind == "serverless" else config.kafka.replication_factor
        issue_topic, events_topic = (
            topics.add(name, name=name, arn=kafka.topic_arn_of(name), partitions=config.kafka.partitions,
                       replication_factor=replicas)
            for name in (TOPIC, EVENTS_TOPIC)
        )  # fmt: skip
        mapping = lambda_.CfnEventSourceMapping(
            self,
            "WorkerMapping",
            function_name=self.worker.function.function_name,
            event_source_arn=kafka.cluster_arn,
            topics=[TOPIC],
            starting_position="TRIM_HORIZON",
            batch_size=config.kafka.batch_size,
            maximum_batching_window_in_seconds=config.kafka.batching_window_s,
            function_response_types=["ReportBatchItemFailures"],
            maximum_retry_attempts=config.kafka.max_retry_attempts,
            provisioned_poller_config=lambda_.CfnEventSourceMapping.ProvisionedPollerConfigProperty(
                minimum_pollers=config.kafka.min_pollers, maximum_pollers=config.kafka.max_pollers
            ),
            amazon_managed_kafka_event_source_config=lambda_.CfnEventSourceMapping.AmazonManagedKafkaEventSourceConfigProperty(
                consumer_group_id=worker_group(config.name)
            ),
            destination_config=lambda_.CfnEventSourceMapping.DestinationConfigProperty(
                on_failure=lambda_.CfnEventSourceMapping.OnFailureProperty(destination=self.queues.dlq.queue_arn)
            ),
            metrics_config=lambda_.CfnEventSourceMapping.MetricsConfigProperty(
                metrics=["EventCount", "ErrorCount", "KafkaMetrics"]
            ),
        )
        mapping.node.add_dependency(self.worker.role, issue_topic)
        self.intake.node.add_dependency(issue_topic)
        limit = iam_connection_limit(config)
        if limit is not None:  # the connection budget needs more than MSK's default (config.iam_connections)
            self.intake.node.add_dependency(topics.limit_iam_connections("IamConnectionLimit", limit=limit))
        self.relay.node.add_dependency(events_topic)
        return mapping

    def _one_scheduled_run_at_a_time(self) -> None:
        """An invocation of the rebuild or the relay that finds its one slot taken is not queued
        for hours behind it: the next schedule comes soon enough. A run that fails, or is dropped
        for its age, leaves its event and error in the failed-runs queue (an alarm watches it)."""
        failed = destinations.SqsDestination(self.queues.add_failed_runs())
        self.rebuild.function.configure_async_invoke(
            retry_attempts=0,
            max_event_age=Duration.minutes(max(1, self.config.reconcile_every_minutes)),
            on_failure=failed,
        )
        self.relay.function.configure_async_invoke(
            retry_attempts=0, max_event_age=Duration.minutes(1), on_failure=failed
        )

    def _monitoring(self, aws: AwsParts, config: EnvironmentConfig) -> None:
        Monitoring(
            self,
            "Monitoring",
            namespace=self._namespace,
            functions={f.node.id: f.function for f in self._every_function},
            worker=self.worker.function,
            dlq=self.queues.dlq,
            redrive=self.queues.redrive,
            failed_runs=self.queues.failed_runs,
            api=self.api.rest_api,
            access_logs=self.api.access_logs,
            stores=aws.stores(config),
            emails=config.alarm_emails,
        )

    def _migrate_first(self, aws: AwsParts, mapping: lambda_.CfnEventSourceMapping) -> None:
        """The schema is upgraded before anything that uses it changes: the functions, the
        mapping and the API deployment wait for the migration, on a first deploy and on each
        upgrade (a new migration changes the layer, so the handler's version, so the trigger)."""
        migrate = self._function(
            FunctionSpec("migrate", "functions/migrate/app.handler", "upgrade the schema at deploy time", 512, 300),
            {},
            database=True,
        )
        aws.database.secret.grant_read(migrate.role)
        deployment = self.api.rest_api.latest_deployment
        assert deployment is not None
        triggers.Trigger(
            self,
            "MigrateOnDeploy",
            handler=migrate.function,
            execute_after=[aws.database.instance],
            execute_before=[*self._every_function, mapping, deployment],
            execute_on_handler_change=True,
            timeout=Duration.minutes(5),
        )  # fmt: skip


@dataclass(frozen=True)
class AwsParts:
    """The managed services of an AWS environment."""

    network: Network
    cache: Cache
    kafka: Kafka
    database: Database

    @classmethod
    def build(cls, stack: Stack, config: EnvironmentConfig, retention: logs.RetentionDays) -> AwsParts:
        assert config.cache is not None
        assert config.kafka is not None
        assert config.database is not None
        name = f"coupons-{config.name}"
        network = Network(
            stack,
            "Network",
            max_azs=config.availability_zones,
            endpoint_azs=config.endpoint_azs,
            log_retention=retention,
        )
        return cls(
            network=network,
            cache=Cache(stack, "Cache", config=config.cache, network=network, name=name),
            kafka=Kafka(stack, "Kafka", config=config.kafka, network=network, name=name, brokers=config.brokers),
            database=Database(stack, "Database", config=config.database, network=network, name=name),
        )

    def stores(self, config: EnvironmentConfig) -> DataStores:
        assert config.cache is not None
        assert config.kafka is not None
        return DataStores(
            database_instance=self.database.instance.instance_identifier,
            proxy=self.database.proxy_name,
            cache_kind=config.cache.kind,
            cache=self.cache.name,
            cache_nodes=self.cache.nodes,
            kafka_kind=config.kafka.kind,
            kafka_cluster=f"coupons-{config.name}",
            brokers=config.brokers,
            iam_connections_per_broker=iam_connection_limit(config) or MSK_IAM_CONNECTIONS,
        )


def _write_limit_env(config: EnvironmentConfig) -> dict[str, str]:
    limit = config.processing_limit
    if limit is None:
        return {}
    return {"WORKER_WRITES_PER_SECOND": str(limit.writes_per_second), "WORKER_WRITE_BURST": str(limit.burst)}


RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    90: logs.RetentionDays.THREE_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
}


def _retention(days: int) -> logs.RetentionDays:
    if days not in RETENTION:
        raise CdkContextError(f"logRetentionDays must be one of {sorted(RETENTION)}, got {days}")
    return RETENTION[days]
