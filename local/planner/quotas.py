"""The AWS quotas a flash sale meets, in one table, each with the page that states it.

Defaults of a new account as the pages gave them on 2026-12-01 (check them for your Region:
API Gateway's throttle is lower in some). ``make plan`` uses them; a quota your account has had
raised is an option (``QUOTAS="api_rps=20000 lambda_concurrency=5000"``), and only the ones
marked raisable can be. The MSK connection quota is the CDK's (``coupon_cdk.config``, which
checks it at synth time), read from there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from coupon_cdk.config import MSK_IAM_CONNECTIONS

APIGATEWAY = "https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html"
LAMBDA_LIMITS = "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html"
LAMBDA_CONCURRENCY = "https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html"
LAMBDA_SCALING = "https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html"
LAMBDA_PROVISIONED = "https://docs.aws.amazon.com/lambda/latest/dg/provisioned-concurrency.html"
MSK = "https://docs.aws.amazon.com/msk/latest/developerguide/limits.html"
ELASTICACHE = "https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/wwe-troubleshooting.html"


@dataclass(frozen=True)
class Quota:
    key: str  # the option's name in QUOTAS="key=value ..."
    what: str
    value: float
    unit: str
    source: str
    raisable: bool


_TABLE = (
    Quota("api_rps", "API Gateway throttle, every API of the account and Region", 10_000, "requests/s",
          APIGATEWAY, raisable=True),
    Quota("api_burst", "API Gateway burst, every API of the account and Region", 5_000, "requests",
          APIGATEWAY, raisable=True),
    Quota("lambda_concurrency", "Lambda concurrent executions, the account and Region", 1_000, "environments",
          LAMBDA_LIMITS, raisable=True),
    Quota("lambda_unreserved", "Lambda concurrency that must stay unreserved", 100, "environments",
          LAMBDA_CONCURRENCY, raisable=False),
    Quota("lambda_rps_per_concurrency", "Lambda requests/s a function serves, per unit of its concurrency", 10,
          "requests/s", LAMBDA_CONCURRENCY, raisable=False),
    Quota("lambda_scale_out", "Lambda scale-out per function, every 10 s", 1_000, "environments",
          LAMBDA_SCALING, raisable=False),
    Quota("lambda_provisioning", "Lambda provisioned concurrency allocated per function", 6_000,
          "environments/min", LAMBDA_PROVISIONED, raisable=False),
    Quota("lambda_provisioning_prep_min", "Lambda provisioned concurrency preparation before allocation", 2,
          "minutes", LAMBDA_PROVISIONED, raisable=False),
    Quota("msk_connections", "MSK IAM TCP connections per Standard broker, or per serverless cluster",
          MSK_IAM_CONNECTIONS, "connections", MSK, raisable=True),
    Quota("msk_connection_rate", "MSK new IAM connections per Standard broker (m5, m7g)", 100,
          "connections/s", MSK, raisable=False),
    Quota("msk_t3_connection_rate", "MSK new IAM connections per t3 broker", 4,
          "connections/s", MSK, raisable=False),
    Quota("msk_serverless_connection_rate", "MSK Serverless connection attempts per cluster", 100,
          "connections/s", MSK, raisable=False),
    Quota("msk_serverless_requests", "MSK Serverless requests per cluster", 15_000, "requests/s",
          MSK, raisable=False),
    Quota("cache_slot_ecpu", "ElastiCache Serverless ECPUs on one slot (one coupon)", 30_000, "ECPU/s",
          ELASTICACHE, raisable=False),
    Quota("cache_doubling_min", "ElastiCache Serverless time to double its request rate", 12, "minutes",
          ELASTICACHE, raisable=False),
)  # fmt: skip

QUOTAS: dict[str, Quota] = {quota.key: quota for quota in _TABLE}


class QuotaError(ValueError):
    """An override names no quota, one that cannot be raised, or a value that is no number."""


def with_raised(overrides: dict[str, str]) -> dict[str, Quota]:
    """The table with the account's raised quotas (``{"api_rps": "20000"}``) in place."""
    table = dict(QUOTAS)
    for key, text in overrides.items():
        if key not in table:
            raise QuotaError(f"no quota {key!r}; known: {', '.join(sorted(table))}")
        if not table[key].raisable:
            raise QuotaError(f"{key} ({table[key].what}) is fixed by AWS; it cannot be raised")
        try:
            value = float(text)
        except ValueError:
            raise QuotaError(f"{key} must be a number, got {text!r}") from None
        if value <= 0:
            raise QuotaError(f"{key} must be above 0, got {text!r}")
        table[key] = replace(table[key], value=value)
    return table
