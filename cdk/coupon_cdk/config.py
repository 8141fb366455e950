"""Per-environment settings from ``cdk.json`` context, chosen with ``-c env=NAME``.

Read and validated in one place: an unknown environment name fails with the list of known
ones, and a missing or mistyped field names itself.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any, Literal, get_type_hints

CONTEXT_KEY = "coupon:environments"


class ConfigError(ValueError):
    """The environment's context is missing, unknown or malformed."""


@dataclass(frozen=True)
class ApiConfig:
    rate_limit: int
    burst_limit: int
    user_id_source: Literal["body", "claims"]


@dataclass(frozen=True)
class CacheConfig:
    kind: Literal["serverless", "replication-group"]
    node_type: str


@dataclass(frozen=True)
class KafkaConfig:
    kind: Literal["serverless", "provisioned"]
    broker_instance_type: str
    partitions: int
    batch_size: int
    batching_window_s: int
    max_retry_attempts: int
    min_pollers: int
    max_pollers: int


@dataclass(frozen=True)
class DatabaseConfig:
    instance_type: str
    multi_az: bool
    backup_days: int
    deletion_protection: bool


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
    cache: CacheConfig | None = None
    kafka: KafkaConfig | None = None
    database: DatabaseConfig | None = None
    local: LocalConfig | None = None

    @property
    def is_local(self) -> bool:
        return self.local is not None


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
    args = getattr(hint, "__args__", ())
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{where} must be one of {list(args)}, got {value!r}")
        return value
    if type(None) in args:  # X | None
        inner = next(arg for arg in args if arg is not type(None))
        return _build(inner, value, where)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{where} must be a non-negative integer, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where} must be a non-empty string, got {value!r}")
        return value
    return _build(hint, value, where)


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
    return config
