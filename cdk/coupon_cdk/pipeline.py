"""What only an AWS environment runs around the functions: the Kafka topics and the worker's MSK
event source mapping, the schema migration before anything that uses it, and the scheduled runs'
failures kept in a queue."""

from __future__ import annotations

from aws_cdk import Duration, triggers
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from constructs import Construct

from coupon_cdk.config import AwsEnvironment, iam_connection_limit
from coupon_cdk.fleet import Fleet, worker_group
from coupon_cdk.functions import FunctionSpec
from coupon_cdk.lambdas import Functions, common, worker
from coupon_cdk.managed import AwsParts
from coupon_cdk.queues import DeadLetterQueues
from coupon_cdk.stores import EVENTS_TOPIC, TOPIC
from coupon_cdk.topic import CLUSTER_DEFAULT, KafkaTopics

MIGRATION_TIMEOUT_S = 300


def topics_and_mapping(
    scope: Construct, fleet: Fleet, functions: Functions, *, aws: AwsParts, config: AwsEnvironment,
    queues: DeadLetterQueues,
) -> lambda_.CfnEventSourceMapping:  # fmt: skip
    """The topics, made at deploy time (and the brokers' IAM connection limit raised when the
    budget needs it), and the worker's MSK event source mapping."""
    kafka_config, kafka = config.kafka, aws.kafka
    topic_maker = fleet.add(
        FunctionSpec(name="topic", handler="functions/topic/app.handler",
                     description="make the Kafka topics, limit the brokers' connections", memory_mb=256, timeout_s=120),
        common.topic(fleet),
    )  # fmt: skip
    topics = KafkaTopics(scope, "KafkaTopics", handler=topic_maker, cluster_arn=kafka.cluster_arn)
    replicas = CLUSTER_DEFAULT if kafka_config.kind == "serverless" else kafka_config.replication_factor
    issue_topic, events_topic = (
        topics.add(name, name=name, arn=kafka.topic_arn_of(name), partitions=kafka_config.partitions,
                   replication_factor=replicas)
        for name in (TOPIC, EVENTS_TOPIC)
    )  # fmt: skip
    mapping = worker.mapping(scope, functions.worker, kafka_config, cluster_arn=kafka.cluster_arn,
                             dlq_arn=queues.dlq.queue_arn, group=worker_group(config.name))  # fmt: skip
    mapping.node.add_dependency(functions.worker.role, issue_topic)
    functions.intake.node.add_dependency(issue_topic)
    limit = iam_connection_limit(config)
    if limit is not None:  # the connection budget needs more than MSK's default (config.iam_connections)
        functions.intake.node.add_dependency(topics.limit_iam_connections("IamConnectionLimit", limit=limit))
    functions.relay.node.add_dependency(events_topic)
    return mapping


def one_scheduled_run_at_a_time(
    functions: Functions, queues: DeadLetterQueues, *, reconcile_every_minutes: int
) -> None:
    """An invocation of the rebuild or the relay that finds its one slot taken is not queued for
    hours behind it: the next schedule comes soon enough. A run that fails, or is dropped for its
    age, leaves its event and error in the failed-runs queue (an alarm watches it)."""
    failed = destinations.SqsDestination(queues.add_failed_runs())
    functions.rebuild.function.configure_async_invoke(
        retry_attempts=0, max_event_age=Duration.minutes(max(1, reconcile_every_minutes)), on_failure=failed
    )
    functions.relay.function.configure_async_invoke(
        retry_attempts=0, max_event_age=Duration.minutes(1), on_failure=failed
    )


def migrate_first(scope: Construct, fleet: Fleet, functions: Functions, *, aws: AwsParts,
                  before: list[Construct]) -> None:  # fmt: skip
    """The schema is upgraded before anything that uses it changes: the functions, the mapping and
    the API deployment (``before``) wait for the migration, on a first deploy and on each upgrade
    (a new migration changes the layer, so the handler's version, so the trigger)."""
    migrate = fleet.add(
        FunctionSpec(name="migrate", handler="functions/migrate/app.handler",
                     description="upgrade the schema at deploy time", memory_mb=512, timeout_s=MIGRATION_TIMEOUT_S),
        {},
        database=True,
    )  # fmt: skip
    aws.database.secret.grant_read(migrate.role)
    triggers.Trigger(
        scope,
        "MigrateOnDeploy",
        handler=migrate.function,
        execute_after=[aws.database.instance],
        execute_before=[*functions.every, *before],
        execute_on_handler_change=True,
        timeout=Duration.seconds(MIGRATION_TIMEOUT_S),
    )
