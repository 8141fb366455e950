"""The coupons function's settings: Redis and the database for every route but the issue
request's, where the user id comes from, and the rebuild function of the reconcile route."""

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


class CouponsSettings(FunctionSettings):
    redis: RedisSettings
    database: DatabaseSettings
    retention: RetentionSettings
    caller: CallerSettings
    rebuild_function: RebuildFunctionSettings
