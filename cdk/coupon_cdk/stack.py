"""The whole system as one stack per environment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk import CfnOutput, Duration, Stack, triggers
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from constructs import Construct

from coupon_cdk.api import Api
from coupon_cdk.code import Layers
from coupon_cdk.config import ConfigError, EnvironmentConfig
from coupon_cdk.data import TOPIC, Cache, Database, Kafka
from coupon_cdk.functions import Function, FunctionSpec, Placement
from coupon_cdk.monitoring import Monitoring
from coupon_cdk.nag import LAMBDA_BASIC_POLICY, accept
from coupon_cdk.network import Network
from coupon_cdk.queues import DeadLetterQueues

DLQ_HANDLER_TIMEOUT_S = 60
FunctionFactory = Callable[[FunctionSpec, dict[str, str]], Function]


def worker_group(environment: str) -> str:
    """The consumer group of the worker's event source mapping (and of the local bridge)."""
    return f"coupon-worker-{environment}"


KAFKA_READ = ["kafka-cluster:Connect", "kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"]


class CouponStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: EnvironmentConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        retention = _retention(config.log_retention_days)
        namespace = f"CouponSystem-{config.name}"
        common = {"POWERTOOLS_METRICS_NAMESPACE": namespace, "LOG_LEVEL": "info"}
        layers = Layers(self, "Layers", with_dependencies=config.local is None)
        self.queues = DeadLetterQueues(self, "DeadLetters", handler_timeout_s=DLQ_HANDLER_TIMEOUT_S)

        if config.local is not None:
            # No X-Ray on LocalStack's free edition: the SDK would only log every subsegment it drops.
            common["POWERTOOLS_TRACE_DISABLED"] = "true"
            placement = Placement()
            data_env = {"REDIS_URL": config.local.redis_url, "DATABASE_URL": config.local.database_url}
            kafka_env = {"KAFKA_BOOTSTRAP_SERVERS": config.local.kafka_bootstrap_servers, "KAFKA_AUTH": "none"}
        else:
            assert config.cache is not None
            assert config.kafka is not None
            assert config.database is not None
            network = Network(self, "Network", max_azs=3 if config.database.multi_az else 2, log_retention=retention)
            placement = Placement(network.vpc, network.subnets, network.functions)
            cache = Cache(self, "Cache", config=config.cache, network=network, name=f"coupons-{config.name}")
            kafka = Kafka(self, "Kafka", config=config.kafka, network=network, name=f"coupons-{config.name}")
            database = Database(self, "Database", config=config.database, network=network)
            data_env = {"REDIS_URL": cache.url, "DB_SECRET_ARN": database.secret.secret_arn, "DB_HOST": database.host}
            kafka_env = {"KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers, "KAFKA_AUTH": "iam"}

        def function(spec: FunctionSpec, environment: dict[str, str]) -> Function:
            return Function(
                self, spec.name.title(), spec=spec, environment=common | data_env | environment,
                layers=layers, placement=placement, log_retention=retention,
            )  # fmt: skip

        topic_env = {**kafka_env, "KAFKA_TOPIC": TOPIC}
        in_flight_env = {"KAFKA_CONSUMER_GROUP": worker_group(config.name)}  # whose offsets mark the records in flight
        self.intake = function(
            FunctionSpec(
                "intake", "functions/intake/app.handler", "HTTP API: reserve and publish", config.intake_memory_mb, 10
            ),
            # a coupon's state is built from the database and the records in flight, within its 10 s
            topic_env | in_flight_env | {"USER_ID_SOURCE": config.api.user_id_source, "READ_BACK_TIMEOUT_S": "4"},
        )
        self.worker = function(
            FunctionSpec(
                "worker", "functions/worker/app.handler", "MSK batches to PostgreSQL", config.worker_memory_mb, 120
            ),
            {"DLQ_URL": self.queues.dlq.queue_url},
        )
        self.dlq_handler = function(
            FunctionSpec(
                "dlq", "functions/worker/dlq.handler", "release and record failed requests", 512, DLQ_HANDLER_TIMEOUT_S
            ),
            topic_env,
        )
        self.rebuild = function(
            FunctionSpec("rebuild", "functions/rebuild/app.handler", "reconcile Redis with PostgreSQL", 1024, 300),
            topic_env | in_flight_env,
        )
        self.queues.dlq.grant_send_messages(self.worker.role)
        self.dlq_handler.function.add_event_source(
            sources.SqsEventSource(self.queues.dlq, batch_size=10, report_batch_item_failures=True)
        )
        events.Rule(
            self,
            "ReconcileSchedule",
            description="reconcile Redis with PostgreSQL for coupons near their window",
            schedule=events.Schedule.rate(Duration.minutes(config.reconcile_every_minutes)),
            targets=[targets.LambdaFunction(self.rebuild.function)],
        )
        self.api = Api(
            self,
            "Api",
            config=config.api,
            stage=config.name,
            intake=self.intake.function,
            log_retention=retention,
            edge_validation=config.local is None,
        )
        if config.local is None:
            self._wire_aws(kafka, database, config, function)
        if config.local is None:  # alarms need a KMS key LocalStack's free edition cannot create
            Monitoring(
                self,
                "Monitoring",
                namespace=namespace,
                functions={f.node.id: f.function for f in (self.intake, self.worker, self.dlq_handler, self.rebuild)},
                dlq=self.queues.dlq,
                redrive=self.queues.redrive,
                api=self.api.rest_api,
            )
        accept(self, LAMBDA_BASIC_POLICY)  # CDK's own provider functions, see coupon_cdk/nag.py
        CfnOutput(self, "ApiUrl", value=self.api.rest_api.url)
        CfnOutput(self, "DlqUrl", value=self.queues.dlq.queue_url)

    def _wire_aws(
        self,
        kafka: Kafka,
        database: Database,
        config: EnvironmentConfig,
        function: Callable[[FunctionSpec, dict[str, str]], Function],
    ) -> None:
        """Grants and resources that exist only in AWS: MSK access, the mapping, the migration."""
        assert config.kafka is not None
        for fn in (self.intake, self.worker, self.dlq_handler, self.rebuild):
            database.secret.grant_read(fn.role)
        cluster = [kafka.cluster_arn]
        group = worker_group(config.name)
        self.intake.allow(["kafka-cluster:Connect"], cluster)
        self.intake.allow(["kafka-cluster:DescribeTopic", "kafka-cluster:WriteData"], [kafka.topic_arn])
        # The intake and the rebuild read the topic's tail after the worker group's committed offsets.
        for reader in (self.intake, self.rebuild):
            reader.allow(["kafka-cluster:Connect"], cluster)
            reader.allow(KAFKA_READ[1:], [kafka.topic_arn])
            reader.allow(["kafka-cluster:DescribeGroup"], [kafka.group_arn_prefix + group])
        self.dlq_handler.allow(["kafka-cluster:Connect"], cluster)
        self.dlq_handler.allow(KAFKA_READ[1:], [kafka.topic_arn])
        # What the MSK event source mapping does with the worker's role.
        self.worker.allow(["kafka:DescribeClusterV2", "kafka:GetBootstrapBrokers"], cluster)
        self.worker.allow(["kafka-cluster:Connect", "kafka-cluster:DescribeClusterDynamicConfiguration"], cluster)
        self.worker.allow(KAFKA_READ[1:], [kafka.topic_arn])
        self.worker.allow(["kafka-cluster:AlterGroup", "kafka-cluster:DescribeGroup"], [kafka.group_arn_prefix + group])
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
                consumer_group_id=group
            ),
            destination_config=lambda_.CfnEventSourceMapping.DestinationConfigProperty(
                on_failure=lambda_.CfnEventSourceMapping.OnFailureProperty(destination=self.queues.dlq.queue_arn)
            ),
        )
        mapping.node.add_dependency(self.worker.role, kafka.topic)
        migrate = function(
            FunctionSpec("migrate", "functions/migrate/app.handler", "upgrade the schema at deploy time", 512, 300), {}
        )
        database.secret.grant_read(migrate.role)
        triggers.Trigger(
            self,
            "MigrateOnDeploy",
            handler=migrate.function,
            execute_after=[database.instance],
            execute_on_handler_change=True,
            timeout=Duration.minutes(5),
        )


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
        raise ConfigError(f"logRetentionDays must be one of {sorted(RETENTION)}, got {days}")
    return RETENTION[days]
