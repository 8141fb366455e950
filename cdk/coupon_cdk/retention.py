"""What happens to the stack's resources over time: how long logs are kept, and what a
``cdk destroy`` (or a replacement) leaves behind, per environment.

Applied as an aspect to the whole stack, so resources CDK adds on its own (the functions of
custom resource providers, their log groups) follow the same rules as ours.
"""

from __future__ import annotations

import jsii
from aws_cdk import CfnResource, IAspect, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct, IConstruct

from coupon_cdk.config import CdkContextError

# Data an environment keeps when it says removalPolicy=retain: snapshots where the service takes
# one on deletion, the resource itself otherwise.
KEPT = {
    "AWS::RDS::DBInstance": RemovalPolicy.SNAPSHOT,
    "AWS::ElastiCache::ReplicationGroup": RemovalPolicy.SNAPSHOT,
    "AWS::ElastiCache::ServerlessCache": RemovalPolicy.RETAIN,
    "AWS::MSK::Cluster": RemovalPolicy.RETAIN,
    "AWS::MSK::ServerlessCluster": RemovalPolicy.RETAIN,
    "AWS::SecretsManager::Secret": RemovalPolicy.RETAIN,
    "AWS::SQS::Queue": RemovalPolicy.RETAIN,
    "AWS::Logs::LogGroup": RemovalPolicy.RETAIN,
    "AWS::KMS::Key": RemovalPolicy.RETAIN,
    "AWS::Cognito::UserPool": RemovalPolicy.RETAIN,
}


@jsii.implements(IAspect)
class Retention:
    """Every log group keeps ``retention_days``; every function writes to one of them; the data
    stores of :data:`KEPT` are kept (``retain``) or deleted with the stack (``destroy``)."""

    def __init__(self, retention_days: int, removal: str) -> None:
        self._retention_days = retention_days
        self._retain = removal == "retain"

    def visit(self, node: IConstruct) -> None:
        if not isinstance(node, CfnResource):
            return
        if isinstance(node, logs.CfnLogGroup):
            node.retention_in_days = self._retention_days
        if node.cfn_resource_type == "AWS::Lambda::Function":
            self._give_log_group(node)
        if node.cfn_resource_type in KEPT:
            node.apply_removal_policy(KEPT[node.cfn_resource_type] if self._retain else RemovalPolicy.DESTROY)

    def _give_log_group(self, function: CfnResource) -> None:
        """Functions CDK adds without a log group (custom resource providers) would create
        ``/aws/lambda/<name>`` themselves, kept forever; they get one of ours instead."""
        if isinstance(function, lambda_.CfnFunction) and function.logging_config is not None:
            return
        scope = function.node.scope
        assert isinstance(scope, Construct)
        if scope.node.try_find_child("LogGroup") is not None:
            return
        group = logs.CfnLogGroup(scope, "LogGroup", retention_in_days=self._retention_days)
        group.apply_removal_policy(RemovalPolicy.RETAIN if self._retain else RemovalPolicy.DESTROY)
        function.add_property_override("LoggingConfig.LogGroup", group.ref)


RETENTION_DAYS = {
    1: logs.RetentionDays.ONE_DAY,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    90: logs.RetentionDays.THREE_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
}


def log_retention(days: int) -> logs.RetentionDays:
    """``logRetentionDays`` as CDK names it; a number CloudWatch Logs does not offer is refused."""
    if days not in RETENTION_DAYS:
        raise CdkContextError(f"logRetentionDays must be one of {sorted(RETENTION_DAYS)}, got {days}")
    return RETENTION_DAYS[days]
