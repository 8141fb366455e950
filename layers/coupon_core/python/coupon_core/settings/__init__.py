"""Configuration from environment variables, read once and validated in one place: this package.

Settings are pydantic models composed of parts, each a model of the variables it reads (its
fields are named by their variables: ``RedisSettings.url`` is REDIS_URL). A function's settings
(``intake.IntakeSettings``, ...) list the parts it needs, and :meth:`FunctionSettings.from_env`
reads exactly those from the environment, as the cookbook's environment modeler does
(``model_validate`` of the environment) and not through pydantic-settings, whose import would
add about a tenth of a second to the intake's cold start (docs/benchmarks.md). A missing or
malformed variable raises ``ConfigError`` naming it, on one line, at the first use of the
settings. docs/design.md lists every variable.

This module holds the parts several functions share and :class:`FunctionSettings`; each
function's own parts and settings are in its module (``intake``, ``coupons``, ``worker``,
``rebuild``, ``relay``; ``http_api`` has the parts both HTTP functions read), so that a cold
start builds only its own models; ``variables`` holds the validators of each kind of variable
and the one mapping of a validation error to ``ConfigError``.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any, Literal, Self
from urllib.parse import parse_qs, urlsplit

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

from coupon_core.settings import variables as var
from coupon_core.settings.variables import Environ

KafkaAuth = Literal["none", "iam"]
RedisAuth = Literal["none", "iam"]
CacheKind = Literal["serverless", "replication-group"]

HOUR_MS = 3_600_000
_ELASTICACHE_NAME = re.compile(r"[a-z][a-z0-9-]{0,39}")  # a cache's or a user's id
REGION = AliasChoices("AWS_REGION", "AWS_DEFAULT_REGION")  # as the SDKs read it


class Settings(BaseModel):
    """Settings read from the environment, frozen. Built when first read (``defer_build``), so
    that importing the settings costs a cold start next to nothing."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    @classmethod
    def from_env(cls, environ: Environ | None = None) -> Self:
        """Read from ``environ`` (default: the process environment); a problem is a
        ``ConfigError`` naming its variable."""
        try:
            return cls.model_validate(var.present(os.environ if environ is None else environ))
        except ValidationError as exc:
            raise var.config_error(exc) from None


class Part(Settings):
    """A part of a function's settings: the variables it reads, each field named by its variable."""


class RedisSettings(Part):
    """The cache's URL and how to authenticate: ``none`` (a local server), or ``iam``:
    ElastiCache IAM authentication as ``user`` (an IAM-enabled ElastiCache user, whose name is its
    id) to the cache ``cache_name`` of ``cache_kind``, over TLS, with tokens signed in ``region``."""

    url: Annotated[str, Field(validation_alias="REDIS_URL"), AfterValidator(var.url_of("redis", "rediss"))]
    auth: Annotated[RedisAuth, Field(validation_alias="REDIS_AUTH"), var.one_of("none", "iam")] = "none"
    user: Annotated[str | None, Field(validation_alias="REDIS_USER")] = None
    cache_name: Annotated[str | None, Field(validation_alias="REDIS_CACHE_NAME")] = None
    cache_kind: Annotated[
        CacheKind | None, Field(validation_alias="REDIS_CACHE_KIND"), var.one_of("serverless", "replication-group")
    ] = None
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


class DatabaseSettings(Part):
    """Either a URL (tests, tools) or a Secrets Manager secret (AWS, and the functions on
    LocalStack), exactly one of them.

    A URL asks for TLS with libpq's words: ``?sslmode=verify-full`` (the certificate checked
    against the platform's trust store, and the host against it), else plain text. A secret
    always means TLS verified so. ``host`` (DB_HOST) replaces the secret's host, to connect
    through an RDS Proxy.
    """

    url: Annotated[str | None, Field(validation_alias="DATABASE_URL")] = None
    secret_arn: Annotated[str | None, Field(validation_alias="DB_SECRET_ARN")] = None
    host: Annotated[str | None, Field(validation_alias="DB_HOST")] = None

    @model_validator(mode="after")
    def _one_of_them(self) -> Self:
        if (self.url is None) == (self.secret_arn is None):
            raise ValueError("exactly one of DATABASE_URL and DB_SECRET_ARN must be set")
        if self.url is not None:
            try:
                var.url_of("postgresql+pg8000")(self.url)
            except ValueError as exc:
                raise ValueError(f"DATABASE_URL {exc}") from None
            modes = parse_qs(urlsplit(self.url).query).get("sslmode", [])
            if modes not in ([], ["verify-full"]):
                raise ValueError(f"DATABASE_URL's sslmode must be verify-full (or absent, for plain text); got {modes}")
            return self
        assert self.secret_arn is not None
        if not self.secret_arn.startswith("arn:") or ":secretsmanager:" not in self.secret_arn:
            raise ValueError(f"DB_SECRET_ARN must be a Secrets Manager secret ARN; got {self.secret_arn!r}")
        if self.host is not None and not re.fullmatch(r"[A-Za-z0-9.-]{1,253}", self.host):
            raise ValueError(f"DB_HOST must be a host name; got {self.host!r}")
        return self


def _servers(value: object) -> tuple[str, ...]:
    servers = tuple(server.strip() for server in str(value).split(","))
    bad = [server for server in servers if not re.fullmatch(r"[A-Za-z0-9.-]+:\d{1,5}", server)]
    if bad:
        raise ValueError(f"must be host:port[,host:port...]; bad entries {bad}")
    return servers


class KafkaSettings(Part):
    """The brokers, the topic, and how to reach them: ``auth`` ``iam`` (MSK IAM over SASL, which
    needs TLS) or ``none``; ``tls`` (KAFKA_TLS, on by default with IAM, off without) verifies the
    brokers' certificates against the platform's trust store."""

    bootstrap_servers: Annotated[
        tuple[str, ...], Field(validation_alias="KAFKA_BOOTSTRAP_SERVERS"), BeforeValidator(_servers)
    ]
    topic: Annotated[
        str,
        Field(validation_alias="KAFKA_TOPIC"),
        AfterValidator(var.matching(r"[A-Za-z0-9._-]{1,249}", "a valid Kafka topic name")),
    ]
    auth: Annotated[KafkaAuth, Field(validation_alias="KAFKA_AUTH"), var.one_of("none", "iam")] = "none"
    region: Annotated[str | None, Field(validation_alias=REGION)] = None
    tls_asked: Annotated[Literal["on", "off"] | None, Field(validation_alias="KAFKA_TLS"), var.one_of("on", "off")] = (
        None
    )

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


class ObservabilitySettings(Part):
    """Checked here, read by Powertools itself (Logger, Metrics) from the same variables."""

    service_name: Annotated[str, Field(validation_alias="POWERTOOLS_SERVICE_NAME")]
    metrics_namespace: Annotated[str, Field(validation_alias="POWERTOOLS_METRICS_NAMESPACE")]
    log_level: Annotated[
        str, Field(validation_alias="LOG_LEVEL"), var.one_of("debug", "info", "warning", "error", "critical")
    ] = "info"


class RetentionSettings(Part):
    """How long a coupon's Redis keys outlive its window; every function that writes them must agree."""

    state_hours: Annotated[
        int, Field(validation_alias="STATE_RETENTION_HOURS"), AfterValidator(var.between(1, 24 * 366))
    ] = 24 * 7

    @property
    def state_ms(self) -> int:
        return self.state_hours * HOUR_MS


class ConsumerGroupSettings(Part):
    """The worker's consumer group, whose committed offsets tell which records are in flight."""

    group: Annotated[
        str,
        Field(validation_alias="KAFKA_CONSUMER_GROUP"),
        AfterValidator(var.matching(r"[A-Za-z0-9._-]{1,255}", "a consumer group name")),
    ]


class ReadBackSettings(Part):
    """Bounds on reading an on-failure letter's offset ranges back from Kafka."""

    max_records: Annotated[
        int, Field(validation_alias="READ_BACK_MAX_RECORDS"), AfterValidator(var.between(1, 100_000))
    ] = 10_000
    timeout_s: Annotated[int, Field(validation_alias="READ_BACK_TIMEOUT_S"), AfterValidator(var.between(1, 600))] = 20


class ProduceBounds(Part):
    """KAFKA_PRODUCE_TIMEOUT_MS and RECONCILE_SKEW_MS, which must agree wherever either is read.

    Reconcile takes a reservation older than the skew whose record is in neither Kafka nor the
    database for one that never reached Kafka, and releases it: a produce that could take
    longer than the skew (a send and its resend) could still land after that release.
    """

    produce_timeout_ms: Annotated[
        int, Field(validation_alias="KAFKA_PRODUCE_TIMEOUT_MS"), AfterValidator(var.between(100, 60_000))
    ] = 3_000
    skew_ms: Annotated[
        int, Field(validation_alias="RECONCILE_SKEW_MS"), AfterValidator(var.between(1_000, 3_600_000))
    ] = 15_000

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
