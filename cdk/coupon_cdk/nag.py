"""cdk-nag findings accepted on purpose, each with its reason, in one place to be reviewed.

Constructs call :func:`accept` on the exact resource a finding is about; the reason is looked up
here, so no suppression exists without one.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct

LAMBDA_BASIC_POLICY = (
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]"
)
APIGW_LOGS_POLICY = (
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]"
)

PROVIDER_INVOKES_VERSIONS = "provider framework invokes its handler"
PREFLIGHT = "a CORS preflight carries no credential"
EDGE_SECRET = "the edge's header is no credential"
AVAILABILITY = "a sale's availability is public"

REASONS = {
    PREFLIGHT: (
        "The OPTIONS methods answer browsers' CORS preflights, which by the CORS standard carry no "
        "credential; API Gateway answers them itself (a mock integration), no function runs, and the "
        "stage's throttle and the web ACL still count them."
    ),
    EDGE_SECRET: (
        "The edge's header only keeps the requests CloudFront sends out of the web ACL's per-IP count; "
        "it grants nothing (the route it reaches is public). Rotating it means one stack update of both "
        "the distribution and the web ACL, which a deploy does."
    ),
    AVAILABILITY: (
        "GET /coupons/{couponId}/availability is public in every environment: a shop's page reads it "
        "before a shopper signs in, and it tells no user's data (a sale's state, window and copies left). "
        "The edge caches it, and the web ACL and the stage's throttle count every request that reaches it."
    ),
    "AwsSolutions-CFR1": "A sale's availability is the same public answer in every country: no geo restriction.",
    "AwsSolutions-CFR2": (
        "The web ACL is the API stage's (Regional): it counts every request the edge lets through, at most "
        "about one per coupon a second; a CloudFront web ACL must live in us-east-1."
    ),
    "AwsSolutions-CFR3": (
        "The edge answers one public read from its cache; its requests are CloudFront's metrics, and every "
        "request that reaches the API is in the stage's access log."
    ),
    "AwsSolutions-CFR4": (
        "The distribution uses CloudFront's own domain and certificate, whose security policy CloudFront "
        "sets (TLSv1); a shop that puts its own domain in front chooses TLSv1.2_2021 with its certificate."
    ),
    PROVIDER_INVOKES_VERSIONS: (
        "CDK's custom resource provider framework may invoke any version of the one handler it serves "
        "(<handler ARN>:*); the handler is named, only its version is a wildcard."
    ),
    "AwsSolutions-IAM5[Resource::*]": (
        "X-Ray's PutTraceSegments and PutTelemetryRecords and the ENI actions of a function in a VPC "
        "accept no resource but '*'; every data action (SQS, Kafka, secrets, logs) names its resource."
    ),
    "AwsSolutions-L1": (
        "Python 3.12 is the runtime the design pins; the layers are built and tested for it. Moving to "
        "a newer runtime is a deliberate upgrade, not a drift."
    ),
    LAMBDA_BASIC_POLICY: (
        "The provider functions CDK itself ships for custom resources (MSK bootstrap broker lookup, the "
        "topic's provider framework, the deploy-time migration trigger, the default security group "
        "restriction) use AWS's basic execution policy for their own logs only."
    ),
    APIGW_LOGS_POLICY: (
        "API Gateway's account-level CloudWatch role needs AWS's policy to write access and execution logs."
    ),
    "AwsSolutions-SMG4": (
        "The functions read the database secret once per container; a rotation would need a rotation "
        "function in the VPC and a reconnect on authentication errors. Rotation is an operations task "
        "(docs/operations.md), not scheduled by this stack."
    ),
    "AwsSolutions-RDS3": "Single-AZ only in dev, to keep its cost down; prod is Multi-AZ (cdk.json).",
    "AwsSolutions-RDS10": "No deletion protection in dev, which is torn down and rebuilt; prod has it (cdk.json).",
    "AwsSolutions-RDS11": (
        "The port is no security boundary: the instance sits in isolated subnets and only the functions' "
        "and the proxy's security groups may reach it."
    ),
    "AwsSolutions-AEC6": (
        "The cache requires IAM authentication through its user group (an IAM-enabled user; the default "
        "user switched off), which replaces an AUTH token: cdk-nag's rule looks for an AuthToken only. "
        "Only the functions' security group reaches the cache, over TLS."
    ),
    "AwsSolutions-SQS3": (
        "The failed-runs queue is itself a dead letter queue: Lambda's on-failure destination for the "
        "scheduled functions' runs; a queue behind it would only move the same messages once more."
    ),
    "AwsSolutions-APIG2": (
        "Local environment only: LocalStack ignores the gateway response templates that put API Gateway's "
        "refusals in the API's format, so validation is left to the intake function, which validates "
        "every request in every environment."
    ),
    "AwsSolutions-APIG3": (
        "Only where api.wafRequestsPer5Min is 0 (dev, small, local): every route of dev and small is "
        "IAM-authorised but a sale's public availability, which the edge caches a second and the stage's "
        "throttle bounds, and which reads one Redis script at most a second per container and coupon; "
        "prod has a web ACL (per-IP and per-viewer rates and AWS's common rule set)."
    ),
    "AwsSolutions-APIG4": (
        "Local environment only (publicAuth none), whose API exists on LocalStack on this machine; the "
        "configuration refuses publicAuth none for an AWS environment."
    ),
    "AwsSolutions-COG4": (
        "Admin routes are IAM-authorised (operators, CI), which cdk-nag does not count as an authorizer; "
        "the public routes use Cognito in prod and IAM in dev."
    ),
}


def accept(scope: IConstruct, *findings: str, reason: str | None = None) -> None:
    """Acknowledge ``findings`` on ``scope`` and below, with the reasons recorded above (or the
    one named by ``reason``, for findings whose id holds a logical id)."""
    Validations.of(scope).acknowledge(
        *(Acknowledgment(id=finding, reason=REASONS[reason or finding]) for finding in findings)
    )
