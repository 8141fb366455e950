"""Configuration from environment variables, read once and validated in one place: this package.

Settings are pydantic models composed of parts, each a model of the variables it reads (its
fields are named by their variables: ``RedisSettings.url`` is REDIS_URL). A function's settings
(``intake.IntakeSettings``, ...) list the parts it needs, and :meth:`FunctionSettings.from_env`
reads exactly those from the environment, as the cookbook's environment modeler does
(``model_validate`` of the environment) and not through pydantic-settings, whose import would
add about 90 ms to the intake's cold start. A missing or
malformed variable raises ``ConfigError`` naming it, on one line, at the first use of the
settings. docs/design.md lists every variable.

A field's constraints are pydantic's own (``ge``/``le``, ``pattern``, a ``Literal`` of its
choices). This module holds what pydantic has no word for (a choice read in any case, a URL's
scheme and host), the one mapping of a validation error to ``ConfigError`` (:func:`config_error`),
:class:`FunctionSettings` and the parts the intake shares with others (Redis, Kafka, the
produce's bounds); ``http`` the parts both HTTP functions read (the caller, CORS); ``backend``
the parts only the functions behind it read (the database, the retention, the worker group, the
read-back); each function's own parts and settings are in its module (``intake``, ``coupons``,
``worker``, ``rebuild``, ``relay``), so that a cold start imports and builds only what it reads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from coupon_core.errors import ConfigError

# A field is named by its variable (``Field(validation_alias="REDIS_URL")``) and constrained by
# pydantic's means; :func:`config_error` says what a broken constraint, or a validator's problem
# (said without the variable's name: "must be a URL ..."), means, with the variable's name first,
# from the error's location. A check that spans variables (a model validator) names them itself.

Environ = Mapping[str, str]

# What a broken constraint means, from the error's type, with its ``ctx`` and ``input``.
_SAYS = {
    "missing": "is required and not set",
    "int_parsing": "must be an integer; got {input!r}",
    "greater_than_equal": "must be at least {ge}; got {input}",
    "less_than_equal": "must be at most {le}; got {input}",
    "literal_error": "must be one of {expected}; got {input!r}",
    "string_pattern_mismatch": "must match {pattern}; got {input!r}",
}


def present(environ: Environ) -> dict[str, str]:
    """The variables that are set: stripped, an empty one as if unset (its default applies)."""
    return {name: value.strip() for name, value in environ.items() if value.strip()}


def config_error(error: ValidationError) -> ConfigError:
    """The first problem of ``error`` on one line, naming its variable: a field's location ends
    with its variable (``REDIS_URL``); a part's own check, located at the part, names them itself."""
    problem = error.errors(include_url=False)[0]
    where = str(problem["loc"][-1]) if problem["loc"] else ""
    variable = where if where.isupper() else ""
    said = _SAYS.get(problem["type"], "{msg}").format(**problem, **problem.get("ctx", {}))
    said = said.removeprefix("Value error, ")  # a validator's ValueError, said as it is
    return ConfigError(f"{variable} {said}" if variable else said)


# A choice is read in any case: ``KAFKA_AUTH=IAM`` is ``iam``.
Lower = BeforeValidator(lambda value: str(value).lower())


def url_of(*schemes: str) -> Callable[[str], str]:
    """The check that a URL has one of ``schemes`` and a host (the value itself is kept: a ``str``)."""

    def check(value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in schemes or not parts.hostname:
            raise ValueError(f"must be a URL with scheme {' or '.join(schemes)} and a host; got {value!r}")
        return value

    return check


FUNCTION_NAME = r"^[A-Za-z0-9_:.-]{1,140}$"  # a Lambda function's name or ARN


KafkaAuth = Literal["none", "iam"]
RedisAuth = Literal["none", "iam"]
CacheKind = Literal["serverless", "replication-group"]
LogLevel = Literal["debug", "info", "warning", "error", "critical"]

_ELASTICACHE_NAME = re.compile(r"[a-z][a-z0-9-]{0,39}")  # a cache's or a user's id
REGION = AliasChoices("AWS_REGION", "AWS_DEFAULT_REGION")  # as the SDKs read it


class Settings(BaseModel):
    """Settings read from the environment, frozen: a function's, or a part of them (the variables
    it reads, each field named by its variable). Built when first read (``defer_build``), so that
    importing the settings costs a cold start next to nothing."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    @classmethod
    def from_env(cls, environ: Environ | None = None) -> Self:
        """Read from ``environ`` (default: the process environment); a problem is a
        ``ConfigError`` naming its variable."""
        try:
            return cls.model_validate(present(os.environ if environ is None else environ))
        except ValidationError as exc:
            raise config_error(exc) from None


class RedisSettings(Settings):
    """The cache's URL and how to authenticate: ``none`` (a local server), or ``iam``:
    ElastiCache IAM authentication as ``user`` (an IAM-enabled ElastiCache user, whose name is its
    id) to the cache ``cache_name`` of ``cache_kind``, over TLS, with tokens signed in ``region``."""

    url: Annotated[str, Field(validation_alias="REDIS_URL"), AfterValidator(url_of("redis", "rediss"))]
    auth: Annotated[RedisAuth, Field(validation_alias="REDIS_AUTH"), Lower] = "none"
    user: Annotated[str | None, Field(validation_alias="REDIS_USER")] = None
    cache_name: Annotated[str | None, Field(validation_alias="REDIS_CACHE_NAME")] = None
    cache_kind: Annotated[CacheKind | None, Field(validation_alias="REDIS_CACHE_KIND"), Lower] = None
    region: Annotated[str | None, Field(validation_alias=REGION)] = None

    @model_validator(mode="before")
    @classmethod
    def _iam_only(cls, environ: dict[str, Any]) -> dict[str, Any]:
        """Without IAM, the IAM variables are not this part's: left unread, as a local server has none."""
        if str(environ.get("REDIS_AUTH", "none")).lower() != "iam":
            return {key: value for key, value in environ.items() if key in ("REDIS_URL", "REDIS_AUTH")}
        return {"REDIS_CACHE_KIND": "serverless", **environ}

    @model_validator(mode="after")
    def _iam_needs(self) -> Self:
        if self.auth == "none":
            return self
        if not self.url.startswith("rediss://"):
            raise ValueError("REDIS_AUTH=iam needs TLS: REDIS_URL must be rediss://")
        for variable, value in (("REDIS_USER", self.user), ("REDIS_CACHE_NAME", self.cache_name)):
            if value is None:
                raise ValueError(f"{variable} is required and not set")
            if not _ELASTICACHE_NAME.fullmatch(value):
                raise ValueError(f"{variable} must be an ElastiCache id (a-z first, then a-z, 0-9, -); got {value!r}")
        if not self.region:
            raise ValueError("REDIS_AUTH=iam needs AWS_REGION to sign its tokens")
        return self


def _servers(value: object) -> tuple[str, ...]:
    servers = tuple(server.strip() for server in str(value).split(","))
    bad = [server for server in servers if not re.fullmatch(r"[A-Za-z0-9.-]+:\d{1,5}", server)]
    if bad:
        raise ValueError(f"must be host:port[,host:port...]; bad entries {bad}")
    return servers


class KafkaSettings(Settings):
    """The brokers, the topic, and how to reach them: ``auth`` ``iam`` (MSK IAM over SASL, which
    needs TLS) or ``none``; ``tls`` (KAFKA_TLS, on by default with IAM, off without) verifies the
    brokers' certificates against the platform's trust store."""

    bootstrap_servers: Annotated[
        tuple[str, ...], Field(validation_alias="KAFKA_BOOTSTRAP_SERVERS"), BeforeValidator(_servers)
    ]
    topic: Annotated[str, Field(validation_alias="KAFKA_TOPIC", pattern=r"^[A-Za-z0-9._-]{1,249}$")]
    auth: Annotated[KafkaAuth, Field(validation_alias="KAFKA_AUTH"), Lower] = "none"
    region: Annotated[str | None, Field(validation_alias=REGION)] = None
    tls_asked: Annotated[Literal["on", "off"] | None, Field(validation_alias="KAFKA_TLS"), Lower] = None

    @property
    def tls(self) -> bool:
        return (self.tls_asked or ("on" if self.auth == "iam" else "off")) == "on"

    @model_validator(mode="after")
    def _iam_needs(self) -> Self:
        if self.auth == "iam" and not self.region:
            raise ValueError("KAFKA_AUTH=iam needs AWS_REGION to sign its tokens")
        if self.auth == "iam" and not self.tls:
            raise ValueError("KAFKA_AUTH=iam needs TLS: KAFKA_TLS=off contradicts it")
        return self


class ObservabilitySettings(Settings):
    """Checked here, read by Powertools itself (Logger, Metrics) from the same variables."""

    service_name: Annotated[str, Field(validation_alias="POWERTOOLS_SERVICE_NAME")]
    metrics_namespace: Annotated[str, Field(validation_alias="POWERTOOLS_METRICS_NAMESPACE")]
    log_level: Annotated[LogLevel, Field(validation_alias="LOG_LEVEL"), Lower] = "info"


class ProduceBounds(Settings):
    """KAFKA_PRODUCE_TIMEOUT_MS and RECONCILE_SKEW_MS, which must agree wherever either is read.

    Reconcile takes a reservation older than the skew whose record is in neither Kafka nor the
    database for one that never reached Kafka, and releases it: a produce that could take
    longer than the skew (a send and its resend) could still land after that release.
    """

    produce_timeout_ms: Annotated[int, Field(validation_alias="KAFKA_PRODUCE_TIMEOUT_MS", ge=100, le=60_000)] = 3_000
    skew_ms: Annotated[int, Field(validation_alias="RECONCILE_SKEW_MS", ge=1_000, le=3_600_000)] = 15_000

    @model_validator(mode="after")
    def _a_send_and_its_resend_fit_the_skew(self) -> Self:
        if 2 * self.produce_timeout_ms >= self.skew_ms:
            raise ValueError(
                f"twice KAFKA_PRODUCE_TIMEOUT_MS ({self.produce_timeout_ms}) must be shorter than "
                f"RECONCILE_SKEW_MS ({self.skew_ms})"
            )
        return self


class FunctionSettings(Settings):
    """What every function reads; a subclass adds the parts it needs as fields (Redis, the
    database, Kafka, ...), so that a function is given, and reads, only what it uses. Each part
    reads the same environment."""

    observability: ObservabilitySettings

    @model_validator(mode="before")
    @classmethod
    def _each_part_reads_the_environment(cls, environ: dict[str, str]) -> dict[str, Any]:
        return dict.fromkeys(cls.model_fields, environ)
