"""The Lambda functions, each with a role of its own that grants only what it uses."""

from __future__ import annotations

from dataclasses import dataclass, replace

from aws_cdk import CfnOutput, Duration
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from coupon_cdk.code import ARCHITECTURE, RUNTIME, Layers
from coupon_cdk.nag import accept


@dataclass(frozen=True)
class Placement:
    """Where the functions run: in the VPC (AWS) or not (local), in ``security_group`` if they
    use the database, else in ``without_database`` (which has no path to the proxy)."""

    vpc: ec2.IVpc | None = None
    subnets: ec2.SubnetSelection | None = None
    security_group: ec2.ISecurityGroup | None = None
    without_database: ec2.ISecurityGroup | None = None

    def of(self, *, database: bool) -> Placement:
        """The placement of a function that uses the database, or does not."""
        return self if database else replace(self, security_group=self.without_database)


@dataclass(frozen=True, kw_only=True)
class FunctionSpec:
    """What makes one function itself, each by name: no bare number says what it is."""

    name: str
    handler: str
    description: str
    memory_mb: int
    timeout_s: int
    reserved_concurrency: int | None = None  # None: from the account's unreserved pool


class Function(Construct):
    """A Python 3.12 arm64 function with its own role, log group, tracing and the shared layers."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        spec: FunctionSpec,
        environment: dict[str, str],
        code: lambda_.Code,
        layers: Layers,
        placement: Placement,
        log_retention: logs.RetentionDays,
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(self, "Logs", retention=log_retention)
        self.role = iam.Role(
            self, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"), description=f"{spec.name} function"
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[self.log_group.log_group_arn],
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["xray:PutTraceSegments", "xray:PutTelemetryRecords"], resources=["*"])
        )
        if placement.vpc is not None:
            self.role.add_to_policy(
                iam.PolicyStatement(
                    actions=[
                        "ec2:CreateNetworkInterface",
                        "ec2:DescribeNetworkInterfaces",
                        "ec2:DescribeSubnets",
                        "ec2:DeleteNetworkInterface",
                        "ec2:AssignPrivateIpAddresses",
                        "ec2:UnassignPrivateIpAddresses",
                    ],
                    resources=["*"],
                )
            )
        self.function = lambda_.Function(
            self,
            "Function",
            description=spec.description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            code=code,
            handler=spec.handler,
            layers=layers.all,
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_s),
            reserved_concurrent_executions=spec.reserved_concurrency,
            role=self.role,
            log_group=self.log_group,
            tracing=lambda_.Tracing.ACTIVE,
            environment={"POWERTOOLS_SERVICE_NAME": f"coupon-{spec.name}", **environment},
            vpc=placement.vpc,
            vpc_subnets=placement.subnets,
            security_groups=[placement.security_group] if placement.security_group else None,
        )

        # No fixed name (it would block a replacement); operators and the local stack read this output.
        CfnOutput(self, "Name", value=self.function.function_name, key=f"{spec.name.title()}FunctionName")
        CfnOutput(self, "LogGroupName", value=self.log_group.log_group_name, key=f"{spec.name.title()}LogGroup")
        accept(self.role, "AwsSolutions-IAM5[Resource::*]")
        accept(self.function, "AwsSolutions-L1")

    def allow(self, actions: list[str], resources: list[str]) -> None:
        self.role.add_to_policy(iam.PolicyStatement(actions=actions, resources=resources))
