"""The builder: the Redis state of a coupon the intake found missing, built from the database
and the records in flight, asked synchronously by the intake."""

from __future__ import annotations

from coupon_cdk.config import BUILDER_CONCURRENCY, AwsEnvironment, EnvironmentConfig
from coupon_cdk.fleet import Fleet
from coupon_cdk.functions import Function, FunctionSpec
from coupon_cdk.lambdas import common


def add(fleet: Fleet, config: EnvironmentConfig, aws: AwsEnvironment | None) -> Function:
    spec = FunctionSpec(name="builder", handler="functions/rebuild/build.handler",
                        description="build the Redis state of a coupon the intake found missing",
                        memory_mb=1024, timeout_s=60,
                        reserved_concurrency=BUILDER_CONCURRENCY if aws else None)  # fmt: skip
    return fleet.add(spec, common.topic(fleet) | common.in_flight(config), redis=True, database=True)
