"""The intake's settings: where the user id comes from, the bound on every produce, and the
rebuild function it invokes for an on-demand reconcile."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

from coupon_core.errors import ConfigError
from coupon_core.settings import (
    ConsumerGroupSettings,
    DatabaseSettings,
    FunctionSettings,
    KafkaSettings,
    ReadBackSettings,
    RedisSettings,
    RetentionSettings,
    produce_bounds,
)
from coupon_core.settings import variables as var
from coupon_core.settings.variables import Environ

UserIdSource = Literal["body", "claims"]


def _claim_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_:.-]{1,128}", value):
        raise ConfigError(f"USER_ID_CLAIM must be a claim name (letters, digits, _ : . -); got {value!r}")
    return value


@dataclass(frozen=True)
class IssuingSettings:
    """The intake's own: where the user id comes from, and the bound on every produce.

    With ``USER_ID_SOURCE=claims`` the user id is the token's ``USER_ID_CLAIM`` (default
    ``custom:user_id``, an immutable Cognito attribute set when the user is created: Cognito's
    own ``sub`` is a UUID, not the numeric id the API works with).
    """

    user_id_source: UserIdSource
    user_id_claim: str
    produce_timeout_ms: int
    wait_replicas: int  # 0: answer SUCCESS without waiting for Redis replicas (the default)
    wait_timeout_ms: int

    @classmethod
    def from_env(cls, environ: Environ) -> IssuingSettings:
        return cls(
            user_id_source=cast(UserIdSource, var.choice(environ, "USER_ID_SOURCE", ("body", "claims"), "body")),
            user_id_claim=_claim_name(environ.get("USER_ID_CLAIM", "custom:user_id").strip() or "custom:user_id"),
            produce_timeout_ms=produce_bounds(environ)[0],
            wait_replicas=var.integer(environ, "REDIS_WAIT_REPLICAS", 0, low=0, high=5),
            wait_timeout_ms=var.integer(environ, "REDIS_WAIT_TIMEOUT_MS", 100, low=1, high=2_000),
        )


@dataclass(frozen=True)
class RebuildFunctionSettings:
    """The rebuild function the intake invokes to reconcile a coupon on demand (REBUILD_FUNCTION;
    unset, the operators' reconcile route answers 503)."""

    name: str | None

    @classmethod
    def from_env(cls, environ: Environ) -> RebuildFunctionSettings:
        name = environ.get("REBUILD_FUNCTION", "").strip() or None
        if name is not None and not re.fullmatch(r"[A-Za-z0-9_:.-]{1,140}", name):
            raise ConfigError(f"REBUILD_FUNCTION must be a Lambda function name or ARN; got {name!r}")
        return cls(name=name)


@dataclass(frozen=True)
class IntakeSettings(FunctionSettings):
    """Kafka to produce, and to read the records in flight when a coupon's state is built."""

    redis: RedisSettings
    database: DatabaseSettings
    kafka: KafkaSettings
    issuing: IssuingSettings
    retention: RetentionSettings
    consumer_group: ConsumerGroupSettings
    read_back: ReadBackSettings
    rebuild_function: RebuildFunctionSettings
