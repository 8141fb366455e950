"""Configuration from environment variables, read once and validated in one place.

Settings are composed of parts, each reading its own variables (``RedisSettings`` reads
REDIS_URL, ...); a function's settings (``IntakeSettings``, ...) list the parts it needs, and
``from_env`` reads exactly those. A missing or malformed variable raises :class:`ConfigError`
naming it, at the first use of the settings (the first invocation of a Lambda container), never
midway through a request. docs/design.md lists every variable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Literal, Self, cast, get_type_hints
from urllib.parse import urlsplit

from coupon_core.errors import ConfigError

Environ = Mapping[str, str]
KafkaAuth = Literal["none", "iam"]
UserIdSource = Literal["body", "claims"]

HOUR_MS = 3_600_000
_HOST_PORT = re.compile(r"^[A-Za-z0-9.-]+:\d{1,5}$")


def _required(environ: Environ, name: str) -> str:
    value = environ.get(name, "").strip()
    if not value:
        raise ConfigError(f"{name} is required and not set")
    return value


def _choice(environ: Environ, name: str, choices: tuple[str, ...], default: str) -> str:
    value = environ.get(name, default).strip().lower() or default
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _int(environ: Environ, name: str, default: int, *, low: int, high: int) -> int:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer; got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}; got {value}")
    return value


def _url(environ: Environ, name: str, schemes: tuple[str, ...]) -> str:
    value = _required(environ, name)
    parts = urlsplit(value)
    if parts.scheme not in schemes or not parts.hostname:
        raise ConfigError(f"{name} must be a URL with scheme {' or '.join(schemes)} and a host; got {value!r}")
    return value


@dataclass(frozen=True)
class RedisSettings:
    url: str

    @classmethod
    def from_env(cls, environ: Environ) -> RedisSettings:
        return cls(url=_url(environ, "REDIS_URL", ("redis", "rediss")))


@dataclass(frozen=True)
class DatabaseSettings:
    """Either a URL (local, tests) or a Secrets Manager secret (AWS), exactly one of them.

    ``host`` (DB_HOST) replaces the secret's host, to connect through an RDS Proxy.
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
            return cls(url=_url(environ, "DATABASE_URL", ("postgresql+pg8000",)), secret_arn=None)
        arn = _required(environ, "DB_SECRET_ARN")
        if not arn.startswith("arn:") or ":secretsmanager:" not in arn:
            raise ConfigError(f"DB_SECRET_ARN must be a Secrets Manager secret ARN; got {arn!r}")
        host = environ.get("DB_HOST", "").strip() or None
        if host is not None and not re.fullmatch(r"[A-Za-z0-9.-]{1,253}", host):
            raise ConfigError(f"DB_HOST must be a host name; got {host!r}")
        return cls(url=None, secret_arn=arn, host=host)


@dataclass(frozen=True)
class KafkaSettings:
    bootstrap_servers: tuple[str, ...]
    topic: str
    auth: KafkaAuth
    region: str | None

    @classmethod
    def from_env(cls, environ: Environ) -> KafkaSettings:
        servers = tuple(s.strip() for s in _required(environ, "KAFKA_BOOTSTRAP_SERVERS").split(","))
        bad = [server for server in servers if not _HOST_PORT.match(server)]
        if bad:
            raise ConfigError(f"KAFKA_BOOTSTRAP_SERVERS must be host:port[,host:port...]; bad entries {bad}")
        topic = _required(environ, "KAFKA_TOPIC")
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,249}", topic):
            raise ConfigError(f"KAFKA_TOPIC must be a valid Kafka topic name; got {topic!r}")
        auth = _choice(environ, "KAFKA_AUTH", ("none", "iam"), "none")
        region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
        if auth == "iam" and not region:
            raise ConfigError("KAFKA_AUTH=iam needs AWS_REGION to sign its tokens")
        return cls(bootstrap_servers=servers, topic=topic, auth=cast(KafkaAuth, auth), region=region)


@dataclass(frozen=True)
class ObservabilitySettings:
    """Checked here, read by Powertools itself (Logger, Metrics) from the same variables."""

    service_name: str
    metrics_namespace: str
    log_level: str

    @classmethod
    def from_env(cls, environ: Environ) -> ObservabilitySettings:
        return cls(
            service_name=_required(environ, "POWERTOOLS_SERVICE_NAME"),
            metrics_namespace=_required(environ, "POWERTOOLS_METRICS_NAMESPACE"),
            log_level=_choice(environ, "LOG_LEVEL", ("debug", "info", "warning", "error", "critical"), "info"),
        )


@dataclass(frozen=True)
class RetentionSettings:
    """How long a coupon's Redis keys outlive its window; the intake and the rebuild must agree."""

    state_ms: int

    @classmethod
    def from_env(cls, environ: Environ) -> RetentionSettings:
        return cls(state_ms=_int(environ, "STATE_RETENTION_HOURS", 24 * 7, low=1, high=24 * 366) * HOUR_MS)


def _produce_bounds(environ: Environ) -> tuple[int, int]:
    """KAFKA_PRODUCE_TIMEOUT_MS and RECONCILE_SKEW_MS, which must agree wherever either is read.

    Reconcile takes a reservation older than the skew whose record is in neither Kafka nor the
    database for one that never reached Kafka, and releases it: a produce that could take
    longer than the skew (a send and its resend) could still land after that release.
    """
    produce_timeout_ms = _int(environ, "KAFKA_PRODUCE_TIMEOUT_MS", 3_000, low=100, high=60_000)
    skew_ms = _int(environ, "RECONCILE_SKEW_MS", 15_000, low=1_000, high=3_600_000)
    if 2 * produce_timeout_ms >= skew_ms:  # a send, and its resend when the ack is lost
        raise ConfigError(
            f"twice KAFKA_PRODUCE_TIMEOUT_MS ({produce_timeout_ms}) must be shorter than RECONCILE_SKEW_MS ({skew_ms})"
        )
    return produce_timeout_ms, skew_ms


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
            user_id_source=cast(UserIdSource, _choice(environ, "USER_ID_SOURCE", ("body", "claims"), "body")),
            user_id_claim=_claim_name(environ.get("USER_ID_CLAIM", "custom:user_id").strip() or "custom:user_id"),
            produce_timeout_ms=_produce_bounds(environ)[0],
            wait_replicas=_int(environ, "REDIS_WAIT_REPLICAS", 0, low=0, high=5),
            wait_timeout_ms=_int(environ, "REDIS_WAIT_TIMEOUT_MS", 100, low=1, high=2_000),
        )


@dataclass(frozen=True)
class ConsumerGroupSettings:
    """The worker's consumer group, whose committed offsets tell which records are in flight."""

    group: str

    @classmethod
    def from_env(cls, environ: Environ) -> ConsumerGroupSettings:
        group = _required(environ, "KAFKA_CONSUMER_GROUP")
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,255}", group):
            raise ConfigError(f"KAFKA_CONSUMER_GROUP must be a consumer group name; got {group!r}")
        return cls(group=group)


@dataclass(frozen=True)
class DlqSettings:
    """The SQS DLQ the worker sends its rejection letters to."""

    url: str

    @classmethod
    def from_env(cls, environ: Environ) -> DlqSettings:
        return cls(url=_url(environ, "DLQ_URL", ("https", "http")))


@dataclass(frozen=True)
class WorkerLockSettings:
    """The worker's per-coupon issue lock: its lease, and how long to wait for it."""

    lease_s: int
    wait_s: int

    @classmethod
    def from_env(cls, environ: Environ) -> WorkerLockSettings:
        lease = _int(environ, "WORKER_LOCK_LEASE_S", 30, low=1, high=900)
        return cls(lease_s=lease, wait_s=_int(environ, "WORKER_LOCK_WAIT_S", 5, low=1, high=lease))


@dataclass(frozen=True)
class WriteLimitSettings:
    """The processing limit (docs/design.md, Processing limit): database writes per second across
    every worker (0: none), the burst it allows, and how long one batch may wait for it."""

    per_second: int
    burst: int
    wait_s: int

    @classmethod
    def from_env(cls, environ: Environ) -> WriteLimitSettings:
        per_second = _int(environ, "WORKER_WRITES_PER_SECOND", 0, low=0, high=1_000_000)
        return cls(
            per_second=per_second,
            burst=_int(environ, "WORKER_WRITE_BURST", max(1, per_second), low=1, high=10_000_000),
            wait_s=_int(environ, "WORKER_WRITE_WAIT_S", 60, low=1, high=600),
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
class ReadBackSettings:
    """Bounds on reading an on-failure letter's offset ranges back from Kafka."""

    max_records: int
    timeout_s: int

    @classmethod
    def from_env(cls, environ: Environ) -> ReadBackSettings:
        return cls(
            max_records=_int(environ, "READ_BACK_MAX_RECORDS", 10_000, low=1, high=100_000),
            timeout_s=_int(environ, "READ_BACK_TIMEOUT_S", 20, low=1, high=600),
        )


@dataclass(frozen=True)
class ReconcileSettings:
    """Which coupons the schedule reconciles, and how old a stray reservation must be to be released."""

    skew_ms: int
    lookback_ms: int
    lookahead_ms: int
    produce_bound_ms: int  # a send and its resend: how long a lost state waits before its rebuild

    @classmethod
    def from_env(cls, environ: Environ) -> ReconcileSettings:
        lookback_ms = _int(environ, "RECONCILE_LOOKBACK_HOURS", 24, low=0, high=24 * 366) * HOUR_MS
        if lookback_ms >= RetentionSettings.from_env(environ).state_ms:
            raise ConfigError("RECONCILE_LOOKBACK_HOURS must be shorter than STATE_RETENTION_HOURS")
        produce_timeout_ms, skew_ms = _produce_bounds(environ)
        return cls(
            skew_ms=skew_ms,
            produce_bound_ms=2 * produce_timeout_ms,
            lookback_ms=lookback_ms,
            lookahead_ms=_int(environ, "RECONCILE_LOOKAHEAD_MINUTES", 60, low=0, high=7 * 24 * 60) * 60_000,
        )


@dataclass(frozen=True)
class OutboxRelaySettings:
    """How many events the relay publishes per transaction, and how long it waits for Kafka."""

    batch: int
    publish_timeout_ms: int

    @classmethod
    def from_env(cls, environ: Environ) -> OutboxRelaySettings:
        return cls(
            batch=_int(environ, "OUTBOX_BATCH", 500, low=1, high=10_000),
            publish_timeout_ms=_int(environ, "OUTBOX_PUBLISH_TIMEOUT_MS", 10_000, low=100, high=60_000),
        )


@dataclass(frozen=True)
class FunctionSettings:
    """What every function reads; a subclass adds the parts it needs as fields.

    Every field's type is a part with ``from_env(environ)``; :meth:`from_env` reads them all.
    """

    observability: ObservabilitySettings
    redis: RedisSettings
    database: DatabaseSettings

    @classmethod
    def from_env(cls, environ: Environ | None = None) -> Self:
        """Read every part from ``environ`` (default: the process environment)."""
        env = os.environ if environ is None else environ
        parts = get_type_hints(cls)
        return cls(**{field.name: parts[field.name].from_env(env) for field in fields(cls)})


@dataclass(frozen=True)
class IntakeSettings(FunctionSettings):
    """Kafka to produce, and to read the records in flight when a coupon's state is built."""

    kafka: KafkaSettings
    issuing: IssuingSettings
    retention: RetentionSettings
    consumer_group: ConsumerGroupSettings
    read_back: ReadBackSettings
    rebuild_function: RebuildFunctionSettings


@dataclass(frozen=True)
class WorkerSettings(FunctionSettings):
    dlq: DlqSettings
    lock: WorkerLockSettings
    write_limit: WriteLimitSettings


@dataclass(frozen=True)
class DlqHandlerSettings(FunctionSettings):
    """Kafka only to read records back by offset."""

    kafka: KafkaSettings
    read_back: ReadBackSettings


@dataclass(frozen=True)
class RebuildSettings(FunctionSettings):
    """Kafka to read the records in flight: the topic's tail after the worker group's offsets."""

    retention: RetentionSettings
    reconcile: ReconcileSettings
    kafka: KafkaSettings
    consumer_group: ConsumerGroupSettings
    read_back: ReadBackSettings


@dataclass(frozen=True)
class RelaySettings(FunctionSettings):
    """The outbox relay: the database, and Kafka to publish to (KAFKA_TOPIC: the events topic)."""

    kafka: KafkaSettings
    relay: OutboxRelaySettings
