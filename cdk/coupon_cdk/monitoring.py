"""Alarms on what an operator must act on, sent to one encrypted SNS topic, and one dashboard.

:class:`Monitoring` is the ``Watch`` each function's module puts the alarms of its own work on
(``coupon_cdk/lambdas/``: the DLQ's, the worker's lag, the reconcile's drift, the outbox's lag, the
intake's memory); it adds what every function has (errors, throttles), the API's and the stores'.

Thresholds look at several periods (``datapoints`` of ``periods``) so that one failed request
does not page anyone; the dead letters the DLQ handler gave up on are the exception, since
each is an accepted request waiting for a person (docs/operations.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from coupon_cdk.lambdas import dlq as dlq_handler
from coupon_cdk.lambdas import intake, rebuild, relay
from coupon_cdk.lambdas import worker as worker_function
from coupon_cdk.lambdas.common import FIVE_MINUTES, ONE_MINUTE, metric


@dataclass(frozen=True)
class DataStores:
    """Names the AWS metrics of the data stores use as dimensions."""

    database_instance: str
    proxy: str
    cache_kind: str
    cache: str  # the serverless cache's name or the replication group's id
    cache_nodes: int
    kafka_kind: str
    kafka_cluster: str
    brokers: int
    iam_connections_per_broker: int  # what each broker takes: MSK's default, or the limit the stack set


class Monitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        namespace: str,
        functions: dict[str, lambda_.IFunction],
        worker: lambda_.IFunction,
        dlq: sqs.IQueue,
        redrive: sqs.IQueue,
        failed_runs: sqs.IQueue,
        api: apigw.RestApi,
        access_logs: logs.ILogGroup,
        stores: DataStores,
        emails: tuple[str, ...],
    ) -> None:
        super().__init__(scope, construct_id)
        key = kms.Key(self, "AlarmsKey", enable_key_rotation=True, description="alarm topic encryption")
        # CloudWatch publishes to the encrypted topic only if the key lets it (SNS encryption at rest)
        key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        self.topic = sns.Topic(self, "Alarms", master_key=key, enforce_ssl=True)
        for email in emails:
            self.topic.add_subscription(subscriptions.EmailSubscription(email))
        self._action = actions.SnsAction(self.topic)
        self._graphs: list[cloudwatch.IWidget] = []
        self.namespace = namespace

        dlq_handler.alarms(self, dlq, redrive)
        self.alarm(
            "FailedRuns",
            failed_runs.metric_approximate_number_of_messages_visible(period=FIVE_MINUTES),
            1,
            "a scheduled rebuild or relay run failed or was dropped (docs/operations.md, Failed scheduled runs)",
        )
        for name, function in functions.items():
            self.alarm(
                f"{name}Errors",
                function.metric_errors(period=FIVE_MINUTES),
                10,
                f"{name} function errors",
                periods=3,
                datapoints=2,
            )
            self.alarm(
                f"{name}Throttles",
                function.metric_throttles(period=FIVE_MINUTES),
                10,
                f"{name} function throttled: reserved concurrency reached",
                periods=3,
                datapoints=2,
            )
        worker_function.alarms(self, worker)
        rebuild.alarms(self)
        relay.alarms(self)
        self._api(api, access_logs, namespace)
        intake.alarms(self)
        self._stores(stores)
        cloudwatch.Dashboard(
            self, "Dashboard", widgets=[self._graphs[i : i + 4] for i in range(0, len(self._graphs), 4)]
        )

    def _api(self, api: apigw.RestApi, access_logs: logs.ILogGroup, namespace: str) -> None:
        self.alarm(
            "Api5xx",
            api.metric_server_error(period=FIVE_MINUTES, statistic="Sum"),
            10,
            "API answers 5xx",
            periods=3,
            datapoints=2,
        )
        self.alarm(
            "ApiLatencyP99",
            api.metric_latency(period=ONE_MINUTE, statistic="p99"),
            1_000,
            "API p99 latency above one second",
            periods=5,
            datapoints=4,
        )
        # API Gateway counts 429s among all 4xx; the access log has each answer's status
        logs.MetricFilter(
            self, "Throttled429", log_group=access_logs, metric_namespace=namespace, metric_name="ApiThrottled",
            filter_pattern=logs.FilterPattern.string_value("$.status", "=", "429"), metric_value="1", default_value=0,
        )  # fmt: skip
        self.alarm(
            "Api429",
            metric(namespace, "ApiThrottled", {}, "Sum"),
            1_000,
            "callers throttled (stage limit or reserved concurrency)",
            periods=3,
            datapoints=2,
        )

    def _stores(self, stores: DataStores) -> None:
        rds = {"DBInstanceIdentifier": stores.database_instance}
        self.alarm("DatabaseCpu", metric("AWS/RDS", "CPUUtilization", rds, "Average"), 80, "database CPU", periods=3)
        self.alarm(
            "DatabaseConnections",
            metric("AWS/RDS", "DatabaseConnections", rds, "Maximum"),
            400,
            "database connections near the instance's limit",
            periods=3,
        )
        borrow = metric("AWS/RDS", "DatabaseConnectionsBorrowLatency", {"ProxyName": stores.proxy}, "Average")
        self.alarm("ProxyBorrowLatency", borrow, 50_000, "proxy waits over 50 ms for a connection (µs)", periods=3)
        if stores.cache_kind == "serverless":
            serverless = {"clusterId": stores.cache}
            self.alarm(
                "CacheThrottled",
                metric("AWS/ElastiCache", "ThrottledCmds", serverless, "Sum"),
                100,
                "the serverless cache throttles commands while it scales",
                periods=3,
                datapoints=2,
            )
            self.graph("Cache ECPUs", metric("AWS/ElastiCache", "ElastiCacheProcessingUnits", serverless, "Sum"))
        else:
            for node in range(1, stores.cache_nodes + 1):
                member = {"CacheClusterId": f"{stores.cache}-{node:03d}"}
                self.alarm(
                    f"CacheCpu{node}",
                    metric("AWS/ElastiCache", "EngineCPUUtilization", member, "Maximum"),
                    80,
                    f"Valkey node {node}: engine CPU (one core runs every reserve)",
                    periods=3,
                )
                self.alarm(
                    f"CacheMemory{node}",
                    metric("AWS/ElastiCache", "DatabaseMemoryUsagePercentage", member, "Maximum"),
                    80,
                    f"Valkey node {node}: memory; at 100% (noeviction) every reserve answers 503",
                    periods=2,
                )
        if stores.kafka_kind == "provisioned":
            for broker in range(1, stores.brokers + 1):
                dims = {"Cluster Name": stores.kafka_cluster, "Broker ID": str(broker)}
                self.alarm(
                    f"BrokerCpu{broker}",
                    metric("AWS/Kafka", "CpuUser", dims, "Average"),
                    60,
                    f"MSK broker {broker}: CPU",
                    periods=3,
                )
                self.alarm(
                    f"BrokerConnections{broker}",
                    metric("AWS/Kafka", "ConnectionCount", dims, "Maximum"),
                    round(stores.iam_connections_per_broker * CONNECTIONS_ALARM_SHARE),
                    f"MSK broker {broker}: connections near the {stores.iam_connections_per_broker} it takes with IAM; "
                    "beyond, new ones are refused and an intake that cannot reach its leader answers 503",
                    periods=1,
                )
                self.alarm(
                    f"BrokerDisk{broker}",
                    metric("AWS/Kafka", "KafkaDataLogsDiskUsed", dims, "Maximum"),
                    80,
                    f"MSK broker {broker}: data disk used (%)",
                    periods=2,
                )

    def alarm(
        self, name: str, metric: cloudwatch.IMetric, threshold: float, description: str, *,
        periods: int = 1, datapoints: int | None = None,
    ) -> None:  # fmt: skip
        created = cloudwatch.Alarm(
            self,
            name,
            metric=metric,
            threshold=threshold,
            evaluation_periods=periods,
            datapoints_to_alarm=datapoints or periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        created.add_alarm_action(self._action)
        self._graphs.append(cloudwatch.AlarmWidget(alarm=created, title=name, width=6))

    def graph(self, title: str, *metrics: cloudwatch.IMetric) -> None:
        self._graphs.append(cloudwatch.GraphWidget(title=title, left=list(metrics), width=6))


CONNECTIONS_ALARM_SHARE = 0.9  # of the IAM connections a broker takes, where its alarm fires
