"""The list prices the idle bill uses, in one table, each with the AWS pricing page that states it.

US East (N. Virginia), on demand, no free tier, no savings plans, in US dollars, as of 2026-12.
The pricing pages draw their numbers in the browser from the AWS Price List; check them for your
Region before you rely on a figure. ``local.planner.bill`` multiplies these by what a synthesized
template holds.
"""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_MONTH = 730  # what AWS's pricing examples use

MSK = "https://aws.amazon.com/msk/pricing/"
LAMBDA = "https://aws.amazon.com/lambda/pricing/"
ELASTICACHE = "https://aws.amazon.com/elasticache/pricing/"
RDS_POSTGRES = "https://aws.amazon.com/rds/postgresql/pricing/"
RDS_PROXY = "https://aws.amazon.com/rds/proxy/pricing/"
PRIVATELINK = "https://aws.amazon.com/privatelink/pricing/"
WAF = "https://aws.amazon.com/waf/pricing/"
CLOUDWATCH = "https://aws.amazon.com/cloudwatch/pricing/"
KMS = "https://aws.amazon.com/kms/pricing/"
SECRETS_MANAGER = "https://aws.amazon.com/secrets-manager/pricing/"
CLOUDFRONT = "https://aws.amazon.com/cloudfront/pricing/"


@dataclass(frozen=True)
class Price:
    usd: float
    unit: str  # as the bill's price column shows it: "$0.75/cluster-h"
    page: str

    @property
    def shown(self) -> str:
        if self.usd == int(self.usd):
            return f"${self.usd:.0f}/{self.unit}"
        return f"${self.usd:.2f}/{self.unit}" if round(self.usd, 2) == self.usd else f"${self.usd:g}/{self.unit}"


PRICES: dict[str, Price] = {
    "msk_serverless_cluster_hour": Price(0.75, "cluster-h", MSK),
    "msk_serverless_partition_hour": Price(0.0015, "partition-h", MSK),
    "msk_storage_gb_month": Price(0.10, "GB-month", MSK),
    "msk_broker_hour:kafka.t3.small": Price(0.0456, "kafka.t3.small-h", MSK),
    "msk_broker_hour:kafka.m7g.large": Price(0.204, "kafka.m7g.large-h", MSK),
    "lambda_epu_hour": Price(0.185, "EPU-h", LAMBDA),
    "valkey_serverless_gb_hour": Price(0.084, "GB-h (100 MB minimum)", ELASTICACHE),
    "valkey_node_hour:cache.r7g.large": Price(0.1752, "cache.r7g.large-h", ELASTICACHE),
    "rds_postgres_hour:db.t4g.micro": Price(0.016, "db.t4g.micro-h", RDS_POSTGRES),
    "rds_postgres_hour:db.r7g.large": Price(0.239, "db.r7g.large-h (x2 Multi-AZ)", RDS_POSTGRES),
    "rds_gp2_gb_month": Price(0.115, "GB-month (x2 Multi-AZ)", RDS_POSTGRES),
    "rds_proxy_vcpu_hour": Price(0.015, "vCPU-h (2 vCPU minimum)", RDS_PROXY),
    "interface_endpoint_az_hour": Price(0.01, "endpoint-AZ-h", PRIVATELINK),
    "waf_web_acl_month": Price(5.0, "web ACL-month", WAF),
    "waf_rule_month": Price(1.0, "rule-month", WAF),
    "waf_bot_control_month": Price(10.0, "Bot Control-month", WAF),
    "waf_bot_control_million:COMMON": Price(1.0, "million requests inspected (common)", WAF),
    "waf_bot_control_million:TARGETED": Price(10.0, "million requests inspected (targeted)", WAF),
    "cloudwatch_alarm_metric_month": Price(0.10, "alarm metric-month", CLOUDWATCH),
    "cloudwatch_dashboard_month": Price(3.0, "dashboard-month", CLOUDWATCH),
    "kms_key_month": Price(1.0, "key-month", KMS),
    "secret_month": Price(0.40, "secret-month", SECRETS_MANAGER),
    # a sale's polls (make plan): HTTPS requests in North America and Europe, and Origin Shield's
    "cloudfront_https_10k": Price(0.01, "10,000 HTTPS requests", CLOUDFRONT),
    "cloudfront_function_million": Price(0.10, "million function invocations", CLOUDFRONT),
    "cloudfront_out_gb": Price(0.085, "GB out to viewers (the first 10 TB a month)", CLOUDFRONT),
}

# The vCPUs RDS Proxy bills for each instance class the environments use (the RDS instance
# types page); the proxy bills 2 at least.
INSTANCE_VCPUS = {"db.t4g.micro": 2, "db.r7g.large": 2}


class UnpricedError(KeyError):
    """An instance type or class the table has no price for: add it, with its page."""


def price(key: str) -> Price:
    if key not in PRICES:
        raise UnpricedError(f"no price for {key!r} in local/planner/prices.py; add it with its pricing page")
    return PRICES[key]
