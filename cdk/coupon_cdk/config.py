"""Per-environment settings from ``cdk.json`` context, chosen with ``-c env=NAME``.

Read and validated in one place, by pydantic models (camelCase in ``cdk.json``, snake_case in
the code): an unknown environment name fails with the list of known ones, and a missing,
unknown or mistyped field names itself (``prod.api.rateLimit must be a non-negative integer``).
Rules across fields, each a constraint of an AWS service, are checked after (:func:`_check`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from coupon_core.settings.http import ORIGIN

CONTEXT_KEY = "coupon:environments"
MAX_REPLICAS = 5  # ElastiCache: a replication group without cluster mode has up to 5 replicas
CDK_JSON = Path(__file__).resolve().parents[2] / "cdk.json"

Count = Annotated[int, Strict(), Field(ge=0)]
Text = Annotated[str, Strict(), Field(min_length=1)]
Flag = Annotated[bool, Strict()]
# A web origin (scheme, host, port; no path) by the rule the functions' CORS_ORIGINS reads it with, or * (any page).
Origin = Annotated[str, Strict(), Field(pattern=rf"^(\*|{ORIGIN.pattern})$")]


def cdk_json_context() -> dict[str, Any]:
    """cdk.json's context as ``cdk synth`` reads it, for what reads it without the CLI (``make
    plan``, ``make bill``, the offline synth of the tests)."""
    context: dict[str, Any] = json.loads(CDK_JSON.read_text())["context"]
    return context


class CdkContextError(ValueError):
    """The environment's context is missing, unknown or malformed."""


class _Section(BaseModel):
    """A block of ``cdk.json``: camelCase keys, nothing unknown, values as they are typed (no
    coercion of ``"10"`` to 10), frozen once read."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class ApiConfig(_Section):
    """The stage's throttling, who may call the public routes, and where the user id comes from.

    ``public_auth``: ``none`` (local only), ``iam`` (SigV4-signed callers of the account, the
    user id from the body: a test environment nobody anonymous can fill) or ``cognito`` (end
    users with a token; the user id is the token's ``user_id_claim``). ``waf_requests_per_5_min``
    is the per-IP rate of the WAF web ACL in front of the stage, 0 for no web ACL;
    ``waf_requests_per_5_min_per_caller`` the rate of each signed-in caller (its token), 0 for
    none; ``bot_control`` AWS WAF Bot Control's inspection level on ``POST /coupon-issues``, or
    ``off`` (docs/operations.md says when to turn each on). ``cors_origins``: the web pages that
    may call the public routes from a browser (docs/frontend.md); API Gateway's own answers (a
    throttle, the web ACL's, auth's) name the first, so list the shop's page first.
    """

    rate_limit: Count
    burst_limit: Count
    user_id_source: Literal["body", "claims"]
    public_auth: Literal["none", "iam", "cognito"]
    user_id_claim: Text = "custom:user_id"
    waf_requests_per_5_min: Count = 0
    waf_requests_per_5_min_per_caller: Count = 0
    bot_control: Literal["off", "common", "targeted"] = "off"
    cors_origins: tuple[Origin, ...] = ()


class CacheConfig(_Section):
    """``replicas``: a replication group's replicas beside its primary, each in another AZ.
    ``wait_replicas``: the intake answers SUCCESS only once that many replicas have the
    reservation (``WAIT``, ``REDIS_WAIT_REPLICAS``), so that a failover loses a copy already
    answered only if it promotes a replica that lacks it (ElastiCache promotes one of them);
    fewer than ``replicas``, so that a replica down stops no sale. Only on a replication group: a
    serverless cache replicates as it manages, and 0 there."""

    kind: Literal["serverless", "replication-group"]
    node_type: Text
    replicas: Count = 1
    wait_replicas: Count = 0

    @model_validator(mode="after")
    def _waits_on_replicas_it_has(self) -> Self:
        if self.kind != "replication-group" and {"replicas", "wait_replicas"} & self.model_fields_set:
            raise ValueError("replicas and waitReplicas are a replication group's (a serverless cache manages its own)")
        if self.kind == "replication-group" and not 1 <= self.replicas <= MAX_REPLICAS:
            raise ValueError(f"replicas must be 1 to {MAX_REPLICAS} (automatic failover needs one)")
        if self.wait_replicas and self.wait_replicas >= self.replicas:
            raise ValueError(f"waitReplicas must be below replicas ({self.replicas}): a replica down must stop no sale")
        return self


class KafkaConfig(_Section):
    """``brokers_per_az`` counts provisioned brokers (MSK places the same number in every AZ),
    each with ``broker_storage_gb`` of EBS storage; the topic gets ``replication_factor``
    replicas and refuses writes below ``min_insync_replicas``."""

    kind: Literal["serverless", "provisioned"]
    broker_instance_type: Text
    partitions: Count
    replication_factor: Count
    min_insync_replicas: Count
    batch_size: Count
    batching_window_s: Count
    max_retry_attempts: Count
    min_pollers: Count
    max_pollers: Count
    brokers_per_az: Count = 1
    broker_storage_gb: Count = 100


class DatabaseConfig(_Section):
    """``storage_gb``: the instance's allocated storage (PostgreSQL's minimum is 20 GB; RDS can
    grow it later, never shrink it)."""

    instance_type: Text
    multi_az: Flag
    backup_days: Count
    deletion_protection: Flag
    storage_gb: Count = 100


class WarmupConfig(_Section):
    """Provisioned concurrency for the intake from ``starts`` to ``ends`` (Application Auto
    Scaling schedule expressions, ``at(2026-12-01T11:45:00)`` or ``cron(45 11 * * ? *)``, UTC):
    a sale's first users meet warm containers."""

    starts: Text
    ends: Text
    provisioned: Count


class ConcurrencyConfig(_Section):
    """Reserved concurrency of the intake (bounded by what MSK accepts, see docs/deploy.md), of
    the coupons function (the other routes: a busy operator cannot starve a sale, nor a sale the
    operators) and of the DLQ handler, how many DLQ batches its SQS mapping runs at once (2 or
    more), and an optional warm-up before a sale."""

    intake: Count
    coupons: Count
    dlq_handler: Count
    dlq_mapping: Count
    warmup: WarmupConfig | None = None


class ProcessingLimitConfig(_Section):
    """Database writes per second across every worker (the worker's WORKER_WRITES_PER_SECOND),
    and the burst the bucket allows at once."""

    writes_per_second: Count
    burst: Count


class LocalConfig(_Section):
    """Where the functions of the ``local`` environment find the embedded services: the cache's
    URL (credentials in it), the database's secret in LocalStack's Secrets Manager (read as on
    AWS), the brokers, and whether they answer over TLS (the local stack's do)."""

    redis_url: Text
    database_secret_arn: Text
    kafka_bootstrap_servers: Text
    kafka_tls: Literal["on", "off"] = "on"


class EnvironmentConfig(_Section):
    """One environment. ``endpoint_azs``: how many of its AZs hold the interface VPC endpoints
    (all of them unless set); fewer cost less, and a function in another AZ reaches them across
    AZs, so an outage of their AZ cuts every AWS API call of the environment."""

    name: Text
    reconcile_every_minutes: Count
    log_retention_days: Count
    intake_memory_mb: Count
    worker_memory_mb: Count
    api: ApiConfig
    availability_zones: Count = 2
    endpoint_azs: Count | None = None
    removal_policy: Literal["destroy", "retain"] = "destroy"
    alarm_emails: tuple[Text, ...] = ()
    alarm_subscribers_required: Flag = False
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


def _known_fields(loc: tuple[Any, ...]) -> list[str]:
    """The camelCase fields of the block at ``loc`` (a path of aliases from the environment)."""
    model: type[BaseModel] = EnvironmentConfig
    for alias in loc:
        field = next(f for f in model.model_fields.values() if f.alias == alias)
        model = next(arg for arg in (field.annotation, *get_args(field.annotation)) if _is_section(arg))
    return sorted(str(field.alias) for field in model.model_fields.values())


def _is_section(kind: object) -> bool:
    return isinstance(kind, type) and issubclass(kind, _Section)


# What each kind of pydantic error says, in this file's words.
_MEANINGS = {
    "int_type": "must be a non-negative integer",
    "greater_than_equal": "must be a non-negative integer",
    "bool_type": "must be true or false",
    "string_type": "must be a non-empty string",
    "string_too_short": "must be a non-empty string",
    "tuple_type": "must be a list",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


def _problem(name: str, error: Any) -> str:
    where = name + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"])
    kind = error["type"]
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        return f"{where} is not a known field; known: {_known_fields(error['loc'][:-1])}"
    if kind == "literal_error":
        return f"{where} must be one of {error['ctx']['expected']}, got {error['input']!r}"
    return f"{where} {_MEANINGS.get(kind, error['msg'])}, got {error['input']!r}"


def load(
    context: dict[str, Any] | None,
    name: str | None,
    overrides: dict[str, Any] | None = None,
    *,
    alarm_emails: str | None = None,
    deploying: bool = True,
) -> EnvironmentConfig:
    """The configuration of environment ``name`` from the ``coupon:environments`` context.

    ``overrides`` replace fields of the ``local`` block (``make up`` passes the URLs of the
    services it started, as ``-c local:redisUrl=...`` and so on). ``alarm_emails`` (``-c
    alarmEmails=a@example.com,b@example.com``, a deploy parameter) adds alarm subscribers to the
    environment's own. ``deploying=False`` (``make plan``, which deploys nothing) leaves out
    the rules of a deployment that do not bear on sizing: who receives the alarms.
    """
    if not isinstance(context, dict) or not context:
        raise CdkContextError(f"cdk.json context has no {CONTEXT_KEY!r} object")
    if not name:
        raise CdkContextError(f"choose an environment with -c env=NAME; known: {', '.join(sorted(context))}")
    if name not in context:
        raise CdkContextError(f"unknown environment {name!r}; known: {', '.join(sorted(context))}")
    raw = context[name]
    if not isinstance(raw, dict):
        raise CdkContextError(f"{name} must be an object")
    raw = {**raw, "name": name}
    if overrides and isinstance(raw.get("local"), dict):
        raw["local"] = {**raw["local"], **overrides}
    if alarm_emails:
        raw["alarmEmails"] = list(dict.fromkeys([*raw.get("alarmEmails", []), *_emails(alarm_emails)]))
    try:
        config = EnvironmentConfig.model_validate(raw, by_alias=True)
    except ValidationError as exc:
        raise CdkContextError("; ".join(_problem(name, error) for error in exc.errors())) from None
    aws_parts = (config.cache, config.kafka, config.database)
    if config.is_local != all(part is None for part in aws_parts) or (not config.is_local and None in aws_parts):
        raise CdkContextError(f"{name} needs either 'local' or all of 'cache', 'kafka' and 'database'")
    _check(config, deploying=deploying)
    return config


MSK_SERVERLESS_REPLICATION = 3  # fixed by MSK Serverless
POSTGRES_MIN_STORAGE_GB = 20  # https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html
# The builder's builds at once: the intakes' asks for a missing state, one a second for each
# coupon whose state is missing (the registry's claim), whatever the public traffic. The rebuild's
# runs at once: the schedule's and an operator's reconcile, never the public's, so that no burst
# of requests can hold the scheduled reconcile back. Each coupon is reconciled or built under its
# state lock, so runs may overlap safely; the bounds keep the database's load bounded after a
# Redis loss mid-sale (an intake whose ask is throttled answers 503, and its client retries after
# Retry-After). The relay runs one at a time: that keeps each coupon's events in order.
BUILDER_CONCURRENCY, REBUILD_CONCURRENCY, RELAY_CONCURRENCY = 5, 2, 1
# The Amazon MSK quota page: TCP connections with IAM access control, per Standard broker and per
# serverless cluster, 3,000 by default; on a Standard broker, raised through the broker's
# listener.name.client_iam.max.connections, where the page warns that a high value can make the
# broker unavailable: this stack raises it, when the budget below needs it, by a tenth at most.
# An intake container's producer holds one connection to each broker it writes to. Its INIT
# opens two one after the other: the bootstrap's, which kafka-python closes once it has read the
# metadata, then the producer's, to the partition's leader. One open at a time, two over time
# (the connection rate's count). It reads nothing back (a lost state is built by the builder
# function). Both counted by a test (tests/services/test_intake.py).
MSK_IAM_CONNECTIONS = 3_000  # https://docs.aws.amazon.com/msk/latest/developerguide/limits.html
MSK_IAM_CONNECTIONS_RAISED = 3_300  # the most this stack sets on a Standard broker
CONNECTIONS_PER_INTAKE = 1
INIT_CONNECTION_ATTEMPTS = 2
# The clients of the cluster besides the intake, and at most one connection each to a broker:
# the worker's pollers, the builder's, the rebuild's and the DLQ handler's read-back consumers,
# the relay's producer, and at deploy time the topic function.
DEPLOY_TIME_CLIENTS = 1


def iam_connections(config: EnvironmentConfig, *, intake: int | None = None) -> int:
    """The IAM connections one broker may hold at once, at worst: every intake environment (its
    reserved concurrency, or ``intake``) to the leader of a hot coupon's partition (one coupon is
    one partition: every container writes to the same broker), and every other client."""
    assert config.concurrency is not None
    assert config.kafka is not None
    others = (
        config.kafka.max_pollers + BUILDER_CONCURRENCY + REBUILD_CONCURRENCY + config.concurrency.dlq_handler
        + RELAY_CONCURRENCY + DEPLOY_TIME_CLIENTS
    )  # fmt: skip
    return (config.concurrency.intake if intake is None else intake) * CONNECTIONS_PER_INTAKE + others


def iam_connections_taken(config: EnvironmentConfig) -> int:
    """The IAM connections the environment's brokers may be set to take: a serverless cluster its
    quota, a Standard broker MSK's default raised by a tenth at most."""
    assert config.kafka is not None
    return MSK_IAM_CONNECTIONS if config.kafka.kind == "serverless" else MSK_IAM_CONNECTIONS_RAISED


def iam_connection_limit(config: EnvironmentConfig) -> int | None:
    """listener.name.client_iam.max.connections as the stack sets it on every broker: None (MSK's
    default, 3,000) while :func:`iam_connections` fits in it, else that count rounded up to a
    hundred. Refused at synth past :data:`MSK_IAM_CONNECTIONS_RAISED`, and on MSK Serverless."""
    needed = iam_connections(config)
    return None if needed <= MSK_IAM_CONNECTIONS else -(-needed // 100) * 100


def _emails(listed: str) -> list[str]:
    emails = [email.strip() for email in listed.split(",") if email.strip()]
    bad = [email for email in emails if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email)]
    if bad:
        raise CdkContextError(f"-c alarmEmails must be e-mail addresses, separated by commas; bad: {bad}")
    return emails


def _check(config: EnvironmentConfig, *, deploying: bool) -> None:
    """Rules across fields, each the constraint of a service (docs/deploy.md names the pages)."""
    name, api = config.name, config.api
    if deploying and config.alarm_subscribers_required and not config.alarm_emails:
        raise CdkContextError(
            f"{name} sends its alarms to nobody: list who receives them in cdk.json ({name}.alarmEmails) "
            "or pass them at deploy time: -c alarmEmails=oncall@example.com"
        )
    if (api.user_id_source == "claims") != (api.public_auth == "cognito"):
        raise CdkContextError(f"{name}.api: userIdSource 'claims' goes with publicAuth 'cognito', and only with it")
    if api.waf_requests_per_5_min_per_caller and api.user_id_source != "claims":
        raise CdkContextError(
            f"{name}.api.wafRequestsPer5MinPerCaller counts a caller by its token: userIdSource 'claims' only"
        )
    if (api.waf_requests_per_5_min_per_caller or api.bot_control != "off") and not api.waf_requests_per_5_min:
        raise CdkContextError(
            f"{name}.api: a per-caller rate and Bot Control are rules of the web ACL; set wafRequestsPer5Min"
        )
    if "*" in api.cors_origins and api.public_auth != "none":
        raise CdkContextError(
            f"{name}.api.corsOrigins: '*' lets any page call a route that takes a credential; name the shop's origins"
        )
    if api.public_auth == "none" and not config.is_local:
        raise CdkContextError(
            f"{name}.api.publicAuth: 'none' is for the local environment only; use 'iam' or 'cognito'"
        )
    if config.is_local:
        return
    if not 2 <= config.availability_zones <= 3:
        raise CdkContextError(f"{name}.availabilityZones must be 2 or 3, got {config.availability_zones}")
    if config.concurrency is None:
        raise CdkContextError(f"{name}.concurrency is required")
    _check_concurrency(name, config.concurrency)
    if config.endpoint_azs is not None and not 1 <= config.endpoint_azs <= config.availability_zones:
        raise CdkContextError(
            f"{name}.endpointAzs must be 1 to availabilityZones {config.availability_zones}, got {config.endpoint_azs}"
        )
    assert config.database is not None
    if config.database.storage_gb < POSTGRES_MIN_STORAGE_GB:
        raise CdkContextError(
            f"{name}.database.storageGb must be at least {POSTGRES_MIN_STORAGE_GB} (RDS for PostgreSQL), "
            f"got {config.database.storage_gb}"
        )
    assert config.kafka is not None
    _check_kafka(config, config.kafka)
    _check_connections(config)
    cache = config.cache
    if cache is not None and cache.kind == "replication-group" and 1 + cache.replicas > config.availability_zones:
        raise CdkContextError(
            f"{name}.cache.replicas: the primary and {cache.replicas} replicas each in an AZ of their own need "
            f"{1 + cache.replicas} AZs, the environment has {config.availability_zones}"
        )


def _check_connections(config: EnvironmentConfig) -> None:
    needed = iam_connections(config)
    assert config.kafka is not None
    assert config.concurrency is not None
    serverless, most = config.kafka.kind == "serverless", iam_connections_taken(config)
    if needed > most:
        where, why = (
            ("a serverless cluster", "MSK Serverless's quota") if serverless
            else ("a broker", f"MSK's {MSK_IAM_CONNECTIONS}, raised by a tenth at most")
        )  # fmt: skip
        raise CdkContextError(
            f"{config.name}.concurrency.intake {config.concurrency.intake} could hold {needed} IAM connections "
            f"to {where} with the other clients'; it takes {most} ({why}: docs/deploy.md, Sizing)"
        )


def _check_concurrency(name: str, concurrency: ConcurrencyConfig) -> None:
    if concurrency.dlq_mapping < 2:  # the SQS mapping's MaximumConcurrency is 2 to 1000
        raise CdkContextError(f"{name}.concurrency.dlqMapping must be at least 2, got {concurrency.dlq_mapping}")
    warmup = concurrency.warmup
    if warmup is None:
        return
    if not 1 <= warmup.provisioned <= concurrency.intake:
        raise CdkContextError(
            f"{name}.concurrency.warmup.provisioned must be 1 to the intake's {concurrency.intake}, "
            f"got {warmup.provisioned}"
        )
    for field, expression in (("starts", warmup.starts), ("ends", warmup.ends)):
        if not re.fullmatch(r"(at|cron|rate)\(.+\)", expression):
            raise CdkContextError(f"{name}.concurrency.warmup.{field} must be at(...), cron(...) or rate(...)")


def _check_kafka(config: EnvironmentConfig, kafka: KafkaConfig) -> None:
    name = config.name
    if kafka.kind == "serverless":
        if kafka.replication_factor != MSK_SERVERLESS_REPLICATION:
            raise CdkContextError(f"{name}.kafka.replicationFactor is {MSK_SERVERLESS_REPLICATION} on MSK Serverless")
    elif kafka.replication_factor > config.brokers:
        raise CdkContextError(
            f"{name}.kafka.replicationFactor {kafka.replication_factor} exceeds the {config.brokers} brokers "
            f"({config.availability_zones} AZs x brokersPerAz {kafka.brokers_per_az})"
        )
    if kafka.kind == "provisioned" and kafka.broker_storage_gb < 1:  # MSK's minimum per broker: 1 GiB
        raise CdkContextError(f"{name}.kafka.brokerStorageGb must be at least 1, got {kafka.broker_storage_gb}")
    if not 1 <= kafka.min_insync_replicas < kafka.replication_factor:
        raise CdkContextError(
            f"{name}.kafka.minInsyncReplicas must be at least 1 and below replicationFactor "
            f"{kafka.replication_factor} (one replica may be down), got {kafka.min_insync_replicas}"
        )
