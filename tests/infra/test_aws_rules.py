"""Rules AWS applies when it deploys or runs the templates, each checked on the synthesized ones.

Every test names the documentation the rule comes from: a template that breaks one would not
deploy, or would fail every produce once deployed.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from app import OFFLINE_ALARM_EMAILS, build, offline_context
from aws_cdk.assertions import Annotations, Match, Template

from coupon_cdk.config import (
    BUILDER_CONCURRENCY,
    CONTEXT_KEY,
    MSK_IAM_CONNECTIONS,
    MSK_IAM_CONNECTIONS_RAISED,
    REBUILD_CONCURRENCY,
    RELAY_CONCURRENCY,
    CdkContextError,
    cdk_json_context,
    iam_connections,
    load,
)
from coupon_core.observability import FROM_MEMORY, MEMORY_REFRESH
from local.planner.bill import idle_bill
from local.planner.sale_plan import reserved_concurrency
from tests.infra.conftest import ASSEMBLIES
from tests.infra.template_support import actions, function_id, resources, resources_of

ENVIRONMENTS = ("dev", "small", "prod")
CONFIG = {env: load(cdk_json_context()[CONTEXT_KEY], env, alarm_emails=OFFLINE_ALARM_EMAILS) for env in ENVIRONMENTS}


def _variant() -> dict[str, Any]:
    values = offline_context("prod")
    prod = values[CONTEXT_KEY]["prod"]
    prod["alarmEmails"] = ["oncall@example.com"]
    prod["api"]["botControl"] = "targeted"
    prod["concurrency"]["intake"] = 3000
    prod["concurrency"]["warmup"] = {
        "starts": "at(2026-12-01T11:45:00)",
        "ends": "at(2026-12-01T13:00:00)",
        "provisioned": 300,
    }
    return values


VARIANT = _variant()  # prod with what cdk.json leaves off switched on, each option's test below


@pytest.fixture(scope="module")
def prod_variant(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """``VARIANT`` synthesized once: alarm subscribers listed in cdk.json, Bot Control, an intake
    of 3,000 (its brokers' connection limit raised) and a scheduled warm-up."""
    outdir = tmp_path_factory.mktemp("cdk-prod-variant")
    return Template.from_stack(build(cdk.App(context=copy.deepcopy(VARIANT), outdir=str(outdir))))


def only(template: Template, kind: str) -> tuple[str, dict[str, Any]]:
    (found,) = resources(template, kind).items()
    return found


def depends_on(template: Template, logical_id: str, prerequisite: str) -> bool:
    body = template.to_json()["Resources"]
    todo, seen = [logical_id], set()
    while todo:
        current = todo.pop()
        resource = body[current]
        referenced = {other for other in body if f'"{other}"' in json.dumps(resource.get("Properties", {}))}
        for other in set(resource.get("DependsOn", [])) | referenced:
            if other == prerequisite:
                return True
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return False


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_topic_is_made_with_the_kafka_protocol_before_anything_uses_it(env, request):
    """MSK Developer Guide, "Create topics in an Amazon MSK cluster", and the CloudFormation
    reference of AWS::MSK::Topic: the MSK topic API serves MSK Provisioned (Kafka 3.6 or later)
    only; dev runs MSK Serverless. MSK "Common use cases": creating a topic needs CreateTopic."""
    template = request.getfixturevalue(env)
    assert not resources(template, "AWS::MSK::Topic")
    topics = {t["Properties"]["TopicName"]: (i, t) for i, t in resources(template, "Custom::KafkaTopic").items()}
    assert set(topics) == {"coupon.issue.v1", "coupon.events.v1"}
    kafka = CONFIG[env].kafka
    assert kafka is not None
    for _, topic in topics.values():
        assert topic["Properties"]["Partitions"] == str(kafka.partitions)
        assert topic["Properties"]["ReplicationFactor"] == (
            "-1" if kafka.kind == "serverless" else str(kafka.replication_factor)
        )
    maker = resources(template, "AWS::Lambda::Function")[function_id(template, "topic")]
    assert maker["Properties"]["VpcConfig"]["SubnetIds"]  # the brokers are reachable from the VPC only
    assert {"kafka-cluster:Connect", "kafka-cluster:CreateTopic", "kafka-cluster:AlterTopic"} <= actions(
        template, "topic"
    )
    mapping_id, _ = next(
        (i, m) for i, m in resources(template, "AWS::Lambda::EventSourceMapping").items() if "Topics" in m["Properties"]
    )
    for consumer in (mapping_id, function_id(template, "intake")):
        assert depends_on(template, consumer, topics["coupon.issue.v1"][0]), consumer
    assert depends_on(template, function_id(template, "relay"), topics["coupon.events.v1"][0])


def test_prod_has_a_broker_per_replica_and_writes_survive_one_broker_down(prod):
    """MSK Developer Guide, "Best practices for Standard brokers": replication factor 3 and
    min.insync.replicas = RF - 1, brokers in three AZs. A stack without an account and region
    gets two AZs from CDK whatever max_azs says (CDK Vpc reference, maxAzs)."""
    _, cluster = only(prod, "AWS::MSK::Cluster")
    brokers = cluster["Properties"]["NumberOfBrokerNodes"]
    subnets = cluster["Properties"]["BrokerNodeGroupInfo"]["ClientSubnets"]
    assert len(subnets) == 3
    assert brokers % len(subnets) == 0  # MSK spreads brokers evenly over the client subnets
    configuration_id, configuration = only(prod, "AWS::MSK::Configuration")
    assert configuration_id in json.dumps(cluster["Properties"]["ConfigurationInfo"])
    server = dict(line.split("=", 1) for line in configuration["Properties"]["ServerProperties"].splitlines())
    replicas, quorum = int(server["default.replication.factor"]), int(server["min.insync.replicas"])
    for topic in resources(prod, "Custom::KafkaTopic").values():
        assert int(topic["Properties"]["ReplicationFactor"]) == replicas <= brokers
    assert 2 <= quorum < replicas
    assert server["auto.create.topics.enable"] == "false"


def test_small_runs_two_t3_brokers_and_each_interface_endpoint_in_one_az(small, dev):
    """MSK Developer Guide, "Broker types": kafka.t3.small is a Standard broker; the brokers are
    spread evenly over the client subnets, one per AZ here. PrivateLink: an interface endpoint
    has a network interface in each subnet it is given, billed per endpoint and AZ."""
    _, cluster = only(small, "AWS::MSK::Cluster")
    node = cluster["Properties"]["BrokerNodeGroupInfo"]
    assert (cluster["Properties"]["NumberOfBrokerNodes"], len(node["ClientSubnets"])) == (2, 2)
    assert (node["InstanceType"], node["StorageInfo"]["EBSStorageInfo"]["VolumeSize"]) == ("kafka.t3.small", 20)
    _, instance = only(small, "AWS::RDS::DBInstance")
    assert instance["Properties"]["AllocatedStorage"] == "20"
    for template, azs in ((small, 1), (dev, 2)):
        endpoints = resources(template, "AWS::EC2::VPCEndpoint").values()
        assert len(endpoints) == 6
        assert {len(endpoint["Properties"]["SubnetIds"]) for endpoint in endpoints} == {azs}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"availabilityZones": 2}, "replicationFactor 3 exceeds the 2 brokers"),
        ({"kafka": {"minInsyncReplicas": 3}}, "minInsyncReplicas must be at least 1 and below replicationFactor 3"),
        (
            {"concurrency": {"intake": 3272}},
            r"intake 3272 could hold 3301 IAM connections to a broker with the other clients'; it takes 3300",
        ),
        ({"concurrency": {"dlqMapping": 1}}, "dlqMapping must be at least 2"),
        ({"endpointAzs": 4}, "endpointAzs must be 1 to availabilityZones 3, got 4"),
        ({"endpointAzs": 0}, r"^prod\.endpointAzs must be at least 1, got 0$"),
        ({"availabilityZones": 4}, r"^prod\.availabilityZones must be at most 3, got 4$"),
        ({"database": {"storageGb": 19}}, r"^prod\.database\.storageGb must be at least 20, got 19$"),
        (
            {"api": {"publicAuth": "none", "userIdSource": "body", "wafRequestsPer5MinPerCaller": 0}},
            r"^prod: api\.publicAuth 'none' is for the local environment only",
        ),
        ({"local": {"redisUrl": "rediss://x"}}, r"^prod\.local is not a known field"),
        ({"kafka": {"brokerStorageGb": 0}}, "brokerStorageGb must be at least 1, got 0"),
        ({"api": {"publicAuth": "none"}}, "userIdSource 'claims' goes with publicAuth 'cognito'"),
        ({"api": {"wafRequestsPer5Min": 0}}, "a per-caller rate and Bot Control are rules of the web ACL"),
        (
            {"api": {"userIdSource": "body", "publicAuth": "iam"}},
            "wafRequestsPer5MinPerCaller counts a caller by its token",
        ),
        ({"api": {"botControl": "always"}}, "botControl"),
        ({"cache": {"waitReplicas": 2}}, r"waitReplicas must be below replicas \(2\)"),
        ({"cache": {"replicas": 6}}, "replicas must be 1 to 5"),
        ({"cache": {"kind": "serverless"}}, "replicas and waitReplicas are a replication group's"),
        ({"cache": {"replicas": 3, "waitReplicas": 1}}, "need 4 AZs, the environment has 3"),
        (
            {"concurrency": {"warmup": {"starts": "at(2026-12-01T11:45:00)", "ends": "soon", "provisioned": 10}}},
            "warmup.ends must be at",
        ),
        (
            {"concurrency": {"warmup": {"starts": "cron(45 11 * * ? *)", "ends": "rate(1 day)", "provisioned": 1001}}},
            "warmup.provisioned must be 1 to the intake's 1000",
        ),
    ],
)
def test_a_configuration_aws_would_refuse_is_refused_at_synth(change, message):
    environments = copy.deepcopy(cdk_json_context()[CONTEXT_KEY])
    for key, value in change.items():
        target = environments["prod"]
        target[key] = {**target.get(key, {}), **value} if isinstance(value, dict) else value
    with pytest.raises(CdkContextError, match=message):
        load(environments, "prod", alarm_emails=OFFLINE_ALARM_EMAILS)


def test_an_aws_environment_may_leave_the_write_limit_out_and_serverless_brokers_their_storage():
    """Without processingLimit the worker writes as fast as it can; MSK Serverless has no broker
    storage to size. A list of alarm subscribers that is not a list is named, with -c or without."""
    environments = copy.deepcopy(cdk_json_context()[CONTEXT_KEY])
    del environments["prod"]["processingLimit"]
    environments["dev"]["kafka"]["brokerStorageGb"] = 0
    assert load(environments, "prod", alarm_emails=OFFLINE_ALARM_EMAILS).processing_limit is None
    assert environments["dev"]["kafka"]["kind"] == "serverless"
    assert load(environments, "dev").kafka.broker_storage_gb == 0
    environments["prod"]["alarmEmails"] = None
    with pytest.raises(CdkContextError, match=r"^prod\.alarmEmails must be a list, got None$"):
        load(environments, "prod", alarm_emails=OFFLINE_ALARM_EMAILS)


def test_an_aws_environment_without_an_account_and_region_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("CDK_DEFAULT_ACCOUNT", raising=False)
    monkeypatch.delenv("CDK_DEFAULT_REGION", raising=False)
    values = {k: v for k, v in offline_context("prod").items() if k not in ("account", "region")}
    with pytest.raises(CdkContextError, match="no target account and region"):
        build(cdk.App(context=values, outdir=str(tmp_path)))


def test_two_environments_in_one_account_and_region_name_nothing_alike(dev, prod):
    """CloudFormation: a named resource's name is unique in its account and region; API Gateway's
    account settings (AWS::ApiGateway::Account) are one per region, so they live in a stack of
    their own that both environments share."""
    physical = {"FunctionName", "DBProxyName", "ClusterName", "ServerlessCacheName", "ReplicationGroupId"}

    def names(template: Template) -> set[str]:
        return {
            value
            for resource in template.to_json()["Resources"].values()
            for key, value in resource.get("Properties", {}).items()
            if (key in physical or (key, resource["Type"]) == ("Name", "AWS::MSK::Configuration"))
            and isinstance(value, str)
        }

    assert names(dev)
    assert not names(dev) & names(prod)
    for template in (dev, prod):
        assert not resources(template, "AWS::ApiGateway::Account")
    shared = Template.from_json(
        json.loads((ASSEMBLIES["prod"] / "Coupons-ApiGatewayAccount.template.json").read_text())
    )
    _, account = only(shared, "AWS::ApiGateway::Account")
    assert "CloudWatchRoleArn" in account["Properties"]


def test_every_recommended_feature_flag_is_set(dev):
    """CDK Developer Guide, "Feature flags": `cdk init` writes the recommended flags of its
    version; an unset flag keeps the behaviour of an old project (`cdk synth` counts them)."""
    manifest = json.loads((ASSEMBLIES["dev"] / "manifest.json").read_text())
    report = manifest["artifacts"]["aws-cdk-lib/feature-flag-report"]["properties"]["flags"]
    unset = [
        flag
        for flag, state in report.items()
        if "userValue" not in state
        and "recommendedValue" in state
        and state.get("unconfiguredBehavesLike", {}).get("v2", False) != state["recommendedValue"]
    ]
    assert unset == []


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_migration_runs_before_anything_that_uses_the_schema(env, request):
    """CDK API reference, triggers.Trigger (executeBefore): CloudFormation updates a resource
    after the ones it depends on, on a first deploy and on every upgrade."""
    template = request.getfixturevalue(env)
    trigger_id, _ = only(template, "Custom::Trigger")
    users = [function_id(template, name) for name in ("intake", "worker", "dlq", "builder", "rebuild")]
    users += list(resources(template, "AWS::Lambda::EventSourceMapping"))
    users += list(resources(template, "AWS::ApiGateway::Deployment"))
    assert len(users) == 8
    for user in users:
        assert depends_on(template, user, trigger_id), user


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_intake_may_produce_idempotently(env, request):
    """MSK Developer Guide, "Common use cases for client authorization policy": producing
    idempotently (kafka-python's default with acks=all) needs kafka-cluster:WriteDataIdempotently
    on the cluster, besides WriteData on the topic."""
    template = request.getfixturevalue(env)
    (granted,) = resources_of(template, "intake", "kafka-cluster:WriteDataIdempotently")
    assert "Kafka" in granted
    assert "topic/" not in granted
    assert "topic/" in " ".join(resources_of(template, "intake", "kafka-cluster:WriteData"))


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_msk_mapping_role_has_the_documented_minimum(env, request):
    """Lambda Developer Guide, "Configuring Lambda permissions for Amazon MSK event source
    mappings": the AWSLambdaMSKExecutionRole actions (kafka:DescribeClusterV2 serves both kinds)."""
    template = request.getfixturevalue(env)
    minimum = {
        "kafka:DescribeClusterV2", "kafka:GetBootstrapBrokers", "ec2:CreateNetworkInterface",
        "ec2:DescribeNetworkInterfaces", "ec2:DescribeVpcs", "ec2:DeleteNetworkInterface", "ec2:DescribeSubnets",
        "ec2:DescribeSecurityGroups", "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents",
    }  # fmt: skip
    assert minimum <= actions(template, "worker")


def test_prod_users_sign_in_with_an_app_client_and_carry_a_numeric_user_id(prod):
    """Cognito Developer Guide, "Understanding the identity token": ``sub`` is a UUID; a custom
    attribute arrives as the ``custom:<name>`` claim; an app client is how users sign in. The
    attribute is immutable and the client cannot write it: users cannot choose their id."""
    _, pool = only(prod, "AWS::Cognito::UserPool")
    (attribute,) = [a for a in pool["Properties"]["Schema"] if a["Name"] == "user_id"]
    assert (attribute["AttributeDataType"], attribute["Mutable"]) == ("String", False)
    _, client = only(prod, "AWS::Cognito::UserPoolClient")
    assert "ALLOW_USER_SRP_AUTH" in client["Properties"]["ExplicitAuthFlows"]
    assert client["Properties"]["GenerateSecret"] is False
    assert "custom:user_id" in client["Properties"]["ReadAttributes"]
    assert "custom:user_id" not in client["Properties"]["WriteAttributes"]
    intake = resources(prod, "AWS::Lambda::Function")[function_id(prod, "intake")]
    variables = intake["Properties"]["Environment"]["Variables"]
    assert (variables["USER_ID_SOURCE"], variables["USER_ID_CLAIM"]) == ("claims", "custom:user_id")


def test_alarms_reach_the_configured_subscribers_through_the_encrypted_topic(prod_variant):
    """SNS Developer Guide, "Encryption at rest" (key policy for AWS service event sources):
    CloudWatch publishes to an encrypted topic only with kms:Decrypt and kms:GenerateDataKey*."""
    template = prod_variant
    _, key = only(template, "AWS::KMS::Key")
    allowed = [
        set([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if s.get("Principal", {}).get("Service") == "cloudwatch.amazonaws.com"
    ]
    assert any({"kms:Decrypt", "kms:GenerateDataKey*"} <= granted for granted in allowed)
    _, subscription = only(template, "AWS::SNS::Subscription")
    assert (subscription["Properties"]["Protocol"], subscription["Properties"]["Endpoint"]) == (
        "email",
        "oncall@example.com",
    )


def test_prod_refuses_to_deploy_alarms_that_reach_nobody_and_dev_says_so(tmp_path):
    """CloudWatch alarms act through their SNS topic; a topic without a subscription delivers to
    no one (SNS Developer Guide, "Subscribing to a topic"). prod requires one, from cdk.json or
    as a deploy parameter; dev warns in the synth output."""
    unsubscribed = {name: value for name, value in offline_context("prod").items() if name != "alarmEmails"}
    with pytest.raises(CdkContextError, match=r"prod sends its alarms to nobody: .*-c alarmEmails="):
        build(cdk.App(context=unsubscribed, outdir=str(tmp_path / "prod")))
    with pytest.raises(CdkContextError, match="alarmEmails must be e-mail addresses"):
        build(cdk.App(context={**unsubscribed, "alarmEmails": "oncall"}, outdir=str(tmp_path / "bad")))

    dev_context = {name: value for name, value in offline_context("dev").items() if name != "alarmEmails"}
    dev = build(cdk.App(context=dev_context, outdir=str(tmp_path / "dev")))
    warnings = Annotations.from_stack(dev).find_warning("*", Match.string_like_regexp("alarms reach nobody"))
    assert warnings
    assert not resources(Template.from_stack(dev), "AWS::SNS::Subscription")


def test_a_deploy_parameter_subscribes_to_the_alarms(prod):
    (subscription,) = resources(prod, "AWS::SNS::Subscription").values()
    assert (subscription["Properties"]["Protocol"], subscription["Properties"]["Endpoint"]) == (
        "email",
        OFFLINE_ALARM_EMAILS,
    )


def test_valkey_never_evicts_a_reservation(dev, prod):
    """ElastiCache User Guide, "Valkey and Redis OSS parameters": the default maxmemory-policy
    volatile-lru evicts keys with a TTL, and every key here has one. ElastiCache Serverless
    evicts only at a data storage maximum, and dev sets none."""
    _, group = only(prod, "AWS::ElastiCache::ReplicationGroup")
    parameters_id, parameters = only(prod, "AWS::ElastiCache::ParameterGroup")
    assert group["Properties"]["CacheParameterGroupName"] == {"Ref": parameters_id}
    assert parameters["Properties"]["Properties"] == {"maxmemory-policy": "noeviction"}
    assert parameters["Properties"]["CacheParameterGroupFamily"] == "valkey8"
    _, serverless = only(dev, "AWS::ElastiCache::ServerlessCache")
    assert "CacheUsageLimits" not in serverless["Properties"]


def test_a_prod_success_waits_for_one_of_two_replicas_in_other_azs(prod, dev):
    """ElastiCache User Guide, "Replication: Valkey and Redis OSS": a replication group of a
    primary and up to 5 replicas, Multi-AZ with automatic failover promoting a replica, whose
    replication is asynchronous; Valkey's WAIT blocks until that many replicas acknowledged the
    writes. The intake waits for 1 of prod's 2 replicas, so a replica down stops no sale."""
    _, group = only(prod, "AWS::ElastiCache::ReplicationGroup")
    props = group["Properties"]
    assert (props["NumCacheClusters"], props["AutomaticFailoverEnabled"], props["MultiAZEnabled"]) == (3, True, True)
    for template, waits in ((prod, "1"), (dev, "0")):
        intake = resources(template, "AWS::Lambda::Function")[function_id(template, "intake")]
        assert intake["Properties"]["Environment"]["Variables"]["REDIS_WAIT_REPLICAS"] == waits


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_operators_see_lag_dead_letters_the_api_and_the_data_stores(env, request):
    """Lambda Developer Guide, "Event source mapping metrics" (MetricsConfig) and the metric
    pages of SQS, API Gateway, RDS Proxy, ElastiCache and MSK; thresholds span several periods
    so that one failed request pages nobody."""
    template = request.getfixturevalue(env)
    mapping = next(
        m for m in resources(template, "AWS::Lambda::EventSourceMapping").values() if "Topics" in m["Properties"]
    )
    assert set(mapping["Properties"]["MetricsConfig"]["Metrics"]) == {"EventCount", "ErrorCount", "KafkaMetrics"}
    alarms = resources(template, "AWS::CloudWatch::Alarm").values()
    metrics = {a["Properties"]["MetricName"] for a in alarms}
    expected = {
        "OffsetLag", "ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage", "5XXError", "Latency",
        "ApiThrottled", "CPUUtilization", "DatabaseConnections", "DatabaseConnectionsBorrowLatency",
    }  # fmt: skip
    cache, kafka = CONFIG[env].cache, CONFIG[env].kafka
    assert cache is not None
    assert kafka is not None
    if cache.kind == "serverless":
        expected |= {"ThrottledCmds"}
    else:
        expected |= {"EngineCPUUtilization", "DatabaseMemoryUsagePercentage"}
    expected |= {"CpuUser", "KafkaDataLogsDiskUsed"} if kafka.kind == "provisioned" else set()
    assert expected <= metrics
    for alarm in alarms:
        props = alarm["Properties"]
        if props["MetricName"] in ("Errors", "Throttles", "5XXError"):
            assert props["Threshold"] > 1, props["AlarmDescription"]
            assert props["EvaluationPeriods"] > 1, props["AlarmDescription"]
    _, dashboard = only(template, "AWS::CloudWatch::Dashboard")
    parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
    body = "".join(part for part in parts if isinstance(part, str))  # the JSON, but for the alarms' ARNs
    assert f'"{FROM_MEMORY}"' in body, "the dashboard shows the answers given from the intake's memory"
    assert f'"{MEMORY_REFRESH}"' in body, "and the memory's refreshes, by the names the intake counts them"
    _, throttled = only(template, "AWS::Logs::MetricFilter")
    assert "429" in throttled["Properties"]["FilterPattern"]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_worker_gets_the_environments_processing_limit(env, request):
    template = request.getfixturevalue(env)
    limit = CONFIG[env].processing_limit
    assert limit is not None
    worker = resources(template, "AWS::Lambda::Function")[function_id(template, "worker")]
    variables = worker["Properties"]["Environment"]["Variables"]
    assert (variables["WORKER_WRITES_PER_SECOND"], variables["WORKER_WRITE_BURST"]) == (
        str(limit.writes_per_second),
        str(limit.burst),
    )


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_concurrency_is_bounded_where_it_must_be(env, request):
    """Lambda Developer Guide, "Configuring reserved concurrency" and "Configuring maximum
    concurrency for Amazon SQS event sources" (2 to 1000); the MSK quota page (IAM connections
    per broker) for the intake, sized in docs/deploy.md."""
    template = request.getfixturevalue(env)
    config = CONFIG[env]
    assert config.concurrency is not None
    assert config.kafka is not None
    functions = resources(template, "AWS::Lambda::Function")

    def reserved(name: str) -> int:
        return functions[function_id(template, name)]["Properties"]["ReservedConcurrentExecutions"]

    assert reserved("intake") == config.concurrency.intake
    assert reserved("coupons") == config.concurrency.coupons
    assert reserved("worker") == config.kafka.partitions
    assert reserved("dlq") == config.concurrency.dlq_handler
    assert (reserved("builder"), reserved("rebuild"), reserved("relay")) == (
        BUILDER_CONCURRENCY,
        REBUILD_CONCURRENCY,
        RELAY_CONCURRENCY,
    )
    invokes = resources(template, "AWS::Lambda::EventInvokeConfig").values()
    assert len(invokes) == 2
    assert all(i["Properties"]["MaximumRetryAttempts"] == 0 for i in invokes)  # an overlapping run is dropped
    sqs_mapping = next(
        m for m in resources(template, "AWS::Lambda::EventSourceMapping").values() if "Topics" not in m["Properties"]
    )
    assert sqs_mapping["Properties"]["ScalingConfig"]["MaximumConcurrency"] == config.concurrency.dlq_mapping
    # what make plan counts against the account's concurrency, which must keep 100 unreserved
    every = [f["Properties"].get("ReservedConcurrentExecutions", 0) for f in functions.values()]
    assert sum(every) == reserved_concurrency(config)


def test_prod_has_a_web_acl_and_dev_refuses_anonymous_callers(dev, prod):
    """AWS WAF Developer Guide, "Rate-based rule statement" and "Baseline rule groups"
    (AWSManagedRulesCommonRuleSet, and AWSManagedRulesKnownBadInputsRuleSet, whose Log4JRCE
    rules block Log4j's JNDI lookups: checkov CKV_AWS_192); "Web ACL capacity units": at most
    1,500 by default; API Gateway, "Using AWS WAF to protect your REST APIs"."""
    _, acl = only(prod, "AWS::WAFv2::WebACL")
    rules = {rule["Name"]: rule["Statement"] for rule in acl["Properties"]["Rules"]}
    rate = rules["RatePerIp"]["RateBasedStatement"]
    assert (rate["AggregateKeyType"], rate["Limit"]) == ("IP", CONFIG["prod"].api.waf_requests_per_5_min)
    # "Aggregating rate-based rules" (custom keys): each value of the header is an instance, and a
    # request without the header is not counted; API Gateway's Cognito authorizer reads the token there
    per_caller = rules["RatePerCaller"]["RateBasedStatement"]
    assert (per_caller["AggregateKeyType"], per_caller["Limit"]) == (
        "CUSTOM_KEYS",
        CONFIG["prod"].api.waf_requests_per_5_min_per_caller,
    )
    assert per_caller["CustomKeys"] == [
        {"Header": {"Name": "authorization", "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}}
    ]
    assert "AwsBotControl" not in rules  # off by default
    assert rules["AwsCommonRules"]["ManagedRuleGroupStatement"]["Name"] == "AWSManagedRulesCommonRuleSet"
    assert rules["AwsKnownBadInputs"]["ManagedRuleGroupStatement"]["Name"] == "AWSManagedRulesKnownBadInputsRuleSet"
    assert len({rule["Priority"] for rule in acl["Properties"]["Rules"]}) == len(rules)  # priorities are unique
    _, association = only(prod, "AWS::WAFv2::WebACLAssociation")
    stage_id, _ = only(prod, "AWS::ApiGateway::Stage")
    assert stage_id in json.dumps(association["Properties"]["ResourceArn"])
    anonymous = [
        method["Properties"]["ResourceId"]["Ref"]
        for method in resources(dev, "AWS::ApiGateway::Method").values()
        if method["Properties"]["AuthorizationType"] == "NONE"
    ]  # but a sale's availability, which tells no user's data
    assert [resources(dev, "AWS::ApiGateway::Resource")[ref]["Properties"]["PathPart"] for ref in anonymous] == [
        "availability"
    ]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_functions_reach_the_database_through_the_proxy_only(env, request):
    """RDS User Guide, "Planning for RDS Proxy" (security groups): the database accepts the
    proxy's group, the proxy the functions'; nothing else reaches PostgreSQL's port."""
    template = request.getfixturevalue(env)
    _, proxy = only(template, "AWS::RDS::DBProxy")
    _, instance = only(template, "AWS::RDS::DBInstance")
    (proxy_group,) = proxy["Properties"]["VpcSecurityGroupIds"]
    (database_group,) = instance["Properties"]["VPCSecurityGroups"]
    assert proxy_group != database_group
    into_database = [
        rule["Properties"]["SourceSecurityGroupId"]
        for rule in resources(template, "AWS::EC2::SecurityGroupIngress").values()
        if rule["Properties"]["GroupId"] == database_group
    ]
    assert into_database
    assert all(source == proxy_group for source in into_database)


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_data_is_kept_in_prod_and_nothing_is_left_behind_by_dev(env, request):
    """CloudFormation User Guide, "DeletionPolicy attribute": Snapshot for RDS instances and
    ElastiCache replication groups, Retain for the rest of the data."""
    template = request.getfixturevalue(env)
    retain = CONFIG[env].removal_policy == "retain"
    expected = {
        "AWS::RDS::DBInstance": "Snapshot" if retain else "Delete",
        "AWS::SQS::Queue": "Retain" if retain else "Delete",
        "AWS::SecretsManager::Secret": "Retain" if retain else "Delete",
        "AWS::Logs::LogGroup": "Retain" if retain else "Delete",
        "AWS::KMS::Key": "Retain" if retain else "Delete",
    }
    cache, kafka = CONFIG[env].cache, CONFIG[env].kafka
    assert cache is not None
    assert kafka is not None
    if cache.kind == "serverless":
        expected["AWS::ElastiCache::ServerlessCache"] = "Retain" if retain else "Delete"
    else:
        expected["AWS::ElastiCache::ReplicationGroup"] = "Snapshot" if retain else "Delete"
    kafka_kind = "AWS::MSK::ServerlessCluster" if kafka.kind == "serverless" else "AWS::MSK::Cluster"
    expected[kafka_kind] = "Retain" if retain else "Delete"
    for kind, policy in expected.items():
        found = {r.get("DeletionPolicy") for r in resources(template, kind).values()}
        assert found == {policy}, kind


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_function_logs_to_a_group_with_the_environments_retention(env, request):
    """CloudWatch Logs User Guide, "Change log data retention": a log group a function creates
    for itself (CDK's provider functions do) keeps its events forever."""
    template = request.getfixturevalue(env)
    groups = resources(template, "AWS::Logs::LogGroup")
    assert {g["Properties"]["RetentionInDays"] for g in groups.values()} == {CONFIG[env].log_retention_days}
    for logical_id, function in resources(template, "AWS::Lambda::Function").items():
        target = function["Properties"].get("LoggingConfig", {}).get("LogGroup", {})
        assert target.get("Ref") in groups, logical_id


def test_cfn_lint_finds_no_error(request):
    """cfn-lint checks every template of every environment against the CloudFormation resource
    specification, in one run (its specification loads once)."""
    for env in ENVIRONMENTS:
        request.getfixturevalue(env)
    templates = sorted(str(path) for env in ENVIRONMENTS for path in ASSEMBLIES[env].glob("*.template.json"))
    assert len(templates) == 2 * len(ENVIRONMENTS)
    run = subprocess.run(
        [
            str(Path(sys.executable).parent / "cfn-lint"),
            "--format",
            "parseable",
            "--regions",
            "eu-west-1",
            "--",
            *templates,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in run.stdout.splitlines() if ":E" in line]
    assert errors == [], run.stdout
    assert run.returncode in (0, 4), run.stderr  # 4: warnings only


def test_bot_control_inspects_the_issue_route_alone_at_the_level_cdk_json_asks(prod_variant):
    """AWS WAF Developer Guide, "AWS WAF Bot Control rule group" (AWSManagedRulesBotControlRuleSet,
    InspectionLevel COMMON or TARGETED, 50 capacity units) and "Scope-down statements": billed
    per request it inspects, so it inspects ``POST /coupon-issues`` only; the bill prices it."""
    _, acl = only(prod_variant, "AWS::WAFv2::WebACL")
    rules = {rule["Name"]: rule["Statement"] for rule in acl["Properties"]["Rules"]}
    group = rules["AwsBotControl"]["ManagedRuleGroupStatement"]
    assert group["Name"] == "AWSManagedRulesBotControlRuleSet"
    assert group["ManagedRuleGroupConfigs"] == [{"AWSManagedRulesBotControlRuleSet": {"InspectionLevel": "TARGETED"}}]
    scope = group["ScopeDownStatement"]["ByteMatchStatement"]
    assert (scope["SearchString"], scope["PositionalConstraint"]) == ("/coupon-issues", "ENDS_WITH")
    assert len({rule["Priority"] for rule in acl["Properties"]["Rules"]}) == len(rules) == 6
    for level in ("TARGETED", "COMMON"):  # the other level differs in the name it is given alone
        body = json.loads(json.dumps(prod_variant.to_json()).replace('"TARGETED"', f'"{level}"'))
        (line,) = [line for line in idle_bill(body) if line.item == "WAF Bot Control"]
        assert (line.usd, line.prices) == (10.0, ("waf_bot_control_month", f"waf_bot_control_million:{level}"))


def test_prod_takes_30000_requests_a_second_with_its_brokers_iam_connection_limit_raised(prod_variant, prod):
    """Amazon MSK quota page: 3,000 IAM connections a Standard broker at once, raised through
    listener.name.client_iam.max.connections with the AlterConfigs API. The intake's reserved
    concurrency of 3,000 (Lambda serves ten requests a second per unit of a function's concurrency)
    could hold one connection each to a hot coupon's leader, with the other clients' beside them:
    the stack sets the limit on every broker before the intake deploys, and alarms short of it."""
    config = load(VARIANT[CONTEXT_KEY], "prod", alarm_emails=OFFLINE_ALARM_EMAILS)
    template = prod_variant

    needed = iam_connections(config)
    limit_id, limit = only(template, "Custom::KafkaIamConnectionLimit")
    assert MSK_IAM_CONNECTIONS < needed <= int(limit["Properties"]["Limit"]) <= MSK_IAM_CONNECTIONS_RAISED
    assert int(limit["Properties"]["Limit"]) == 3100
    assert limit_id in template.to_json()["Resources"][function_id(template, "intake")]["DependsOn"]
    assert {"kafka-cluster:DescribeCluster", "kafka-cluster:AlterClusterDynamicConfiguration"} <= set(
        actions(template, "topic")
    )
    alarms = [a["Properties"] for a in resources(template, "AWS::CloudWatch::Alarm").values()]
    connections = [a for a in alarms if a.get("MetricName") == "ConnectionCount"]
    assert len(connections) == config.brokers
    assert {a["Threshold"] for a in connections} == {round(3100 * 0.9)}

    # the brokers' limit costs nothing: but for the variant's Bot Control, the bill is prod's as shipped
    def not_waf(template: Template) -> list[Any]:
        return [line for line in idle_bill(template.to_json()) if not line.item.startswith("WAF")]

    assert not_waf(template) == not_waf(prod)


def test_prod_as_shipped_keeps_msk_default_connection_limit(prod):
    """Below 3,000 connections a broker, the brokers are left as MSK makes them."""
    assert not resources(prod, "Custom::KafkaIamConnectionLimit")
    alarms = [a["Properties"] for a in resources(prod, "AWS::CloudWatch::Alarm").values()]
    assert {a["Threshold"] for a in alarms if a.get("MetricName") == "ConnectionCount"} == {2700}


def test_a_scheduled_warmup_gives_the_api_an_alias_with_provisioned_concurrency(prod_variant):
    """Lambda Developer Guide, "Configuring provisioned concurrency" (on an alias or version,
    scheduled with Application Auto Scaling); the API must call that alias to use it."""
    template = prod_variant
    alias_id, _ = only(template, "AWS::Lambda::Alias")
    _, target = only(template, "AWS::ApplicationAutoScaling::ScalableTarget")
    assert target["Properties"]["ScalableDimension"] == "lambda:function:ProvisionedConcurrency"
    scheduled = {a["Schedule"]: a["ScalableTargetAction"] for a in target["Properties"]["ScheduledActions"]}
    assert scheduled == {
        "at(2026-12-01T11:45:00)": {"MinCapacity": 300, "MaxCapacity": 300},
        "at(2026-12-01T13:00:00)": {"MinCapacity": 0, "MaxCapacity": 0},
    }
    methods = resources(template, "AWS::ApiGateway::Method").values()
    calling_the_alias = [m for m in methods if alias_id in json.dumps(m["Properties"]["Integration"].get("Uri"))]
    assert [m["Properties"]["HttpMethod"] for m in calling_the_alias] == ["POST"]  # POST /coupon-issues


REDIS_FUNCTIONS = ("intake", "coupons", "worker", "dlq", "builder", "rebuild")
NO_REDIS_FUNCTIONS = ("relay", "migrate", "topic")


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_cache_requires_iam_authentication_as_elasticache_documents_it(env, request):
    """ElastiCache User Guide, "Authenticating with IAM" (auth-iam.html), Limitations and Setup:
    Valkey 7.2 or later, in-transit encryption (TLS) on the cache, an IAM-enabled user whose user
    name and user id are the same, in a user group attached to the cache, and elasticache:Connect
    granted on the cache and the user. CloudFormation, AWS::ElastiCache::UserGroup: a user named
    default must be included; here it is switched off, so a connection that does not
    authenticate can run nothing (checkov CKV_AWS_31 for the replication group)."""
    template = request.getfixturevalue(env)
    users = resources(template, "AWS::ElastiCache::User")
    (iam_id,) = [i for i, u in users.items() if u["Properties"].get("AuthenticationMode", {}).get("Type") == "iam"]
    (default_id,) = [i for i, u in users.items() if u["Properties"]["UserName"] == "default"]
    iam_user, default_user = users[iam_id]["Properties"], users[default_id]["Properties"]
    assert iam_user["UserName"] == iam_user["UserId"]
    assert re.fullmatch(r"[a-z][a-z0-9-]*", iam_user["UserId"])  # ElastiCache stores ids in lowercase
    assert default_user["AccessString"].split()[0] == "off"
    assert {iam_user["Engine"], default_user["Engine"]} == {"valkey"}
    group_id, group = only(template, "AWS::ElastiCache::UserGroup")
    assert sorted(json.dumps(u) for u in group["Properties"]["UserIds"]) == sorted(
        json.dumps({"Ref": i}) for i in (iam_id, default_id)
    )
    config = CONFIG[env].cache
    assert config is not None
    if config.kind == "serverless":
        cache_id, cache = only(template, "AWS::ElastiCache::ServerlessCache")
        assert cache["Properties"]["UserGroupId"] == {"Ref": group_id}  # serverless caches speak TLS only
        assert (cache["Properties"]["Engine"], int(cache["Properties"]["MajorEngineVersion"])) >= ("valkey", 8)
        name, cache_arn = cache["Properties"]["ServerlessCacheName"], {"Fn::GetAtt": [cache_id, "ARN"]}
    else:
        cache_id, cache = only(template, "AWS::ElastiCache::ReplicationGroup")
        assert cache["Properties"]["UserGroupIds"] == [{"Ref": group_id}]
        assert cache["Properties"]["TransitEncryptionEnabled"] is True
        version = tuple(int(part) for part in cache["Properties"]["EngineVersion"].split("."))
        assert cache["Properties"]["Engine"] == "valkey"
        assert version >= (7, 2)
        name, cache_arn = {"Ref": cache_id}, None
    for function in REDIS_FUNCTIONS:
        variables = resources(template, "AWS::Lambda::Function")[function_id(template, function)]["Properties"]
        variables = variables["Environment"]["Variables"]
        assert variables["REDIS_AUTH"] == "iam"
        assert variables["REDIS_USER"] == iam_user["UserId"]
        assert variables["REDIS_CACHE_NAME"] == name
        assert variables["REDIS_CACHE_KIND"] == config.kind
        assert json.dumps(variables["REDIS_URL"]).startswith('{"Fn::Join": ["", ["rediss://')
        granted = resources_of(template, function, "elasticache:Connect")
        assert json.dumps({"Fn::GetAtt": [iam_id, "Arn"]}) in granted
        if cache_arn is not None:
            assert json.dumps(cache_arn) in granted
        else:
            (arn,) = [g for g in granted if "replicationgroup:" in g]
            assert json.dumps({"Ref": cache_id}) in arn
        assert len(granted) == 2  # that cache as that user, nothing else
    for function in NO_REDIS_FUNCTIONS:
        assert not resources_of(template, function, "elasticache:Connect")


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_every_asynchronously_invoked_function_keeps_its_failed_runs(env, request):
    """Lambda Developer Guide, "Asynchronous invocation" and "Capturing records of Lambda
    asynchronous invocations": an on-failure destination keeps the event and error of a run that
    failed or was dropped for its age; without one, a failed scheduled run leaves only an Errors
    metric. Every function an EventBridge rule invokes has one, and an alarm watches it."""
    template = request.getfixturevalue(env)
    targeted = {
        json.dumps(target["Arn"])
        for rule in resources(template, "AWS::Events::Rule").values()
        for target in rule["Properties"]["Targets"]
    }
    configs = {
        json.dumps({"Fn::GetAtt": [c["Properties"]["FunctionName"]["Ref"], "Arn"]}): c
        for c in resources(template, "AWS::Lambda::EventInvokeConfig").values()
    }
    assert targeted
    assert targeted <= set(configs)
    queue_ids = {
        c["Properties"]["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0] for c in configs.values()
    }
    (queue_id,) = queue_ids
    assert only_type(template, queue_id) == "AWS::SQS::Queue"
    for name in ("rebuild", "relay"):
        assert any(queue_id in granted for granted in resources_of(template, name, "sqs:SendMessage"))
    alarms = resources(template, "AWS::CloudWatch::Alarm").values()
    assert any(
        queue_id in json.dumps(alarm["Properties"].get("Dimensions", []))
        and alarm["Properties"]["MetricName"] == "ApproximateNumberOfMessagesVisible"
        for alarm in alarms
    )


def only_type(template: Template, logical_id: str) -> str:
    return str(template.to_json()["Resources"][logical_id]["Type"])
