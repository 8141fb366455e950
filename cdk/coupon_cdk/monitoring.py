"""Alarms on what an operator must act on, sent to one encrypted SNS topic."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

FIVE_MINUTES = Duration.minutes(5)
DRIFT_THRESHOLD = 100  # users added or released by reconcile in five minutes


class Monitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        namespace: str,
        functions: dict[str, lambda_.IFunction],
        dlq: sqs.IQueue,
        redrive: sqs.IQueue,
        api: apigw.RestApi,
    ) -> None:
        super().__init__(scope, construct_id)
        key = kms.Key(self, "AlarmsKey", enable_key_rotation=True, description="alarm topic encryption")
        self.topic = sns.Topic(self, "Alarms", master_key=key, enforce_ssl=True)
        action = actions.SnsAction(self.topic)

        def alarm(name: str, metric: cloudwatch.IMetric, threshold: float, description: str) -> None:
            created = cloudwatch.Alarm(
                self,
                name,
                metric=metric,
                threshold=threshold,
                evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
                alarm_description=description,
            )
            created.add_alarm_action(action)

        alarm("DlqDepth", dlq.metric_approximate_number_of_messages_visible(period=FIVE_MINUTES), 1,
              "dead letters waiting: the DLQ handler is failing or behind (docs/operations.md)")  # fmt: skip
        alarm("RedriveDepth", redrive.metric_approximate_number_of_messages_visible(period=FIVE_MINUTES), 1,
              "dead letters the handler gave up on: read them (docs/operations.md)")  # fmt: skip
        for name, function in functions.items():
            alarm(f"{name}Errors", function.metric_errors(period=FIVE_MINUTES), 1, f"{name} function errors")
            alarm(f"{name}Throttles", function.metric_throttles(period=FIVE_MINUTES), 1, f"{name} function throttled")
        drift = cloudwatch.Metric(
            namespace=namespace, metric_name="ReconcileDrift", statistic="Sum", period=FIVE_MINUTES,
            dimensions_map={"service": "coupon-rebuild"},
        )  # fmt: skip
        alarm("ReconcileDrift", drift, DRIFT_THRESHOLD, "reconcile keeps repairing Redis: look for leaks or lost keys")
        alarm("Api5xx", api.metric_server_error(period=FIVE_MINUTES, statistic="Sum"), 5, "API answers 5xx")
