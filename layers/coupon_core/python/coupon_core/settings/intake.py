"""The intake's settings: Redis to reserve, Kafka to produce, the bound on every produce, where
the user id comes from, and the builder function that builds a missing state. No database: the
intake holds no credential of it."""

from __future__ import annotations

from dataclasses import dataclass

from coupon_core.domain.issuing import MEMORY_MS
from coupon_core.settings import FunctionSettings, KafkaSettings, RedisSettings, produce_bounds
from coupon_core.settings import variables as var
from coupon_core.settings.http_api import CallerSettings
from coupon_core.settings.variables import Environ


@dataclass(frozen=True)
class IssuingSettings:
    """The bound on every produce, whether a success waits for Redis replicas, and how long a
    container remembers an answer that stands."""

    produce_timeout_ms: int
    wait_replicas: int  # 0: answer SUCCESS without waiting for Redis replicas (the default)
    wait_timeout_ms: int
    memory_ms: int  # 0: every request asks Redis; at most the contract's second (issuing.MEMORY_MS)

    @classmethod
    def from_env(cls, environ: Environ) -> IssuingSettings:
        return cls(
            produce_timeout_ms=produce_bounds(environ)[0],
            wait_replicas=var.integer(environ, "REDIS_WAIT_REPLICAS", 0, low=0, high=5),
            wait_timeout_ms=var.integer(environ, "REDIS_WAIT_TIMEOUT_MS", 100, low=1, high=2_000),
            memory_ms=var.integer(environ, "ANSWER_MEMORY_MS", MEMORY_MS, low=0, high=MEMORY_MS),
        )


@dataclass(frozen=True)
class BuilderFunctionSettings:
    """The builder function the intake asks to build a missing state (BUILDER_FUNCTION, a Lambda
    function name or ARN). Unset, a request that needs a build answers 503."""

    name: str | None

    @classmethod
    def from_env(cls, environ: Environ) -> BuilderFunctionSettings:
        return cls(name=var.function_name(environ, "BUILDER_FUNCTION"))


@dataclass(frozen=True)
class IntakeSettings(FunctionSettings):
    redis: RedisSettings
    kafka: KafkaSettings
    issuing: IssuingSettings
    caller: CallerSettings
    builder_function: BuilderFunctionSettings
