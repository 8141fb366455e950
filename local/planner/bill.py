"""What an environment costs a month deployed and doing nothing, read from its synthesized template.

Every resource type in the template is either billed at idle (a reader below prices it from
``prices.PRICES``) or listed in ``FREE_AT_IDLE`` with the reason it costs nothing while no request
comes; a type in neither stops the bill (:class:`UnpricedError`), so a resource added to the stack
cannot slip out of it. docs/deploy.md's table is this bill for each environment of cdk.json
(``make bill`` writes it; tests/infra/test_bill.py holds the two equal).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from local.planner.prices import HOURS_PER_MONTH, INSTANCE_VCPUS, PRICES, UnpricedError, price

Resource = Mapping[str, Any]
EVENT_POLLERS_PER_EPU = 10  # the Lambda guide, "Enhanced EPU Utilization"
VALKEY_SERVERLESS_MIN_GB = 0.1  # ElastiCache Serverless for Valkey meters 100 MB at least
RDS_PROXY_MIN_VCPUS = 2

FREE_AT_IDLE: dict[str, str] = {
    "AWS::ApiGateway::Authorizer": "API Gateway bills requests",
    "AWS::ApiGateway::Deployment": "API Gateway bills requests",
    "AWS::ApiGateway::GatewayResponse": "API Gateway bills requests",
    "AWS::ApiGateway::Method": "API Gateway bills requests",
    "AWS::ApiGateway::Model": "API Gateway bills requests",
    "AWS::ApiGateway::RequestValidator": "API Gateway bills requests",
    "AWS::ApiGateway::Resource": "API Gateway bills requests",
    "AWS::ApiGateway::RestApi": "API Gateway bills requests",
    "AWS::ApiGateway::Stage": "API Gateway bills requests (the stage has no cache)",
    "AWS::ApplicationAutoScaling::ScalableTarget": "the warm-up's provisioned concurrency bills while it is up",
    "AWS::CloudFront::CachePolicy": "no charge",
    "AWS::CloudFront::Distribution": "CloudFront bills requests and data out (a sale's polling: make plan)",
    "AWS::CloudFront::OriginRequestPolicy": "no charge",
    "AWS::CloudFront::ResponseHeadersPolicy": "no charge",
    "AWS::CloudFront::Function": "CloudFront bills its invocations (every request to the edge: make plan)",
    "AWS::Cognito::UserPool": "Cognito bills monthly active users",
    "AWS::Cognito::UserPoolClient": "Cognito bills monthly active users",
    "AWS::EC2::FlowLog": "its logs bill per GB ingested",
    "AWS::EC2::RouteTable": "no charge",
    "AWS::EC2::SecurityGroup": "no charge",
    "AWS::EC2::SecurityGroupIngress": "no charge",
    "AWS::EC2::Subnet": "no charge",
    "AWS::EC2::SubnetRouteTableAssociation": "no charge",
    "AWS::EC2::VPC": "no charge (no NAT gateway, no public IPv4 address)",
    "AWS::ElastiCache::ParameterGroup": "no charge of its own",
    "AWS::ElastiCache::SubnetGroup": "no charge of its own",
    "AWS::ElastiCache::User": "no charge of its own",
    "AWS::ElastiCache::UserGroup": "no charge of its own",
    "AWS::Events::Rule": "scheduled rules deliver to Lambda at no charge; Lambda bills the runs",
    "AWS::IAM::Policy": "no charge",
    "AWS::IAM::Role": "no charge",
    "AWS::Lambda::Alias": "no charge of its own (the warm-up's provisioned concurrency is its scalable target's)",
    "AWS::Lambda::EventInvokeConfig": "no charge of its own",
    "AWS::Lambda::Function": "Lambda bills requests and GB-seconds",
    "AWS::Lambda::LayerVersion": "no charge of its own",
    "AWS::Lambda::Permission": "no charge",
    "AWS::Lambda::Version": "no charge of its own",
    "AWS::Logs::LogGroup": "CloudWatch Logs bills GB ingested and stored",
    "AWS::Logs::MetricFilter": "no charge of its own; its metric is free while it has no data",
    "AWS::MSK::Configuration": "no charge of its own",
    "AWS::RDS::DBParameterGroup": "no charge of its own",
    "AWS::RDS::DBProxyTargetGroup": "no charge of its own",
    "AWS::RDS::DBSubnetGroup": "no charge of its own",
    "AWS::SNS::Subscription": "SNS bills deliveries",
    "AWS::SNS::Topic": "SNS bills requests",
    "AWS::SNS::TopicPolicy": "no charge",
    "AWS::SQS::Queue": "SQS bills requests (the DLQ mapping's polls of an empty queue included: cents a month)",
    "AWS::SQS::QueuePolicy": "no charge",
    "AWS::SecretsManager::SecretTargetAttachment": "no charge of its own",
    "AWS::WAFv2::WebACLAssociation": "WAF bills the web ACL and its requests",
    "Custom::AWS": "a Lambda function run at deploy time",
    "Custom::KafkaIamConnectionLimit": "a Lambda function run at deploy time (the brokers' setting is free)",
    "Custom::KafkaTopic": "a Lambda function run at deploy time (the partitions are priced with MSK)",
    "Custom::Trigger": "a Lambda function run at deploy time",
    "Custom::VpcRestrictDefaultSG": "a Lambda function run at deploy time",
}


@dataclass(frozen=True)
class Line:
    """One row of the bill: what the environment has of it, its monthly cost, the prices used."""

    item: str
    what: str
    usd: float
    prices: tuple[str, ...]


def idle_bill(template: Mapping[str, Any]) -> list[Line]:
    """The environment's monthly cost at idle, one line per kind of always-on resource."""
    by_type: dict[str, list[Resource]] = defaultdict(list)
    for resource in template["Resources"].values():
        by_type[resource["Type"]].append(resource.get("Properties", {}))
    priced = {kind for _, kinds in _READERS for kind in kinds}
    unknown = sorted(set(by_type) - priced - set(FREE_AT_IDLE))
    if unknown:
        raise UnpricedError(
            f"the bill knows no {', '.join(unknown)}: price it in local/planner/bill.py, or list it in "
            "FREE_AT_IDLE with the reason it costs nothing at idle"
        )
    return [line for read, _ in _READERS if (line := read(by_type)) is not None]


def total(lines: Iterable[Line]) -> float:
    return sum(line.usd for line in lines)


def _monthly(key: str, quantity: float = 1, *, hourly: bool = True) -> float:
    return quantity * price(key).usd * (HOURS_PER_MONTH if hourly else 1)


def _msk(by_type: Mapping[str, list[Resource]]) -> Line | None:
    if by_type["AWS::MSK::ServerlessCluster"]:
        partitions = sum(int(topic["Partitions"]) for topic in by_type["Custom::KafkaTopic"])
        usd = _monthly("msk_serverless_cluster_hour") + _monthly("msk_serverless_partition_hour", partitions)
        return Line("MSK", f"Serverless, {partitions} partitions", usd,
                    ("msk_serverless_cluster_hour", "msk_serverless_partition_hour"))  # fmt: skip
    if not by_type["AWS::MSK::Cluster"]:
        return None
    (cluster,) = by_type["AWS::MSK::Cluster"]
    brokers, node = int(cluster["NumberOfBrokerNodes"]), cluster["BrokerNodeGroupInfo"]
    instance, volume = node["InstanceType"], int(node["StorageInfo"]["EBSStorageInfo"]["VolumeSize"])
    broker_key = f"msk_broker_hour:{instance}"
    usd = _monthly(broker_key, brokers) + _monthly("msk_storage_gb_month", brokers * volume, hourly=False)
    return Line("MSK", f"{brokers} x {instance}, {brokers} x {volume} GB", usd, (broker_key, "msk_storage_gb_month"))


def _pollers(by_type: Mapping[str, list[Resource]]) -> Line | None:
    """Provisioned mode bills EPUs: each holds 10 of the minimum pollers, and a mapping outside a
    poller group has EPUs of its own (the Lambda guide's "Provisioned mode pricing")."""
    grouped: dict[str, int] = defaultdict(int)
    alone: list[int] = []
    for mapping in by_type["AWS::Lambda::EventSourceMapping"]:
        if config := mapping.get("ProvisionedPollerConfig"):
            minimum = int(config.get("MinimumPollers", 1))
            if group := config.get("PollerGroupName"):
                grouped[group] += minimum
            else:
                alone.append(minimum)
    epus = sum(math.ceil(minimum / EVENT_POLLERS_PER_EPU) for minimum in [*grouped.values(), *alone])
    if not epus:
        return None
    pollers = sum(grouped.values()) + sum(alone)
    what = f"{pollers} minimum poller{'s' * (pollers > 1)}: {epus} EPU{'s' * (epus > 1)}"
    return Line("Lambda's MSK event source mapping, provisioned mode", what, _monthly("lambda_epu_hour", epus),
                ("lambda_epu_hour",))  # fmt: skip


def _cache(by_type: Mapping[str, list[Resource]]) -> Line | None:
    if by_type["AWS::ElastiCache::ServerlessCache"]:
        (cache,) = by_type["AWS::ElastiCache::ServerlessCache"]
        if cache["Engine"] != "valkey":
            raise UnpricedError(f"no price for ElastiCache Serverless for {cache['Engine']}")
        usd = _monthly("valkey_serverless_gb_hour", VALKEY_SERVERLESS_MIN_GB)
        return Line("ElastiCache Valkey", "Serverless, 100 MB minimum", usd, ("valkey_serverless_gb_hour",))
    if by_type["AWS::ElastiCache::ReplicationGroup"]:
        (group,) = by_type["AWS::ElastiCache::ReplicationGroup"]
        nodes = int(
            group.get("NumCacheClusters") or int(group["NumNodeGroups"]) * (1 + int(group["ReplicasPerNodeGroup"]))
        )
        key = f"valkey_node_hour:{group['CacheNodeType']}"
        return Line("ElastiCache Valkey", f"{nodes} x {group['CacheNodeType']}", _monthly(key, nodes), (key,))
    return None


def _database(by_type: Mapping[str, list[Resource]]) -> Line | None:
    if not by_type["AWS::RDS::DBInstance"]:
        return None
    (instance,) = by_type["AWS::RDS::DBInstance"]
    if instance.get("StorageType", "gp2") != "gp2":
        raise UnpricedError(f"no price for RDS storage {instance['StorageType']}")
    copies = 2 if instance.get("MultiAZ") else 1
    klass, storage = instance["DBInstanceClass"], int(instance["AllocatedStorage"])
    key = f"rds_postgres_hour:{klass}"
    usd = _monthly(key, copies) + _monthly("rds_gp2_gb_month", copies * storage, hourly=False)
    what = f"{klass}{' Multi-AZ' * (copies > 1)}, {storage} GB"
    return Line("RDS PostgreSQL", what, usd, (key, "rds_gp2_gb_month"))


def _proxy(by_type: Mapping[str, list[Resource]]) -> Line | None:
    if not by_type["AWS::RDS::DBProxy"]:
        return None
    (instance,) = by_type["AWS::RDS::DBInstance"]
    klass = instance["DBInstanceClass"]
    if klass not in INSTANCE_VCPUS:
        raise UnpricedError(f"the vCPUs of {klass} (RDS Proxy bills them): add it to INSTANCE_VCPUS")
    vcpus = max(RDS_PROXY_MIN_VCPUS, INSTANCE_VCPUS[klass]) * len(by_type["AWS::RDS::DBProxy"])
    return Line("RDS Proxy", f"{vcpus} vCPUs", _monthly("rds_proxy_vcpu_hour", vcpus), ("rds_proxy_vcpu_hour",))


def _endpoints(by_type: Mapping[str, list[Resource]]) -> Line | None:
    interfaces = [e for e in by_type["AWS::EC2::VPCEndpoint"] if e.get("VpcEndpointType") == "Interface"]
    if not interfaces:
        return None
    azs = sorted({len(endpoint["SubnetIds"]) for endpoint in interfaces})
    endpoint_azs = sum(len(endpoint["SubnetIds"]) for endpoint in interfaces)
    what = f"{len(interfaces)} x {'/'.join(map(str, azs))} AZ{'s' * (azs != [1])}"
    return Line("VPC interface endpoints", what, _monthly("interface_endpoint_az_hour", endpoint_azs),
                ("interface_endpoint_az_hour",))  # fmt: skip


def _waf(by_type: Mapping[str, list[Resource]]) -> Line | None:
    acls = by_type["AWS::WAFv2::WebACL"]
    if not acls:
        return None
    rules = sum(len(acl.get("Rules", [])) for acl in acls)
    usd = _monthly("waf_web_acl_month", len(acls), hourly=False) + _monthly("waf_rule_month", rules, hourly=False)
    return Line("WAF", f"{len(acls)} web ACL, {rules} rules", usd, ("waf_web_acl_month", "waf_rule_month"))


def _bot_control(by_type: Mapping[str, list[Resource]]) -> Line | None:
    """Bot Control bills a month per web ACL that uses it at idle, and each request it inspects
    (the price column shows both; the idle bill counts the month)."""
    levels = [
        config["AWSManagedRulesBotControlRuleSet"]["InspectionLevel"]
        for acl in by_type["AWS::WAFv2::WebACL"]
        for rule in acl.get("Rules", [])
        if (group := rule.get("Statement", {}).get("ManagedRuleGroupStatement", {})).get("Name")
        == "AWSManagedRulesBotControlRuleSet"
        for config in group.get("ManagedRuleGroupConfigs", [])
    ]
    if not levels:
        return None
    usd = _monthly("waf_bot_control_month", len(levels), hourly=False)
    what = ", ".join(f"{level.lower()} on POST /coupon-issues" for level in levels)
    return Line(
        "WAF Bot Control",
        what,
        usd,
        ("waf_bot_control_month", *(f"waf_bot_control_million:{level}" for level in levels)),
    )


def _cloudwatch(by_type: Mapping[str, list[Resource]]) -> Line | None:
    """An alarm on metric math bills each metric it reads (CloudWatch pricing, Alarms)."""
    alarms = by_type["AWS::CloudWatch::Alarm"]
    metrics = sum(sum(1 for q in a["Metrics"] if "MetricStat" in q) if "Metrics" in a else 1 for a in alarms)
    dashboards = len(by_type["AWS::CloudWatch::Dashboard"])
    if not metrics and not dashboards:
        return None
    usd = _monthly("cloudwatch_alarm_metric_month", metrics, hourly=False) + _monthly(
        "cloudwatch_dashboard_month", dashboards, hourly=False
    )
    what = f"{len(alarms)} alarms ({metrics} metrics), {dashboards} dashboard{'s' * (dashboards != 1)}"
    return Line("CloudWatch", what, usd, ("cloudwatch_alarm_metric_month", "cloudwatch_dashboard_month"))


def _keys_and_secrets(by_type: Mapping[str, list[Resource]]) -> Line | None:
    keys, secrets = len(by_type["AWS::KMS::Key"]), len(by_type["AWS::SecretsManager::Secret"])
    if not keys and not secrets:
        return None
    usd = _monthly("kms_key_month", keys, hourly=False) + _monthly("secret_month", secrets, hourly=False)
    counted = f"{keys} key{'s' * (keys != 1)}, {secrets} secret{'s' * (secrets != 1)}"
    return Line("KMS, Secrets Manager", counted, usd, ("kms_key_month", "secret_month"))


# Each reader, in the bill's order, with the resource types it prices.
_READERS: tuple[tuple[Callable[[Mapping[str, list[Resource]]], Line | None], tuple[str, ...]], ...] = (
    (_msk, ("AWS::MSK::ServerlessCluster", "AWS::MSK::Cluster")),
    (_pollers, ("AWS::Lambda::EventSourceMapping",)),
    (_cache, ("AWS::ElastiCache::ServerlessCache", "AWS::ElastiCache::ReplicationGroup")),
    (_database, ("AWS::RDS::DBInstance",)),
    (_proxy, ("AWS::RDS::DBProxy",)),
    (_endpoints, ("AWS::EC2::VPCEndpoint",)),
    (_waf, ("AWS::WAFv2::WebACL",)),
    (_bot_control, ("AWS::WAFv2::WebACL",)),
    (_cloudwatch, ("AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard")),
    (_keys_and_secrets, ("AWS::KMS::Key", "AWS::SecretsManager::Secret")),
)


def markdown(bills: Mapping[str, list[Line]]) -> str:
    """The bills of several environments side by side: one row per item, the prices it used,
    each linked to its page, and the totals."""
    envs = list(bills)
    # in the readers' order: the environment with the most lines first, then what others add
    fullest_first = sorted(bills.values(), key=len, reverse=True)
    items = list(dict.fromkeys(line.item for lines in fullest_first for line in lines))
    head = f"| item | {' | '.join(f'{env} (idle)' for env in envs)} | price used |"
    rows = [head, "|---|" + "---|" * len(envs) + "---|"]
    for item in items:
        found = {env: next((line for line in bills[env] if line.item == item), None) for env in envs}
        cells = [f"{line.what}: ${line.usd:,.0f}" if line else "-" for line in found.values()]
        used = dict.fromkeys(key for line in found.values() if line for key in line.prices)
        shown = ", ".join(f"[{PRICES[key].shown}]({PRICES[key].page})" for key in sorted(used, key=list(PRICES).index))
        rows.append(f"| {item} | {' | '.join(cells)} | {shown} |")
    totals = " | ".join(f"**${total(bills[env]):,.0f}**" for env in envs)
    rows.append(f"| **total at idle, a month** | {totals} | |")
    return "\n".join(rows)
