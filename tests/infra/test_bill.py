"""docs/deploy.md's bill is the one the templates give: every resource type priced or free at
idle, and the table as `make bill` writes it."""

from __future__ import annotations

import pytest

from local.planner.bill import idle_bill, markdown, total
from local.tools.bill import DEPLOY_MD, END, START, aws_environments


@pytest.fixture(scope="module")
def bills(request):
    return {env: idle_bill(request.getfixturevalue(env).to_json()) for env in aws_environments()}


def test_every_aws_environment_of_cdk_json_is_synthesized_here():
    assert aws_environments() == ["dev", "small", "prod"]


def test_the_documented_bill_is_the_templates_bill(bills):
    documented = DEPLOY_MD.read_text().split(START)[1].split(END)[0].strip()
    assert documented == markdown(bills), "run make bill and commit docs/deploy.md"


def test_every_always_on_item_of_each_environment_is_billed(bills):
    items = {env: {line.item for line in lines} for env, lines in bills.items()}
    always = {"MSK", "Lambda's MSK event source mapping, provisioned mode", "ElastiCache Valkey", "RDS PostgreSQL",
              "RDS Proxy", "VPC interface endpoints", "CloudWatch", "KMS, Secrets Manager"}  # fmt: skip
    assert all(always <= found for found in items.values()), items
    assert "WAF" in items["prod"]


def test_small_costs_less_than_dev_for_the_brokers_and_the_endpoints_it_changes(bills):
    dev, small = ({line.item: line for line in bills[env]} for env in ("dev", "small"))
    assert small["MSK"].usd < dev["MSK"].usd / 5
    assert small["VPC interface endpoints"].usd == pytest.approx(dev["VPC interface endpoints"].usd / 2)
    assert total(bills["small"]) < total(bills["dev"]) / 2
