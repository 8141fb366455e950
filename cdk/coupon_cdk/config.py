"""Per-environment settings from ``cdk.json`` context, chosen with ``-c env=NAME``.

Read and validated in one place, by pydantic models (camelCase in ``cdk.json``, snake_case in
the code): an unknown environment name fails with the list of known ones, and a missing,
unknown or mistyped field names itself (``prod.api.rateLimit must be a non-negative integer``).
An environment is one of two kinds: :class:`LocalEnvironment` (a ``local`` block: LocalStack and
the embedded services) or :class:`AwsEnvironment` (the managed services' blocks, all required).
Each rule, a constraint of an AWS service, is a field constraint or a validator of the block whose
fields it reads.
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
MSK_SERVERLESS_REPLICATION = 3  # fixed by MSK Serverless
POSTGRES_MIN_STORAGE_GB = 20  # https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html
CDK_JSON = Path(__file__).resolve().parents[2] / "cdk.json"

Count = Annotated[int, Strict(), Field(ge=0)]
Positive = Annotated[int, Strict(), Field(ge=1)]
Text = Annotated[str, Strict(), Field(min_length=1)]
Flag = Annotated[bool, Strict()]
# A web origin (scheme, host, port; no path) by the rule the functions' CORS_ORIGINS reads it with, or * (any page).
Origin = Annotated[str, Strict(), Field(pattern=rf"^(\*|{ORIGIN.pattern})$")]
SCHEDULE = r"^(at|cron|rate)\(.+\)$"  # an Application Auto Scaling schedule expression
Schedule = Annotated[str, Strict(), Field(pattern=SCHEDULE)]


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
    may call the public routes from a browser (docs/frontend.md), and read a sale's availability
    at the edge.
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

    @model_validator(mode="after")
    def _rules_of_the_stage(self) -> Self:
        if (self.user_id_source == "claims") != (self.public_auth == "cognito"):
            raise ValueError("userIdSource 'claims' goes with publicAuth 'cognito', and only with it")
        if self.waf_requests_per_5_min_per_caller and self.user_id_source != "claims":
            raise ValueError("wafRequestsPer5MinPerCaller counts a caller by its token: userIdSource 'claims' only")
        if (self.waf_requests_per_5_min_per_caller or self.bot_control != "off") and not self.waf_requests_per_5_min:
            raise ValueError("a per-caller rate and Bot Control are rules of the web ACL; set wafRequestsPer5Min")
        if "*" in self.cors_origins and self.public_auth != "none":
            raise ValueError(
                "corsOrigins '*' lets any page call a route that takes a credential; name the shop's origins"
            )
        return self


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

    @model_validator(mode="after")
    def _replicas_a_topic_can_have(self) -> Self:
        if self.kind == "serverless" and self.replication_factor != MSK_SERVERLESS_REPLICATION:
            raise ValueError(f"replicationFactor is {MSK_SERVERLESS_REPLICATION} on MSK Serverless")
        if self.kind == "provisioned" and self.broker_storage_gb < 1:  # MSK's minimum per broker: 1 GiB
            raise ValueError(f"brokerStorageGb must be at least 1, got {self.broker_storage_gb}")
        if not 1 <= self.min_insync_replicas < self.replication_factor:
            raise ValueError(
                f"minInsyncReplicas must be at least 1 and below replicationFactor {self.replication_factor} "
                f"(one replica may be down), got {self.min_insync_replicas}"
            )
        return self


class DatabaseConfig(_Section):
    """``storage_gb``: the instance's allocated storage (PostgreSQL's minimum is 20 GB; RDS can
    grow it later, never shrink it)."""

    instance_type: Text
    multi_az: Flag
    backup_days: Count
    deletion_protection: Flag
    storage_gb: Annotated[int, Strict(), Field(ge=POSTGRES_MIN_STORAGE_GB)] = 100


class WarmupConfig(_Section):
    """Provisioned concurrency for the intake from ``starts`` to ``ends`` (Application Auto
    Scaling schedule expressions, ``at(2026-12-01T11:45:00)`` or ``cron(45 11 * * ? *)``, UTC):
    a sale's first users meet warm containers."""

    starts: Schedule
    ends: Schedule
    provisioned: Positive


class ConcurrencyConfig(_Section):
    """Reserved concurrency of the intake (bounded by what MSK accepts, see docs/deploy.md), of
    the coupons function (the other routes: a busy operator cannot starve a sale, nor a sale the
    operators) and of the DLQ handler, how many DLQ batches its SQS mapping runs at once (2 or
    more), and an optional warm-up before a sale."""

    intake: Count
    coupons: Count
    dlq_handler: Count
    dlq_mapping: Annotated[int, Strict(), Field(ge=2)]  # the SQS mapping's MaximumConcurrency is 2 to 1000
    warmup: WarmupConfig | None = None

    @model_validator(mode="after")
    def _warms_what_it_reserves(self) -> Self:
        if self.warmup and self.warmup.provisioned > self.intake:
            raise ValueError(
                f"warmup.provisioned must be 1 to the intake's {self.intake}, got {self.warmup.provisioned}"
            )
        return self


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


class _Environment(_Section):
    """What every environment has: its functions' sizes and schedules, its logs and its API."""

    name: Text
    reconcile_every_minutes: Count
    log_retention_days: Count
    intake_memory_mb: Count
    worker_memory_mb: Count
    api: ApiConfig
    removal_policy: Literal["destroy", "retain"] = "destroy"


class LocalEnvironment(_Environment):
    """The CDK app on LocalStack, its functions reaching the embedded services."""

    local: LocalConfig


class AwsEnvironment(_Environment):
    """An AWS account's environment and the managed services it builds. ``endpoint_azs``: how
    many of its AZs hold the interface VPC endpoints (all of them unless set); fewer cost less,
    and a function in another AZ reaches them across AZs, so an outage of their AZ cuts every AWS
    API call of the environment."""

    concurrency: ConcurrencyConfig
    processing_limit: ProcessingLimitConfig | None = None  # None: the worker writes as fast as it can
    cache: CacheConfig
    kafka: KafkaConfig
    database: DatabaseConfig
    availability_zones: Annotated[int, Strict(), Field(ge=2, le=3)] = 2
    endpoint_azs: Positive | None = None
    alarm_emails: tuple[Text, ...] = ()
    alarm_subscribers_required: Flag = False

    @property
    def brokers(self) -> int:
        """Provisioned MSK brokers: the same number in every AZ."""
        return self.availability_zones * self.kafka.brokers_per_az

    @model_validator(mode="after")
    def _fits_its_azs_and_brokers(self) -> Self:
        if self.api.public_auth == "none":
            raise ValueError("api.publicAuth 'none' is for the local environment only; use 'iam' or 'cognito'")
        azs = self.availability_zones
        if self.endpoint_azs is not None and self.endpoint_azs > azs:
            raise ValueError(f"endpointAzs must be 1 to availabilityZones {azs}, got {self.endpoint_azs}")
        kafka = self.kafka
        if kafka.kind == "provisioned" and kafka.replication_factor > self.brokers:
            raise ValueError(
                f"kafka.replicationFactor {kafka.replication_factor} exceeds the {self.brokers} brokers "
                f"({azs} AZs x brokersPerAz {kafka.brokers_per_az})"
            )
        if self.cache.kind == "replication-group" and 1 + self.cache.replicas > azs:
            raise ValueError(
                f"cache.replicas: the primary and {self.cache.replicas} replicas each in an AZ of their own need "
                f"{1 + self.cache.replicas} AZs, the environment has {azs}"
            )
        needed, most = iam_connections(self), iam_connections_taken(self)
        if needed > most:
            where, why = (
                ("a serverless cluster", "MSK Serverless's quota") if kafka.kind == "serverless"
                else ("a broker", f"MSK's {MSK_IAM_CONNECTIONS}, raised by a tenth at most")
            )  # fmt: skip
            raise ValueError(
                f"concurrency.intake {self.concurrency.intake} could hold {needed} IAM connections to {where} with "
                f"the other clients'; it takes {most} ({why}: docs/deploy.md, Sizing)"
            )
        return self


EnvironmentConfig = LocalEnvironment | AwsEnvironment


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The camelCase fields of the block at ``loc`` (a path of aliases from the environment)."""
    for alias in loc:
        field = next(f for f in model.model_fields.values() if f.alias == alias)
        model = next(arg for arg in (field.annotation, *get_args(field.annotation)) if _is_section(arg))
    return sorted(str(field.alias) for field in model.model_fields.values())


def _is_section(kind: object) -> bool:
    return isinstance(kind, type) and issubclass(kind, _Section)


# What each kind of pydantic error says, in this file's words.
_MEANINGS = {
    "int_type": "must be a non-negative integer",
    "bool_type": "must be true or false",
    "string_type": "must be a non-empty string",
    "string_too_short": "must be a non-empty string",
    "tuple_type": "must be a list",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}
_PATTERNS = {SCHEDULE: "must be at(...), cron(...) or rate(...)"}


def _problem(name: str, model: type[BaseModel], error: Any) -> str:
    where = name + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"])
    kind, ctx = error["type"], error.get("ctx", {})
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        return f"{where} is not a known field; known: {_known_fields(model, error['loc'][:-1])}"
    if kind == "value_error":  # a validator's rule, which names its fields
        return f"{where}: {ctx['error']}"
    if kind == "literal_error":
        meaning = f"must be one of {ctx['expected']}"
    elif kind == "greater_than_equal":
        meaning = "must be a non-negative integer" if ctx["ge"] == 0 else f"must be at least {ctx['ge']}"
    elif kind == "less_than_equal":
        meaning = f"must be at most {ctx['le']}"
    elif kind == "string_pattern_mismatch":
        meaning = _PATTERNS.get(ctx["pattern"], error["msg"])
    else:
        meaning = _MEANINGS.get(kind, error["msg"])
    return f"{where} {meaning}, got {error['input']!r}"


def load(
    context: dict[str, Any] | None,
    name: str | None,
    overrides: dict[str, Any] | None = None,
    *,
    alarm_emails: str | None = None,
    deploying: bool = True,
) -> EnvironmentConfig:
    """The configuration of environment ``name`` from the ``coupon:environments`` context: a
    :class:`LocalEnvironment` if it has a ``local`` block and none of an AWS environment's
    managed services, else an :class:`AwsEnvironment` (which names a stray ``local`` block).

    ``overrides`` replace fields of the ``local`` block (``make up`` passes the URLs of the
    services it started, as ``-c local:redisUrl=...`` and so on). ``alarm_emails`` (``-c
    alarmEmails=a@example.com,b@example.com``, a deploy parameter) adds alarm subscribers to an
    AWS environment's own. ``deploying=False`` (``make plan``, which deploys nothing) leaves out
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
    managed = {"cache", "kafka", "database"} & raw.keys()
    model: type[LocalEnvironment | AwsEnvironment] = (
        LocalEnvironment if "local" in raw and not managed else AwsEnvironment
    )
    if overrides and isinstance(raw.get("local"), dict):
        raw["local"] = {**raw["local"], **overrides}
    emails = _emails(alarm_emails) if alarm_emails else []
    listed = raw.get("alarmEmails", [])
    if emails and model is AwsEnvironment and isinstance(listed, list):  # else the model names what is wrong
        raw["alarmEmails"] = list(dict.fromkeys([*listed, *emails]))
    try:
        config = model.model_validate(raw, by_alias=True)
    except ValidationError as exc:
        raise CdkContextError("; ".join(_problem(name, model, error) for error in exc.errors())) from None
    required = isinstance(config, AwsEnvironment) and config.alarm_subscribers_required and not config.alarm_emails
    if deploying and required:
        raise CdkContextError(
            f"{name} sends its alarms to nobody: list who receives them in cdk.json ({name}.alarmEmails) "
            "or pass them at deploy time: -c alarmEmails=oncall@example.com"
        )
    return config


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


def iam_connections(config: AwsEnvironment, *, intake: int | None = None) -> int:
    """The IAM connections one broker may hold at once, at worst: every intake environment (its
    reserved concurrency, or ``intake``) to the leader of a hot coupon's partition (one coupon is
    one partition: every container writes to the same broker), and every other client."""
    others = (
        config.kafka.max_pollers + BUILDER_CONCURRENCY + REBUILD_CONCURRENCY + config.concurrency.dlq_handler
        + RELAY_CONCURRENCY + DEPLOY_TIME_CLIENTS
    )  # fmt: skip
    return (config.concurrency.intake if intake is None else intake) * CONNECTIONS_PER_INTAKE + others


def iam_connections_taken(config: AwsEnvironment) -> int:
    """The IAM connections the environment's brokers may be set to take: a serverless cluster its
    quota, a Standard broker MSK's default raised by a tenth at most."""
    return MSK_IAM_CONNECTIONS if config.kafka.kind == "serverless" else MSK_IAM_CONNECTIONS_RAISED


def iam_connection_limit(config: AwsEnvironment) -> int | None:
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
