"""The intake's settings: Redis to reserve, Kafka to produce, the bound on every produce, where
the user id comes from, and the builder function that builds a missing state. No database: the
intake holds no credential of it."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coupon_core.domain.issuing import MEMORY_MS
from coupon_core.settings import FUNCTION_NAME, FunctionSettings, KafkaSettings, ProduceBounds, RedisSettings, Settings
from coupon_core.settings.http import CallerSettings


class IssuingSettings(ProduceBounds):
    """The bound on every produce (which the reconcile skew must exceed), whether a success waits
    for Redis replicas, and how long a container remembers an answer that stands."""

    # 0: answer SUCCESS without waiting for Redis replicas (the default)
    wait_replicas: Annotated[int, Field(validation_alias="REDIS_WAIT_REPLICAS", ge=0, le=5)] = 0
    wait_timeout_ms: Annotated[int, Field(validation_alias="REDIS_WAIT_TIMEOUT_MS", ge=1, le=2_000)] = 100
    # 0: every request asks Redis; at most the contract's second (issuing.MEMORY_MS)
    memory_ms: Annotated[int, Field(validation_alias="ANSWER_MEMORY_MS", ge=0, le=MEMORY_MS)] = MEMORY_MS


class BuilderFunctionSettings(Settings):
    """The builder function the intake asks to build a missing state (BUILDER_FUNCTION, a Lambda
    function name or ARN). Unset, a request that needs a build answers 503."""

    name: Annotated[str | None, Field(validation_alias="BUILDER_FUNCTION", pattern=FUNCTION_NAME)] = None


class IntakeSettings(FunctionSettings):
    redis: RedisSettings
    kafka: KafkaSettings
    issuing: IssuingSettings
    caller: CallerSettings
    builder_function: BuilderFunctionSettings
