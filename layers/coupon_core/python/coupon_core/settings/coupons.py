"""The coupons function's settings: Redis and the database for every route but the issue
request's, where the user id comes from, and the rebuild function of the reconcile route."""

from __future__ import annotations

from dataclasses import dataclass

from coupon_core.settings import DatabaseSettings, FunctionSettings, RedisSettings, RetentionSettings
from coupon_core.settings.http_api import CallerSettings, RebuildFunctionSettings


@dataclass(frozen=True)
class CouponsSettings(FunctionSettings):
    redis: RedisSettings
    database: DatabaseSettings
    retention: RetentionSettings
    caller: CallerSettings
    rebuild_function: RebuildFunctionSettings
