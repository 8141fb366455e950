"""The coupons function's settings: Redis and the database for every route but the issue
request's, where the user id comes from, the rebuild function of the reconcile route, and the
edge's secret."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coupon_core.settings import FUNCTION_NAME, FunctionSettings, RedisSettings, Settings
from coupon_core.settings.backend import DatabaseSettings, RetentionSettings
from coupon_core.settings.http import CallerSettings


class RebuildFunctionSettings(Settings):
    """The rebuild function the reconcile route invokes (REBUILD_FUNCTION, a Lambda function name
    or ARN). Unset, the route answers 503."""

    name: Annotated[str | None, Field(validation_alias="REBUILD_FUNCTION", pattern=FUNCTION_NAME)] = None


class EdgeSettings(Settings):
    """The secret the edge sends in its header (EDGE_SECRET_ARN, a Secrets Manager ARN), by which a
    sale's availability knows the edge asked and reads Redis for it. Unset (no edge: local), every
    request is answered as a page's."""

    secret_arn: Annotated[
        str | None, Field(validation_alias="EDGE_SECRET_ARN", pattern=r"^arn:[\w-]+:secretsmanager:")
    ] = None


class CouponsSettings(FunctionSettings):
    redis: RedisSettings
    database: DatabaseSettings
    retention: RetentionSettings
    caller: CallerSettings
    rebuild_function: RebuildFunctionSettings
    edge: EdgeSettings
