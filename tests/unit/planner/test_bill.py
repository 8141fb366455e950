"""The idle bill of hand-made templates: what it prices, how, and what it refuses to guess."""

from __future__ import annotations

from typing import Any

import pytest

from local.planner.bill import FREE_AT_IDLE, idle_bill, markdown, total
from local.planner.prices import HOURS_PER_MONTH, PRICES, UnpricedError


def template(*resources: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"Resources": {f"R{i}": {"Type": kind, "Properties": props} for i, (kind, props) in enumerate(resources)}}


def kafka_mapping(minimum: int, group: str | None = None) -> tuple[str, dict[str, Any]]:
    config: dict[str, Any] = {"MinimumPollers": minimum, "MaximumPollers": minimum + 1}
    if group:
        config["PollerGroupName"] = group
    return "AWS::Lambda::EventSourceMapping", {"ProvisionedPollerConfig": config}


def only(bill, item):
    (line,) = [line for line in bill if line.item == item]
    return line


@pytest.mark.parametrize(
    ("mappings", "epus"),
    [
        ([kafka_mapping(1)], 1),
        ([kafka_mapping(10)], 1),
        ([kafka_mapping(11)], 2),  # 10 pollers an EPU
        ([kafka_mapping(1), kafka_mapping(1)], 2),  # a mapping outside a group has its own EPU
        ([kafka_mapping(1, "g"), kafka_mapping(1, "g")], 1),  # a group shares them
        ([("AWS::Lambda::EventSourceMapping", {})], 0),  # on-demand mode (the DLQ's SQS mapping): no EPU
    ],
)
def test_provisioned_pollers_bill_an_epu_per_ten_minimum_pollers_of_a_mapping_or_group(mappings, epus):
    bill = idle_bill(template(*mappings))
    billed = [line for line in bill if "provisioned mode" in line.item]
    assert sum(line.usd for line in billed) == pytest.approx(epus * 0.185 * HOURS_PER_MONTH)


def test_an_alarm_on_metric_math_bills_each_metric_it_reads():
    math_alarm = {
        "Metrics": [{"Id": "a", "MetricStat": {}}, {"Id": "b", "MetricStat": {}}, {"Id": "e", "Expression": "a/b"}]
    }
    bill = idle_bill(template(("AWS::CloudWatch::Alarm", {}), ("AWS::CloudWatch::Alarm", math_alarm)))
    assert only(bill, "CloudWatch").usd == pytest.approx(3 * 0.10)


def test_multi_az_doubles_the_instance_and_its_storage():
    single = {"DBInstanceClass": "db.t4g.micro", "AllocatedStorage": "20", "StorageType": "gp2", "MultiAZ": False}
    one = only(idle_bill(template(("AWS::RDS::DBInstance", single))), "RDS PostgreSQL").usd
    two = only(idle_bill(template(("AWS::RDS::DBInstance", {**single, "MultiAZ": True}))), "RDS PostgreSQL").usd
    assert one == pytest.approx(0.016 * HOURS_PER_MONTH + 20 * 0.115)
    assert two == pytest.approx(2 * one)


def test_serverless_msk_bills_the_cluster_and_every_topics_partitions():
    bill = idle_bill(template(("AWS::MSK::ServerlessCluster", {}), ("Custom::KafkaTopic", {"Partitions": 6}),
                              ("Custom::KafkaTopic", {"Partitions": "6"})))  # fmt: skip
    assert only(bill, "MSK").usd == pytest.approx((0.75 + 12 * 0.0015) * HOURS_PER_MONTH)


@pytest.mark.parametrize(
    ("resource", "named"),
    [
        (("AWS::EC2::NatGateway", {}), "AWS::EC2::NatGateway"),  # a type the bill does not know
        (("AWS::MSK::Cluster", {"NumberOfBrokerNodes": 3, "BrokerNodeGroupInfo": {"InstanceType": "kafka.m5.large",
            "StorageInfo": {"EBSStorageInfo": {"VolumeSize": 10}}}}), "kafka.m5.large"),
        (("AWS::ElastiCache::ServerlessCache", {"Engine": "redis"}), "redis"),
        (("AWS::RDS::DBInstance", {"DBInstanceClass": "db.t4g.micro", "AllocatedStorage": "20",
                                   "StorageType": "io2"}), "io2"),
    ],
)  # fmt: skip
def test_what_the_bill_has_no_price_for_stops_it_by_name(resource, named):
    with pytest.raises(UnpricedError, match=named):
        idle_bill(template(resource))


def test_what_costs_nothing_at_idle_bills_nothing():
    assert idle_bill(template(*((kind, {}) for kind in FREE_AT_IDLE))) == []


def test_the_table_sets_environments_side_by_side_and_links_each_price_to_its_page():
    endpoint = ("AWS::EC2::VPCEndpoint", {"VpcEndpointType": "Interface", "SubnetIds": ["a", "b"]})
    acl = ("AWS::WAFv2::WebACL", {"Rules": [{}, {}]})
    bills = {"dev": idle_bill(template(endpoint)), "prod": idle_bill(template(endpoint, acl))}
    rows = markdown(bills).splitlines()
    assert rows[0] == "| item | dev (idle) | prod (idle) | price used |"
    assert rows[2].startswith("| VPC interface endpoints | 1 x 2 AZs: $15 | 1 x 2 AZs: $15 | [$0.01/endpoint-AZ-h](")
    assert rows[3].startswith("| WAF | - | 1 web ACL, 2 rules: $7 |")
    assert rows[-1] == f"| **total at idle, a month** | **${total(bills['dev']):,.0f}** | **$22** | |"
    assert all(price.page.startswith("https://aws.amazon.com/") for price in PRICES.values())
