"""The coupons function's settings: Redis and the database for every route but the issue
request's, where the user id comes from, and the rebuild function of the reconcile route."""

from __future__ import annotations

from dataclasses import dataclass

from coupon_core.settings import DatabaseSettings, FunctionSettings, RedisSettings, RetentionSettings
from coupon_core.settings import variables as var
from coupon_core.settings.http_api import CallerSettings
from coupon_core.settings.variables import Environ


@dataclass(frozen=True)
class RebuildFunctionSettings:
    """The rebuild function the reconcile route invokes (REBUILD_FUNCTION, a Lambda function name
    or ARN). Unset, the route answers 503."""

    name: str | None

    @classmethod
    def from_env(cls, environ: Environ) -> RebuildFunctionSettings:
        return cls(name=var.function_name(environ, "REBUILD_FUNCTION"))


@dataclass(frozen=True)
class CouponsSettings(FunctionSettings):
    redis: RedisSettings
    database: DatabaseSettings
    retention: RetentionSettings
    caller: CallerSettings
    rebuild_function: RebuildFunctionSettings
