"""CDK app: ``cdk synth -c env=dev`` (or prod, local). See README's Deploy section."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # coupon_cdk, whatever the working directory

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from coupon_cdk.api_account import ApiGatewayAccountStack
from coupon_cdk.config import CONTEXT_KEY, AwsEnvironment, CdkContextError, cdk_json_context, load
from coupon_cdk.stack import CouponStack


def build(app: cdk.App) -> CouponStack:
    """The stack of the environment named by ``-c env=NAME``, with cdk-nag's AwsSolutions checks."""
    overrides = {
        field: value
        for field in ("redisUrl", "databaseSecretArn", "kafkaBootstrapServers", "kafkaTls")
        if (value := app.node.try_get_context(f"local:{field}"))
    }
    config = load(
        app.node.try_get_context(CONTEXT_KEY),
        app.node.try_get_context("env"),
        overrides,
        alarm_emails=app.node.try_get_context("alarmEmails"),
    )
    env = target(app) if isinstance(config, AwsEnvironment) else None
    stack = CouponStack(
        app, f"Coupons-{config.name}", config=config, env=env, description=f"Coupon issuing ({config.name})"
    )
    if isinstance(config, AwsEnvironment) and not config.alarm_emails:
        cdk.Annotations.of(stack).add_warning_v2(
            "coupon:alarms-reach-nobody",
            f"{config.name}'s alarms reach nobody: set {config.name}.alarmEmails in cdk.json or pass "
            "-c alarmEmails=oncall@example.com",
        )
    if env is not None:
        stack.add_stack_dependency(ApiGatewayAccountStack(app, env=env))
    untaggable = ["AWS::RDS::DBProxyTargetGroup"]  # CloudFormation refuses Tags on it
    cdk.Tags.of(stack).add("project", "coupon-system", exclude_resource_types=untaggable)
    cdk.Tags.of(stack).add("environment", config.name, exclude_resource_types=untaggable)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks())
    return stack


# An account, a Region and its AZs as `cdk synth` with credentials would look them up (and keep in
# cdk.context.json): enough to synthesize any environment offline, as the infra tests and the
# bill do. Bundling is skipped: the template, not the assets, is what they read.
OFFLINE_ACCOUNT, OFFLINE_REGION = "123456789012", "eu-west-1"
OFFLINE_ALARM_EMAILS = "oncall@example.com"  # who a deployer names with -c alarmEmails=...


def offline_context(env: str) -> dict[str, Any]:
    """cdk.json's context for ``env``, with the lookups, target and alarm subscriber of no real account."""
    lookups = {
        f"availability-zones:account={OFFLINE_ACCOUNT}:region={OFFLINE_REGION}": [
            f"{OFFLINE_REGION}{az}" for az in "abc"
        ]
    }
    return {
        **cdk_json_context(),
        **lookups,
        "env": env,
        "account": OFFLINE_ACCOUNT,
        "region": OFFLINE_REGION,
        "alarmEmails": OFFLINE_ALARM_EMAILS,
        "aws:cdk:bundling-stacks": [],
    }


def synthesize_offline(env: str, outdir: str) -> tuple[CouponStack, dict[str, Any]]:
    """The environment's stack synthesized into ``outdir``, cdk-nag and CloudFormation's
    validation included (either raises), and its template."""
    app = cdk.App(context=offline_context(env), outdir=outdir)
    stack = build(app)
    assembly = app.synth()
    return stack, assembly.get_stack_by_name(stack.stack_name).template


def target(app: cdk.App) -> cdk.Environment:
    """The account and region to deploy to: ``-c account=... -c region=...``, else the CLI's
    credentials (``CDK_DEFAULT_ACCOUNT``/``CDK_DEFAULT_REGION``).

    An environment-agnostic stack gets two AZs whatever ``max_azs`` says, so a three-AZ network
    (and a broker per AZ for a replication factor of three) needs them.
    """
    account = app.node.try_get_context("account") or os.environ.get("CDK_DEFAULT_ACCOUNT")
    region = app.node.try_get_context("region") or os.environ.get("CDK_DEFAULT_REGION")
    if not account or not region:
        raise CdkContextError(
            "no target account and region: run cdk with AWS credentials, or pass -c account=ID -c region=NAME"
        )
    return cdk.Environment(account=str(account), region=str(region))


def main() -> None:
    app = cdk.App()
    try:
        build(app)
    except CdkContextError as exc:
        sys.exit(f"cdk: {exc}")
    app.synth()


if __name__ == "__main__":
    main()
