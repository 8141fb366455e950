"""The whole system as one stack per environment: the constructs of ``coupon_cdk``, wired."""

from __future__ import annotations

from typing import Any

from aws_cdk import Aspects, CfnOutput, Stack
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk.aws_logs import RetentionDays
from constructs import Construct

from coupon_cdk.api import Api
from coupon_cdk.config import AwsEnvironment, EnvironmentConfig, LocalConfig, LocalEnvironment
from coupon_cdk.edge import VIEWER_HEADER, SaleEdge
from coupon_cdk.fleet import Fleet, Shared, StoreAccess, shared
from coupon_cdk.functions import Placement
from coupon_cdk.lambdas import Functions, intake
from coupon_cdk.lambdas.dlq import DLQ_HANDLER_TIMEOUT_S
from coupon_cdk.managed import AwsParts
from coupon_cdk.monitoring import Monitoring
from coupon_cdk.nag import LAMBDA_BASIC_POLICY, accept
from coupon_cdk.pipeline import migrate_first, one_scheduled_run_at_a_time, topics_and_mapping
from coupon_cdk.queues import DeadLetterQueues
from coupon_cdk.retention import Retention, log_retention
from coupon_cdk.waf import ApiFirewall
from functions.http_api.request import EDGE_HEADER


class CouponStack(Stack):
    """One environment: on LocalStack with the embedded services (``local``), or on AWS.

    Both build the same functions, schedules and API; an AWS environment first builds the managed
    services they reach, then what exists only on AWS (MSK access and topics, the worker's
    mapping, the migration, the WAF, the alarms).
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: EnvironmentConfig, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        Aspects.of(self).add(Retention(config.log_retention_days, config.removal_policy))
        retention = log_retention(config.log_retention_days)
        namespace = f"CouponSystem-{config.name}"
        common = {"POWERTOOLS_METRICS_NAMESPACE": namespace, "LOG_LEVEL": "info"}
        if isinstance(config, LocalEnvironment):
            # No X-Ray on LocalStack's free edition: the SDK would only log every subsegment it drops.
            common["POWERTOOLS_TRACE_DISABLED"] = "true"
        code_and_layers = shared(self, config, common, retention)
        queues = DeadLetterQueues(self, "DeadLetters", handler_timeout_s=DLQ_HANDLER_TIMEOUT_S)
        if isinstance(config, AwsEnvironment):
            aws = AwsParts.build(self, config, retention)
            fleet, functions, api = self._served(config, aws.access(), code_and_layers, queues, retention)
            self._aws_only(config, aws, fleet=fleet, functions=functions, queues=queues, api=api, namespace=namespace)
        else:
            fleet, functions, api = self._served(config, _localstack_access(config.local), code_and_layers, queues,
                                                 retention)  # fmt: skip
            self._grant_local_secret(fleet, config.local)
        accept(self, LAMBDA_BASIC_POLICY)  # CDK's own provider functions, see coupon_cdk/nag.py
        CfnOutput(self, "ApiUrl", value=api.rest_api.url)
        CfnOutput(self, "DlqUrl", value=queues.dlq.queue_url)
        # where the functions' metrics are, for the operators' live view (coupon_client/metrics.py)
        CfnOutput(self, "MetricsNamespace", value=namespace)

    def _served(self, config: EnvironmentConfig, access: StoreAccess, code_and_layers: Shared,
                queues: DeadLetterQueues, retention: RetentionDays) -> tuple[Fleet, Functions, Api]:  # fmt: skip
        """What both kinds of environment build: the functions, their schedules and the API."""
        fleet = Fleet(self, access, code_and_layers)
        functions = Functions.build(fleet, config=config, dlq_queue=queues.dlq)
        functions.schedule(reconcile_every_minutes=config.reconcile_every_minutes)
        aws = config if isinstance(config, AwsEnvironment) else None
        api = Api(
            self,
            "Api",
            config=config.api,
            stage=config.name,
            intake=intake.target(fleet, functions.intake, aws.concurrency.warmup if aws else None),
            coupons=functions.coupons.function,
            log_retention=retention,
            edge_validation=aws is not None,
        )
        return fleet, functions, api

    def _grant_local_secret(self, fleet: Fleet, local: LocalConfig) -> None:
        """On LocalStack the functions read the database's secret from its Secrets Manager, as on AWS."""
        secret = secretsmanager.Secret.from_secret_complete_arn(self, "DatabaseSecret", local.database_secret_arn)
        for fn in fleet.database_users:
            secret.grant_read(fn.role)

    def _aws_only(self, config: AwsEnvironment, aws: AwsParts, *, fleet: Fleet, functions: Functions,
                  queues: DeadLetterQueues, api: Api, namespace: str) -> None:  # fmt: skip
        """What exists only on AWS: the stores' grants, the topics and the worker's mapping, the
        scheduled runs one at a time, the migration first, the edge cache, the web ACL and the alarms."""
        aws.grant(fleet, functions, environment=config.name)
        mapping = topics_and_mapping(self, fleet, functions, aws=aws, config=config, queues=queues)
        one_scheduled_run_at_a_time(functions, queues, reconcile_every_minutes=config.reconcile_every_minutes)
        deployment = api.rest_api.latest_deployment
        assert deployment is not None
        migrate_first(self, fleet, functions, aws=aws, before=[mapping, deployment])
        edge = SaleEdge(self, "Edge", rest_api=api.rest_api, region=self.region, listed=list(config.api.cors_origins))
        # the coupons function reads Redis for the edge's requests (functions/coupons/dependencies.py, from_edge)
        functions.coupons.function.add_environment("EDGE_SECRET_ARN", edge.secret.secret_arn)
        edge.secret.grant_read(functions.coupons.function)
        if config.api.waf_requests_per_5_min:
            ApiFirewall(
                self,
                "Firewall",
                stage_arn=api.rest_api.deployment_stage.stage_arn,
                requests_per_5_min=config.api.waf_requests_per_5_min,
                requests_per_5_min_per_caller=config.api.waf_requests_per_5_min_per_caller,
                bot_control=config.api.bot_control,
                edge_header=(EDGE_HEADER, edge.header_value),
                viewer_header=VIEWER_HEADER,
            )
        Monitoring(
            self,
            "Monitoring",
            namespace=namespace,
            functions={f.node.id: f.function for f in functions.every},
            worker=functions.worker.function,
            dlq=queues.dlq,
            redrive=queues.redrive,
            failed_runs=queues.failed_runs,
            api=api.rest_api,
            access_logs=api.access_logs,
            stores=aws.stores(config),
            emails=config.alarm_emails,
        )


def _localstack_access(local: LocalConfig) -> StoreAccess:
    """The local environment: functions outside any VPC that reach the embedded services on the
    host's loopback over TLS, the database through its secret as on AWS (docs/architecture.md,
    Fidelity, says where that differs from AWS)."""
    return StoreAccess(
        placement=Placement(),
        redis={"REDIS_URL": local.redis_url},
        database={"DB_SECRET_ARN": local.database_secret_arn},
        kafka={
            "KAFKA_BOOTSTRAP_SERVERS": local.kafka_bootstrap_servers,
            "KAFKA_AUTH": "none",
            "KAFKA_TLS": local.kafka_tls,
        },
    )
