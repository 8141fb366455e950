"""Per-environment settings from ``cdk.json`` context, chosen with ``-c env=NAME``.

Read and validated in one place: an unknown environment name fails with the list of known
ones, and a missing or mistyped field names itself.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, fields
from typing import Any, Literal, get_type_hints

CONTEXT_KEY = "coupon:environments"


class ConfigError(ValueError):
    """The environment's context is missing, unknown or malformed."""


@dataclass(frozen=True)
class ApiConfig:
    """The stage's throttling, who may call the public routes, and where the user id comes from.

    ``public_auth``: ``none`` (local only), ``iam`` (SigV4-signed callers of the account, the
    user id from the body: a test environment nobody anonymous can fill) or ``cognito`` (end
    users with a token; the user id is the token's ``user_id_claim``). ``waf_requests_per_5_min``
    is the per-IP rate of the WAF web ACL in front of the stage, 0 for no web ACL.
    """

    rate_limit: int
    burst_limit: int
    user_id_source: Literal["body", "claims"]
    public_auth: Literal["none", "iam", "cognito"]
    user_id_claim: str = "custom:user_id"
    waf_requests_per_5_min: int = 0


@dataclass(frozen=True)
class CacheConfig:
    kind: Literal["serverless", "replication-group"]
    node_type: str


@dataclass(frozen=True)
class KafkaConfig:
    """``brokers_per_az`` counts provisioned brokers (MSK places the same number in every AZ);
    the topic gets ``replication_factor`` replicas and refuses writes below ``min_insync_replicas``."""

    kind: Literal["serverless", "provisioned"]
    broker_instance_type: str
    partitions: int
    replication_factor: int
    min_insync_replicas: int
    batch_size: int
    batching_window_s: int
    max_retry_attempts: int
    min_pollers: int
    max_pollers: int
    brokers_per_az: int = 1


@dataclass(frozen=True)
class DatabaseConfig:
    instance_type: str
    multi_az: bool
    backup_days: int
    deletion_protection: bool


@dataclass(frozen=True)
class WarmupConfig:
    """Provisioned concurrency for the intake from ``starts`` to ``ends`` (Application Auto
    Scaling schedule expressions, ``at(2026-12-01T11:45:00)`` or ``cron(45 11 * * ? *)``, UTC):
    a sale's first users meet warm containers."""

    starts: str
    ends: str
    provisioned: int


@dataclass(frozen=True)
class ConcurrencyConfig:
    """Reserved concurrency of the intake (bounded by what MSK accepts, see docs/deploy.md) and
    the DLQ handler, how many DLQ batches its SQS mapping runs at once (2 or more), and an
    optional warm-up before a sale."""

    intake: int
    dlq_handler: int
    dlq_mapping: int
    warmup: WarmupConfig | None = None


@dataclass(frozen=True)
class ProcessingLimitConfig:
    """Database writes per second across every worker (the worker's WORKER_WRITES_PER_SECOND),
    and the burst the bucket allows at once."""

    writes_per_second: int
    burst: int


@dataclass(frozen=True)
class LocalConfig:
    """Where the functions of the ``local`` environment find the embedded services."""

    redis_url: str
    database_url: str
    kafka_bootstrap_servers: str


@dataclass(frozen=True)
class EnvironmentConfig:
    name: str
    reconcile_every_minutes: int
    log_retention_days: int
    intake_memory_mb: int
    worker_memory_mb: int
    api: ApiConfig
    availability_zones: int = 2
    removal_policy: Literal["destroy", "retain"] = "destroy"
    alarm_emails: tuple[str, ...] = ()
    concurrency: ConcurrencyConfig | None = None
    processing_limit: ProcessingLimitConfig | None = None
    cache: CacheConfig | None = None
    kafka: KafkaConfig | None = None
    database: DatabaseConfig | None = None
    local: LocalConfig | None = None

    @property
    def is_local(self) -> bool:
        return self.local is not None

    @property
    def brokers(self) -> int:
        """Provisioned MSK brokers: the same number in every AZ."""
        return self.availability_zones * (self.kafka.brokers_per_az if self.kafka else 0)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _build(kind: type, raw: Any, where: str) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object")
    hints = get_type_hints(kind)
    known = {_camel(f.name) for f in fields(kind)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{where} has unknown fields {unknown}; known: {sorted(known)}")
    values: dict[str, Any] = {}
    for field in fields(kind):
        key = _camel(field.name)
        if key in raw:
            values[field.name] = _typed(hints[field.name], raw[key], f"{where}.{key}")
        elif field.default is MISSING:
            raise ConfigError(f"{where}.{key} is required")
    return kind(**values)


def _typed(hint: Any, value: Any, where: str) -> Any:
    origin = getattr(hint, "__origin__", None)
    args: tuple[Any, ...] = getattr(hint, "__args__", ())
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{where} must be one of {list(args)}, got {value!r}")
        return value
    if type(None) in args:  # X | None
        inner = next(arg for arg in args if arg is not type(None))
        return _build(inner, value, where)
    if origin is tuple:  # tuple[str, ...]
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list, got {value!r}")
        return tuple(_typed(args[0], item, f"{where}[{index}]") for index, item in enumerate(value))
    if hint in (bool, int, str):
        return _scalar(hint, value, where)
    return _build(hint, value, where)


def _scalar(hint: type, value: Any, where: str) -> Any:
    if hint is bool and not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, got {value!r}")
    if hint is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ConfigError(f"{where} must be a non-negative integer, got {value!r}")
    if hint is str and (not isinstance(value, str) or not value):
        raise ConfigError(f"{where} must be a non-empty string, got {value!r}")
    return value


def load(
    context: dict[str, Any] | None, name: str | None, overrides: dict[str, Any] | None = None
) -> EnvironmentConfig:
    """The configuration of environment ``name`` from the ``coupon:environments`` context.

    ``overrides`` replace fields of the ``local`` block (``make up`` passes the URLs of the
    services it started, as ``-c local:redisUrl=...`` and so on).
    """
    if not isinstance(context, dict) or not context:
        raise ConfigError(f"cdk.json context has no {CONTEXT_KEY!r} object")
    if not name:
        raise ConfigError(f"choose an environment with -c env=NAME; known: {', '.join(sorted(context))}")
    if name not in context:
        raise ConfigError(f"unknown environment {name!r}; known: {', '.join(sorted(context))}")
    raw = {**context[name], "name": name}
    if overrides and "local" in raw:
        raw["local"] = {**raw["local"], **overrides}
    config: EnvironmentConfig = _build(EnvironmentConfig, raw, name)
    aws_parts = (config.cache, config.kafka, config.database)
    if config.is_local != all(part is None for part in aws_parts) or (not config.is_local and None in aws_parts):
        raise ConfigError(f"{name} needs either 'local' or all of 'cache', 'kafka' and 'database'")
    _check(config)
    return config


MSK_SERVERLESS_REPLICATION = 3  # fixed by MSK Serverless
# The Amazon MSK quota page: TCP connections with IAM access control, per Standard broker and per
# serverless cluster. An intake container holds a producer connection to each broker it writes
# to and, while it builds a coupon's state, a consumer's: two per broker at most.
MSK_IAM_CONNECTIONS = 3000
CONNECTIONS_PER_INTAKE = 2


def _check(config: EnvironmentConfig) -> None:
    """Rules across fields, each the constraint of a service (docs/deploy.md names the pages)."""
    name, api = config.name, config.api
    if (api.user_id_source == "claims") != (api.public_auth == "cognito"):
        raise ConfigError(f"{name}.api: userIdSource 'claims' goes with publicAuth 'cognito', and only with it")
    if api.public_auth == "none" and not config.is_local:
        raise ConfigError(f"{name}.api.publicAuth: 'none' is for the local environment only; use 'iam' or 'cognito'")
    if config.is_local:
        return
    if not 2 <= config.availability_zones <= 3:
        raise ConfigError(f"{name}.availabilityZones must be 2 or 3, got {config.availability_zones}")
    if config.concurrency is None:
        raise ConfigError(f"{name}.concurrency is required")
    _check_concurrency(name, config.concurrency)
    assert config.kafka is not None
    _check_kafka(config, config.kafka)


def _check_concurrency(name: str, concurrency: ConcurrencyConfig) -> None:
    if concurrency.intake * CONNECTIONS_PER_INTAKE > MSK_IAM_CONNECTIONS:
        raise ConfigError(
            f"{name}.concurrency.intake {concurrency.intake} could open "
            f"{concurrency.intake * CONNECTIONS_PER_INTAKE} IAM connections to a broker; MSK accepts "
            f"{MSK_IAM_CONNECTIONS} (docs/deploy.md, Sizing)"
        )
    if concurrency.dlq_mapping < 2:  # the SQS mapping's MaximumConcurrency is 2 to 1000
        raise ConfigError(f"{name}.concurrency.dlqMapping must be at least 2, got {concurrency.dlq_mapping}")
    warmup = concurrency.warmup
    if warmup is None:
        return
    if not 1 <= warmup.provisioned <= concurrency.intake:
        raise ConfigError(
            f"{name}.concurrency.warmup.provisioned must be 1 to the intake's {concurrency.intake}, "
            f"got {warmup.provisioned}"
        )
    for field, expression in (("starts", warmup.starts), ("ends", warmup.ends)):
        if not re.fullmatch(r"(at|cron|rate)\(.+\)", expression):
            raise ConfigError(f"{name}.concurrency.warmup.{field} must be at(...), cron(...) or rate(...)")


def _check_kafka(config: EnvironmentConfig, kafka: KafkaConfig) -> None:
    name = config.name
    if kafka.kind == "serverless":
        if kafka.replication_factor != MSK_SERVERLESS_REPLICATION:
            raise ConfigError(f"{name}.kafka.replicationFactor is {MSK_SERVERLESS_REPLICATION} on MSK Serverless")
    elif kafka.replication_factor > config.brokers:
        raise ConfigError(
            f"{name}.kafka.replicationFactor {kafka.replication_factor} exceeds the {config.brokers} brokers "
            f"({config.availability_zones} AZs x brokersPerAz {kafka.brokers_per_az})"
        )
    if not 1 <= kafka.min_insync_replicas < kafka.replication_factor:
        raise ConfigError(
            f"{name}.kafka.minInsyncReplicas must be at least 1 and below replicationFactor "
            f"{kafka.replication_factor} (one replica may be down), got {kafka.min_insync_replicas}"
        )
