"""The coupons function: every route of the API but ``POST /coupon-issues`` (the public status
and availability reads, the operators' routes)."""

from __future__ import annotations

from coupon_cdk.config import AwsEnvironment, EnvironmentConfig
from coupon_cdk.fleet import Fleet
from coupon_cdk.functions import Function, FunctionSpec
from coupon_cdk.lambdas import common

API_INTEGRATION_TIMEOUT_S = 29  # API Gateway's: the reconcile route waits for the rebuild


def add(fleet: Fleet, config: EnvironmentConfig, aws: AwsEnvironment | None) -> Function:
    spec = FunctionSpec(name="coupons", handler="functions/coupons/app.handler",
                        description="HTTP API: every route but POST /coupon-issues",
                        memory_mb=512, timeout_s=API_INTEGRATION_TIMEOUT_S,
                        reserved_concurrency=aws.concurrency.coupons if aws else None)  # fmt: skip
    return fleet.add(spec, common.caller(config), redis=True, database=True)
