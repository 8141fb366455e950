"""API Gateway's account settings: the role it writes access and execution logs with.

``AWS::ApiGateway::Account`` is one per account and region. Made by every environment's stack,
the second environment would take it over and the first one's deletion would remove it from
under the other; so it lives in this stack of its own, which every environment depends on
(``cdk deploy Coupons-dev`` deploys it first, once).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from constructs import Construct

from coupon_cdk.nag import APIGW_LOGS_POLICY, accept

STACK_NAME = "Coupons-ApiGatewayAccount"


class ApiGatewayAccountStack(Stack):
    def __init__(self, scope: Construct, construct_id: str = STACK_NAME, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description="API Gateway CloudWatch role (one per region)", **kwargs)
        role = iam.Role(
            self,
            "CloudWatchRole",
            assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"),
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name("service-role/AmazonAPIGatewayPushToCloudWatchLogs")
            ],
        )
        accept(role, APIGW_LOGS_POLICY)
        apigw.CfnAccount(self, "Account", cloud_watch_role_arn=role.role_arn)
