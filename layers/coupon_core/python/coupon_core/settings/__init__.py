"""Configuration from environment variables, read once and validated in one place: this package.

Settings are composed of parts, each reading its own variables (``RedisSettings`` reads
REDIS_URL, ...); a function's settings (``intake.IntakeSettings``, ...) list the parts it needs,
and ``from_env`` reads exactly those. A missing or malformed variable raises :class:`ConfigError`
naming it, at the first use of the settings (the first invocation of a Lambda container), never
midway through a request. docs/design.md lists every variable.

This module holds the parts several functions share and :class:`FunctionSettings`; each
function's own parts and settings are in its module (``intake``, ``coupons``, ``worker``,
``rebuild``, ``relay``; ``http_api`` has the parts both HTTP functions read), so that a cold
start builds only its own classes; ``variables`` reads and checks
one variable of each kind (a URL, an integer in a range, ...).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, fields
from typing import Literal, Self, cast, get_type_hints
from urllib.parse import parse_qs, urlsplit

from coupon_core.errors import ConfigError
from coupon_core.settings import variables as var
from coupon_core.settings.variables import Environ

KafkaAuth = Literal["none", "iam"]
RedisAuth = Literal["none", "iam"]
CacheKind = Literal["serverless", "replication-group"]

HOUR_MS = 3_600_000
_HOST_PORT = re.compile(r"^[A-Za-z0-9.-]+:\d{1,5}$")
_ELASTICACHE_NAME = re.compile(r"[a-z][a-z0-9-]{0,39}")  # a cache's or a user's id


@dataclass(frozen=True)
class RedisSettings:
    """The cache's URL and how to authenticate: ``none`` (a local server), or ``iam``:
    ElastiCache IAM authentication as ``user`` (an IAM-enabled ElastiCache user, whose name is its
    id) to the cache ``cache_name`` of ``cache_kind``, over TLS, with tokens signed in ``region``."""

    url: str
    auth: RedisAuth = "none"
    user: str | None = None
    cache_name: str | None = None
    cache_kind: CacheKind | None = None
    region: str | None = None

    @classmethod
    def from_env(cls, environ: Environ) -> RedisSettings:
        url = var.url(environ, "REDIS_URL", ("redis", "rediss"))
        if var.choice(environ, "REDIS_AUTH", ("none", "iam"), "none") == "none":
            return cls(url=url)
        if not url.startswith("rediss://"):
            raise ConfigError("REDIS_AUTH=iam needs TLS: REDIS_URL must be rediss://")
        user, name = var.required(environ, "REDIS_USER"), var.required(environ, "REDIS_CACHE_NAME")
        for variable, value in (("REDIS_USER", user), ("REDIS_CACHE_NAME", name)):
            if not _ELASTICACHE_NAME.fullmatch(value):
                raise ConfigError(f"{variable} must be an ElastiCache id (a-z first, then a-z, 0-9, -); got {value!r}")
        kind = var.choice(environ, "REDIS_CACHE_KIND", ("serverless", "replication-group"), "serverless")
        region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
        if not region:
            raise ConfigError("REDIS_AUTH=iam needs AWS_REGION to sign its tokens")
        return cls(url, "iam", user, name, cast(CacheKind, kind), region)


@dataclass(frozen=True)
class DatabaseSettings:
    """Either a URL (tests, tools) or a Secrets Manager secret (AWS, and the functions on
    LocalStack), exactly one of them.

    A URL asks for TLS with libpq's words: ``?sslmode=verify-full`` (the certificate checked
    against the platform's trust store, and the host against it), else plain text. A secret
    always means TLS verified so. ``host`` (DB_HOST) replaces the secret's host, to connect
    through an RDS Proxy.
    """

    url: str | None
    secret_arn: str | None
    host: str | None = None

    @classmethod
    def from_env(cls, environ: Environ) -> DatabaseSettings:
        has_url, has_secret = bool(environ.get("DATABASE_URL")), bool(environ.get("DB_SECRET_ARN"))
        if has_url == has_secret:
            raise ConfigError("exactly one of DATABASE_URL and DB_SECRET_ARN must be set")
        if has_url:
            url = var.url(environ, "DATABASE_URL", ("postgresql+pg8000",))
            modes = parse_qs(urlsplit(url).query).get("sslmode", [])
            if modes not in ([], ["verify-full"]):
                raise ConfigError(
                    f"DATABASE_URL's sslmode must be verify-full (or absent, for plain text); got {modes}"
                )
            return cls(url=url, secret_arn=None)
        arn = var.required(environ, "DB_SECRET_ARN")
        if not arn.startswith("arn:") or ":secretsmanager:" not in arn:
            raise ConfigError(f"DB_SECRET_ARN must be a Secrets Manager secret ARN; got {arn!r}")
        host = environ.get("DB_HOST", "").strip() or None
        if host is not None and not re.fullmatch(r"[A-Za-z0-9.-]{1,253}", host):
            raise ConfigError(f"DB_HOST must be a host name; got {host!r}")
        return cls(url=None, secret_arn=arn, host=host)


@dataclass(frozen=True)
class KafkaSettings:
    """The brokers, the topic, and how to reach them: ``auth`` ``iam`` (MSK IAM over SASL, which
    needs TLS) or ``none``; ``tls`` (KAFKA_TLS, on by default with IAM, off without) verifies the
    brokers' certificates against the platform's trust store."""

    bootstrap_servers: tuple[str, ...]
    topic: str
    auth: KafkaAuth
    region: str | None
    tls: bool = False

    @classmethod
    def from_env(cls, environ: Environ) -> KafkaSettings:
        servers = tuple(s.strip() for s in var.required(environ, "KAFKA_BOOTSTRAP_SERVERS").split(","))
        bad = [server for server in servers if not _HOST_PORT.match(server)]
        if bad:
            raise ConfigError(f"KAFKA_BOOTSTRAP_SERVERS must be host:port[,host:port...]; bad entries {bad}")
        topic = var.required(environ, "KAFKA_TOPIC")
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,249}", topic):
            raise ConfigError(f"KAFKA_TOPIC must be a valid Kafka topic name; got {topic!r}")
        auth = var.choice(environ, "KAFKA_AUTH", ("none", "iam"), "none")
        region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
        if auth == "iam" and not region:
            raise ConfigError("KAFKA_AUTH=iam needs AWS_REGION to sign its tokens")
        tls = var.choice(environ, "KAFKA_TLS", ("on", "off"), "on" if auth == "iam" else "off") == "on"
        if auth == "iam" and not tls:
            raise ConfigError("KAFKA_AUTH=iam needs TLS: KAFKA_TLS=off contradicts it")
        return cls(bootstrap_servers=servers, topic=topic, auth=cast(KafkaAuth, auth), region=region, tls=tls)


@dataclass(frozen=True)
class ObservabilitySettings:
    """Checked here, read by Powertools itself (Logger, Metrics) from the same variables."""

    service_name: str
    metrics_namespace: str
    log_level: str

    @classmethod
    def from_env(cls, environ: Environ) -> ObservabilitySettings:
        return cls(
            service_name=var.required(environ, "POWERTOOLS_SERVICE_NAME"),
            metrics_namespace=var.required(environ, "POWERTOOLS_METRICS_NAMESPACE"),
            log_level=var.choice(environ, "LOG_LEVEL", ("debug", "info", "warning", "error", "critical"), "info"),
        )


@dataclass(frozen=True)
class RetentionSettings:
    """How long a coupon's Redis keys outlive its window; every function that writes them must agree."""

    state_ms: int

    @classmethod
    def from_env(cls, environ: Environ) -> RetentionSettings:
        return cls(state_ms=var.integer(environ, "STATE_RETENTION_HOURS", 24 * 7, low=1, high=24 * 366) * HOUR_MS)


@dataclass(frozen=True)
class ConsumerGroupSettings:
    """The worker's consumer group, whose committed offsets tell which records are in flight."""

    group: str

    @classmethod
    def from_env(cls, environ: Environ) -> ConsumerGroupSettings:
        group = var.required(environ, "KAFKA_CONSUMER_GROUP")
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,255}", group):
            raise ConfigError(f"KAFKA_CONSUMER_GROUP must be a consumer group name; got {group!r}")
        return cls(group=group)


@dataclass(frozen=True)
class ReadBackSettings:
    """Bounds on reading an on-failure letter's offset ranges back from Kafka."""

    max_records: int
    timeout_s: int

    @classmethod
    def from_env(cls, environ: Environ) -> ReadBackSettings:
        return cls(
            max_records=var.integer(environ, "READ_BACK_MAX_RECORDS", 10_000, low=1, high=100_000),
            timeout_s=var.integer(environ, "READ_BACK_TIMEOUT_S", 20, low=1, high=600),
        )


def produce_bounds(environ: Environ) -> tuple[int, int]:
    """KAFKA_PRODUCE_TIMEOUT_MS and RECONCILE_SKEW_MS, which must agree wherever either is read.

    Reconcile takes a reservation older than the skew whose record is in neither Kafka nor the
    database for one that never reached Kafka, and releases it: a produce that could take
    longer than the skew (a send and its resend) could still land after that release.
    """
    produce_timeout_ms = var.integer(environ, "KAFKA_PRODUCE_TIMEOUT_MS", 3_000, low=100, high=60_000)
    skew_ms = var.integer(environ, "RECONCILE_SKEW_MS", 15_000, low=1_000, high=3_600_000)
    if 2 * produce_timeout_ms >= skew_ms:  # a send, and its resend when the ack is lost
        raise ConfigError(
            f"twice KAFKA_PRODUCE_TIMEOUT_MS ({produce_timeout_ms}) must be shorter than RECONCILE_SKEW_MS ({skew_ms})"
        )
    return produce_timeout_ms, skew_ms


@dataclass(frozen=True)
class FunctionSettings:
    """What every function reads; a subclass adds the parts it needs as fields (Redis, the
    database, Kafka, ...), so that a function is given, and reads, only what it uses.

    Every field's type is a part with ``from_env(environ)``; :meth:`from_env` reads them all.
    """

    observability: ObservabilitySettings

    @classmethod
    def from_env(cls, environ: Environ | None = None) -> Self:
        """Read every part from ``environ`` (default: the process environment)."""
        env = os.environ if environ is None else environ
        parts = get_type_hints(cls)
        return cls(**{field.name: parts[field.name].from_env(env) for field in fields(cls)})
