"""Configuration: every variable validated, with a message that names it."""

from __future__ import annotations

import re

import pytest

from coupon_core.errors import ConfigError
from coupon_core.settings import FunctionSettings, KafkaSettings, RedisSettings
from coupon_core.settings.backend import DatabaseSettings, RetentionSettings
from coupon_core.settings.coupons import CouponsSettings, RebuildFunctionSettings
from coupon_core.settings.http import CallerSettings, CorsSettings
from coupon_core.settings.intake import BuilderFunctionSettings, IntakeSettings, IssuingSettings
from coupon_core.settings.rebuild import RebuildSettings
from coupon_core.settings.relay import OutboxRelaySettings, RelaySettings
from coupon_core.settings.worker import (
    DlqHandlerSettings,
    DlqSettings,
    WorkerLockSettings,
    WorkerSettings,
    WriteLimitSettings,
)

VALID = {
    "REDIS_URL": "rediss://cache.example:6379/0",
    "DATABASE_URL": "postgresql+pg8000://app:secret@db.example:5432/coupons",
    "KAFKA_BOOTSTRAP_SERVERS": "b-1.msk.example:9098,b-2.msk.example:9098",
    "KAFKA_TOPIC": "coupon.issue.v1",
    "KAFKA_CONSUMER_GROUP": "coupon-worker-test",
    "POWERTOOLS_SERVICE_NAME": "coupon-intake",
    "POWERTOOLS_METRICS_NAMESPACE": "Coupons",
}

ELASTICACHE_IAM = {
    "REDIS_AUTH": "iam",
    "REDIS_USER": "coupons-dev-app",
    "REDIS_CACHE_NAME": "coupons-dev",
    "AWS_REGION": "eu-west-1",
}


class EveryPart(FunctionSettings):
    """Every part the functions compose their settings of, read at once: each variable's checks."""

    redis: RedisSettings
    database: DatabaseSettings
    kafka: KafkaSettings
    retention: RetentionSettings
    issuing: IssuingSettings
    caller: CallerSettings


def test_a_valid_environment_is_read_with_defaults():
    settings = EveryPart.from_env(VALID)
    assert settings.kafka.bootstrap_servers == ("b-1.msk.example:9098", "b-2.msk.example:9098")
    assert settings.kafka.auth == "none"
    assert settings.caller.user_id_source == "body"
    assert settings.retention.state_ms == 7 * 24 * 3_600_000
    assert settings.issuing.memory_ms == 1_000  # the contract's second
    assert settings.database.url == VALID["DATABASE_URL"]


def test_secret_arn_instead_of_url():
    env = {k: v for k, v in VALID.items() if k != "DATABASE_URL"}
    env["DB_SECRET_ARN"] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:coupons-db-AbCdEf"
    assert EveryPart.from_env(env).database.secret_arn == env["DB_SECRET_ARN"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"REDIS_URL": None}, "REDIS_URL is required and not set"),
        ({"REDIS_URL": "http://cache:6379"}, "REDIS_URL must be a URL with scheme redis or rediss"),
        ({"DATABASE_URL": None}, "exactly one of DATABASE_URL and DB_SECRET_ARN must be set"),
        (
            {"DB_SECRET_ARN": "arn:aws:secretsmanager:eu-west-1:1:secret:x"},
            "exactly one of DATABASE_URL and DB_SECRET_ARN",
        ),
        ({"DATABASE_URL": "postgresql://db/coupons"}, "DATABASE_URL must be a URL with scheme postgresql+pg8000"),
        ({"DATABASE_URL": None, "DB_SECRET_ARN": "coupons-db"}, "DB_SECRET_ARN must be a Secrets Manager secret ARN"),
        ({"KAFKA_BOOTSTRAP_SERVERS": "broker"}, "KAFKA_BOOTSTRAP_SERVERS must be host:port"),
        ({"KAFKA_TOPIC": "bad topic!"}, "KAFKA_TOPIC must match ^[A-Za-z0-9._-]{1,249}$; got 'bad topic!'"),
        ({"KAFKA_AUTH": "SCRAM"}, "KAFKA_AUTH must be one of 'none' or 'iam'; got 'scram'"),
        ({"KAFKA_AUTH": "iam"}, "KAFKA_AUTH=iam needs AWS_REGION"),
        ({"KAFKA_TLS": "yes"}, "KAFKA_TLS must be one of 'on' or 'off'; got 'yes'"),
        ({"KAFKA_AUTH": "iam", "AWS_REGION": "eu-west-1", "KAFKA_TLS": "off"}, "KAFKA_AUTH=iam needs TLS"),
        (
            {"DATABASE_URL": "postgresql+pg8000://app@db.example/coupons?sslmode=require"},
            "DATABASE_URL's sslmode must be verify-full",
        ),
        ({"USER_ID_SOURCE": "header"}, "USER_ID_SOURCE must be one of 'body' or 'claims'"),
        ({"USER_ID_CLAIM": "custom user"}, "USER_ID_CLAIM must match ^[A-Za-z0-9_:.-]{1,128}$; got 'custom user'"),
        ({"STATE_RETENTION_HOURS": "a week"}, "STATE_RETENTION_HOURS must be an integer; got 'a week'"),
        ({"STATE_RETENTION_HOURS": "0"}, "STATE_RETENTION_HOURS must be at least 1; got 0"),
        ({"STATE_RETENTION_HOURS": "8785"}, "STATE_RETENTION_HOURS must be at most 8784; got 8785"),
        ({"KAFKA_PRODUCE_TIMEOUT_MS": "99"}, "KAFKA_PRODUCE_TIMEOUT_MS must be at least 100; got 99"),
        ({"KAFKA_PRODUCE_TIMEOUT_MS": "60001"}, "KAFKA_PRODUCE_TIMEOUT_MS must be at most 60000; got 60001"),
        ({"ANSWER_MEMORY_MS": "1001"}, "ANSWER_MEMORY_MS must be at most 1000; got 1001"),
        ({"ANSWER_MEMORY_MS": "-1"}, "ANSWER_MEMORY_MS must be at least 0; got -1"),
        ({"POWERTOOLS_METRICS_NAMESPACE": None}, "POWERTOOLS_METRICS_NAMESPACE is required"),
        ({"LOG_LEVEL": "loud"}, "LOG_LEVEL must be one of 'debug', 'info', 'warning', 'error' or 'critical'"),
        ({"REDIS_AUTH": "password"}, "REDIS_AUTH must be one of 'none' or 'iam'; got 'password'"),
        (
            {**ELASTICACHE_IAM, "REDIS_URL": "redis://cache.example:6379/0"},
            "REDIS_AUTH=iam needs TLS: REDIS_URL must be",
        ),
        ({**ELASTICACHE_IAM, "REDIS_USER": None}, "REDIS_USER is required"),
        ({**ELASTICACHE_IAM, "REDIS_USER": "Coupons_App"}, "REDIS_USER must be an ElastiCache id"),
        ({**ELASTICACHE_IAM, "REDIS_CACHE_NAME": None}, "REDIS_CACHE_NAME is required"),
        ({**ELASTICACHE_IAM, "REDIS_CACHE_KIND": "cluster"}, "REDIS_CACHE_KIND must be one of 'serverless' or"),
        ({**ELASTICACHE_IAM, "AWS_REGION": None}, "REDIS_AUTH=iam needs AWS_REGION"),
    ],
)
def test_a_bad_variable_fails_with_its_name(changes, message):
    env = {**VALID, **changes}
    env = {name: value for name, value in env.items() if value is not None}
    with pytest.raises(ConfigError, match=re.escape(message)):
        EveryPart.from_env(env)


@pytest.mark.parametrize(
    ("part", "variable", "value", "message"),
    [
        (
            BuilderFunctionSettings,
            "BUILDER_FUNCTION",
            "no spaces",
            "BUILDER_FUNCTION must match ^[A-Za-z0-9_:.-]{1,140}$",
        ),
        (
            RebuildFunctionSettings,
            "REBUILD_FUNCTION",
            "x" * 141,
            "REBUILD_FUNCTION must match ^[A-Za-z0-9_:.-]{1,140}$",
        ),
        (WriteLimitSettings, "WORKER_WRITE_BURST", "0", "WORKER_WRITE_BURST must be at least 1; got 0"),
        (WriteLimitSettings, "WORKER_WRITES_PER_SECOND", "-1", "WORKER_WRITES_PER_SECOND must be at least 0; got -1"),
        (WorkerLockSettings, "WORKER_LOCK_LEASE_S", "901", "WORKER_LOCK_LEASE_S must be at most 900; got 901"),
        (OutboxRelaySettings, "OUTBOX_BATCH", "10001", "OUTBOX_BATCH must be at most 10000; got 10001"),
        (DlqSettings, "DLQ_URL", "sqs.example/q", "DLQ_URL must be a URL with scheme https or http and a host"),
    ],
)
def test_a_part_names_its_bad_variable(part, variable, value, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        part.from_env({variable: value})


def test_a_choice_is_read_in_any_case_and_an_optional_bound_only_when_set():
    settings = EveryPart.from_env(VALID | {"LOG_LEVEL": "DEBUG", "KAFKA_TLS": "On", "USER_ID_SOURCE": "Claims"})
    assert (settings.observability.log_level, settings.kafka.tls, settings.caller.user_id_source) == (
        "debug",
        True,
        "claims",
    )
    assert WriteLimitSettings.from_env({}).burst_asked is None
    assert BuilderFunctionSettings.from_env({"BUILDER_FUNCTION": "arn:aws:lambda:eu-west-1:1:function:b"}).name


def test_elasticache_iam_auth_names_its_user_and_cache():
    redis = EveryPart.from_env(VALID | ELASTICACHE_IAM | {"REDIS_CACHE_KIND": "replication-group"}).redis
    assert (redis.auth, redis.user, redis.cache_name, redis.cache_kind, redis.region) == (
        "iam",
        "coupons-dev-app",
        "coupons-dev",
        "replication-group",
        "eu-west-1",
    )
    assert EveryPart.from_env(VALID).redis.auth == "none"


def test_iam_auth_with_a_region():
    settings = EveryPart.from_env({**VALID, "KAFKA_AUTH": "IAM", "AWS_REGION": "eu-west-1"})
    assert (settings.kafka.auth, settings.kafka.region, settings.kafka.tls) == ("iam", "eu-west-1", True)


def test_kafka_tls_is_off_without_iam_unless_asked_for():
    assert EveryPart.from_env(VALID).kafka.tls is False
    assert EveryPart.from_env({**VALID, "KAFKA_TLS": "on"}).kafka.tls is True


def test_a_database_url_may_ask_for_verified_tls():
    url = "postgresql+pg8000://app:secret@db.example:5432/coupons?sslmode=verify-full"
    assert EveryPart.from_env({**VALID, "DATABASE_URL": url}).database.url == url


def test_worker_dlq_and_rebuild_settings_name_their_bad_variables():
    base = {k: v for k, v in VALID.items() if not k.startswith("KAFKA")}
    with pytest.raises(ConfigError, match="DLQ_URL is required"):
        WorkerSettings.from_env(base)
    with pytest.raises(ConfigError, match="WORKER_LOCK_WAIT_S must be between 1 and 10"):
        WorkerSettings.from_env(
            base | {"DLQ_URL": "https://sqs.example/q", "WORKER_LOCK_LEASE_S": "10", "WORKER_LOCK_WAIT_S": "11"}
        )
    with pytest.raises(ConfigError, match="KAFKA_BOOTSTRAP_SERVERS is required"):
        DlqHandlerSettings.from_env(base)
    with pytest.raises(ConfigError, match="KAFKA_BOOTSTRAP_SERVERS is required"):
        RebuildSettings.from_env(base)
    rebuild = VALID | {"KAFKA_CONSUMER_GROUP": "coupon-worker-dev"}
    with pytest.raises(ConfigError, match="KAFKA_CONSUMER_GROUP is required"):
        RebuildSettings.from_env({k: v for k, v in VALID.items() if k != "KAFKA_CONSUMER_GROUP"})
    with pytest.raises(ConfigError, match=re.escape("KAFKA_CONSUMER_GROUP must match ^[A-Za-z0-9._-]{1,255}$")):
        RebuildSettings.from_env(VALID | {"KAFKA_CONSUMER_GROUP": "no spaces"})
    with pytest.raises(ConfigError, match="RECONCILE_LOOKBACK_HOURS must be shorter than STATE_RETENTION_HOURS"):
        RebuildSettings.from_env(rebuild | {"STATE_RETENTION_HOURS": "24", "RECONCILE_LOOKBACK_HOURS": "24"})
    with pytest.raises(ConfigError, match="RECONCILE_SKEW_MS must be an integer"):
        RebuildSettings.from_env(rebuild | {"RECONCILE_SKEW_MS": "1m"})
    settings = RebuildSettings.from_env(rebuild)
    assert (settings.reconcile.skew_ms, settings.consumer_group.group) == (15_000, "coupon-worker-dev")


@pytest.mark.parametrize("settings", [IntakeSettings, RebuildSettings])
def test_a_produce_timeout_that_could_outlast_the_reconcile_skew_is_refused(settings):
    """Reconcile releases a reservation older than the skew whose record is nowhere in Kafka: a
    produce allowed to take longer could still land after that release."""
    env = VALID | {"KAFKA_CONSUMER_GROUP": "g", "KAFKA_PRODUCE_TIMEOUT_MS": "20000", "RECONCILE_SKEW_MS": "20000"}
    with pytest.raises(ConfigError, match=r"KAFKA_PRODUCE_TIMEOUT_MS \(20000\) must be shorter than RECONCILE_SKEW_MS"):
        settings.from_env(env)


def test_a_function_reads_only_the_stores_it_uses():
    """The relay has no Redis: it starts without REDIS_URL (and ignores a malformed one); the
    functions that use Redis refuse to start without it. The intake has no database: it starts
    without DATABASE_URL or DB_SECRET_ARN, and has no field for one."""
    no_database = {k: v for k, v in VALID.items() if k != "DATABASE_URL"}
    assert not hasattr(IntakeSettings.from_env(no_database), "database")
    with pytest.raises(ConfigError, match="exactly one of DATABASE_URL and DB_SECRET_ARN"):
        CouponsSettings.from_env(no_database)
    no_redis = {k: v for k, v in VALID.items() if k != "REDIS_URL"}
    relay = RelaySettings.from_env(no_redis | {"KAFKA_TOPIC": "coupon.events.v1"})
    assert not hasattr(relay, "redis")
    RelaySettings.from_env(VALID | {"REDIS_URL": "not a url"})
    for uses_redis in (IntakeSettings, CouponsSettings, RebuildSettings, DlqHandlerSettings):
        with pytest.raises(ConfigError, match="REDIS_URL is required"):
            uses_redis.from_env(no_redis)


@pytest.mark.parametrize(
    ("value", "read"),
    [("https://shop.example.com", ("https://shop.example.com",)),
     (" http://127.0.0.1:8000 , https://a.example:8443 ", ("http://127.0.0.1:8000", "https://a.example:8443")),
     ("*", ("*",)), ("", ())],
)  # fmt: skip
def test_cors_origins_are_read_as_origins(value, read):
    assert CorsSettings.from_env({"CORS_ORIGINS": value}).origins == read


@pytest.mark.parametrize(
    "value", ["https://shop.example.com/", "shop.example.com", "https://x.com/path", "ftp://x.com"]
)
def test_a_cors_origin_that_is_no_origin_is_refused_naming_the_variable(value):
    with pytest.raises(ConfigError, match="CORS_ORIGINS must be origins"):
        CorsSettings.from_env({"CORS_ORIGINS": value})
