"""The CDK app per environment: what it deploys, with which permissions, and that cdk-nag passes."""

from __future__ import annotations

import copy
import json

import aws_cdk as cdk
import pytest
from app import build, offline_context
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Match

from coupon_cdk.config import CONTEXT_KEY, CdkContextError, cdk_json_context, load
from coupon_client.metrics import INTAKE_SERVICE
from tests.infra.template_support import actions, function_id, resources, resources_of

FUNCTIONS = ("intake", "coupons", "worker", "dlq", "builder", "rebuild")
DATABASE_USERS = ("coupons", "worker", "dlq", "builder", "rebuild")
DATA_ACTION_PREFIXES = ("sqs:", "kafka-cluster:", "secretsmanager:", "logs:")


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
def test_the_msk_mapping_feeds_the_worker_with_partial_failures_and_an_sqs_on_failure_destination(env, request):
    template = request.getfixturevalue(env)
    event_sources = resources(template, "AWS::Lambda::EventSourceMapping").values()
    (mapping,) = [m for m in event_sources if "Topics" in m["Properties"]]
    props = mapping["Properties"]
    expected = {"dev": (100, 3, 1, 2), "small": (100, 3, 1, 2), "prod": (1000, 5, 2, 10)}[env]
    assert props["Topics"] == ["coupon.issue.v1"]
    assert props["StartingPosition"] == "TRIM_HORIZON"
    assert (props["BatchSize"], props["MaximumRetryAttempts"]) == expected[:2]
    assert props["MaximumBatchingWindowInSeconds"] == 1
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert (
        props["ProvisionedPollerConfig"]["MinimumPollers"],
        props["ProvisionedPollerConfig"]["MaximumPollers"],
    ) == expected[2:]
    assert props["AmazonManagedKafkaEventSourceConfig"]["ConsumerGroupId"] == f"coupon-worker-{env}"
    dlq = props["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0]
    assert dlq.startswith("DeadLettersDlq")
    assert props["FunctionName"] == {"Ref": function_id(template, "worker")}


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
def test_the_dlq_handler_reads_the_dlq_with_partial_batch_responses_and_a_redrive_queue(env, request):
    template = request.getfixturevalue(env)
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "EventSourceArn": {"Fn::GetAtt": [Match.string_like_regexp("^DeadLettersDlq"), "Arn"]},
            "FunctionName": {"Ref": function_id(template, "dlq")},
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
        },
    )
    template.has_resource_properties(
        "AWS::SQS::Queue",
        {
            "RedrivePolicy": {"deadLetterTargetArn": Match.any_value(), "maxReceiveCount": 5},
            "SqsManagedSseEnabled": True,
        },
    )


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
def test_each_role_has_only_what_its_function_uses(env, request):
    template = request.getfixturevalue(env)
    every = {name: actions(template, name) for name in FUNCTIONS}
    assert "kafka-cluster:WriteData" in every["intake"]
    assert all("kafka-cluster:WriteData" not in every[name] for name in ("worker", "dlq", "builder", "rebuild"))
    assert "sqs:SendMessage" in every["worker"]
    assert all("sqs:SendMessage" not in every[name] for name in ("intake", "coupons", "dlq", "builder"))
    # the rebuild sends nothing but its own failed runs (Lambda's on-failure destination), on AWS
    assert all("FailedRuns" in r for r in resources_of(template, "rebuild", "sqs:SendMessage"))
    assert "sqs:ReceiveMessage" in every["dlq"]
    assert "kafka-cluster:ReadData" in every["dlq"]
    assert "kafka-cluster:AlterGroup" in every["worker"]
    # the builder and the rebuild read the records in flight: the topic, and the worker group's
    # offsets, nothing more
    reads_in_flight = {
        "kafka-cluster:Connect",
        "kafka-cluster:DescribeTopic",
        "kafka-cluster:ReadData",
        "kafka-cluster:DescribeGroup",
    }
    for name in ("builder", "rebuild"):
        assert {a for a in every[name] if a.startswith("kafka")} == reads_in_flight
    produces = {"kafka-cluster:WriteData", "kafka-cluster:WriteDataIdempotently"}
    assert {a for a in every["intake"] if a.startswith("kafka")} == produces | {
        "kafka-cluster:Connect",
        "kafka-cluster:DescribeTopic",
    }
    assert not {a for a in every["coupons"] if a.startswith("kafka")}
    # the intake invokes the builder (a missing state) and only it: no public request reaches the
    # rebuild, whose reserved concurrency the schedule and the operators keep; the coupons
    # function invokes the rebuild (a reconcile on demand) and only it
    for name, invoked in (("intake", "builder"), ("coupons", "rebuild")):
        assert {a for a in every[name] if a.startswith("lambda:")} == {"lambda:InvokeFunction"}
        assert resources_of(template, name, "lambda:InvokeFunction") == [
            json.dumps({"Fn::GetAtt": [function_id(template, invoked), "Arn"]})
        ]
    assert not {a for a in every["builder"] if a.startswith(("lambda:", "sqs:"))}
    # the relay writes the event stream and nothing else of Kafka
    relay = actions(template, "relay")
    assert {a for a in relay if a.startswith("kafka")} == produces | {
        "kafka-cluster:Connect",
        "kafka-cluster:DescribeTopic",
    }
    assert all("coupon.events.v1" in r for r in resources_of(template, "relay", "kafka-cluster:WriteData"))
    assert all("coupon.issue.v1" in r for r in resources_of(template, "intake", "kafka-cluster:WriteData"))
    for name in FUNCTIONS:
        assert ("secretsmanager:GetSecretValue" in every[name]) == (name in DATABASE_USERS), name
        assert not any(action.endswith("*") for action in every[name]), (name, every[name])
        for action in every[name]:
            if action.startswith(DATA_ACTION_PREFIXES):
                assert '"*"' not in resources_of(template, name, action), (name, action)


@pytest.mark.parametrize("env", ["dev", "small", "prod", "local"])
def test_routes_and_their_authorization(env, request):
    template = request.getfixturevalue(env)
    public = {"prod": "COGNITO_USER_POOLS", "dev": "AWS_IAM", "small": "AWS_IAM", "local": "NONE"}[env]
    methods = {
        (method["Properties"]["HttpMethod"], method["Properties"].get("AuthorizationType"))
        for method in resources(template, "AWS::ApiGateway::Method").values()
    }
    preflight = {("OPTIONS", "NONE")} if env in ("prod", "local") else set()  # the environments with corsOrigins
    assert (
        methods
        == {("POST", public), ("GET", public), ("POST", "AWS_IAM"), ("GET", "AWS_IAM"), ("PATCH", "AWS_IAM")}
        | {("GET", "NONE")}  # a sale's availability, public everywhere
        | preflight
    )
    paths = {r["Properties"]["PathPart"] for r in resources(template, "AWS::ApiGateway::Resource").values()}
    assert paths == {
        "coupon-issues",
        "coupons",
        "{couponId}",
        "issues",
        "{userId}",
        "use",
        "cancel",
        "close",
        "reopen",
        "top-up",
        "reconcile",
        "availability",
    }
    template.has_resource_properties(
        "AWS::ApiGateway::GatewayResponse", {"ResponseType": "BAD_REQUEST_BODY", "StatusCode": "422"}
    )


@pytest.mark.parametrize(("env", "rate", "burst"), [("dev", 500, 1000), ("prod", 10000, 5000)])
def test_stage_throttling_and_access_logs_per_environment(env, rate, burst, request):
    template = request.getfixturevalue(env)
    template.has_resource_properties(
        "AWS::ApiGateway::Stage",
        {
            "StageName": env,
            "AccessLogSetting": Match.object_like({"DestinationArn": Match.any_value()}),
            "MethodSettings": Match.array_with(
                [Match.object_like({"ThrottlingRateLimit": rate, "ThrottlingBurstLimit": burst})]
            ),
        },
    )


@pytest.mark.parametrize(("env", "rate"), [("dev", "rate(5 minutes)"), ("prod", "rate(1 minute)")])
def test_the_schedule_runs_the_rebuild(env, rate, request):
    template = request.getfixturevalue(env)
    template.has_resource_properties(
        "AWS::Events::Rule",
        {
            "ScheduleExpression": rate,
            "Targets": [Match.object_like({"Arn": {"Fn::GetAtt": [function_id(template, "rebuild"), "Arn"]}})],
        },
    )


def test_encryption_in_transit_and_at_rest(dev, small, prod):
    for template in (dev, small, prod):
        template.has_resource_properties("AWS::RDS::DBInstance", {"StorageEncrypted": True})
        template.has_resource_properties("AWS::RDS::DBParameterGroup", {"Parameters": {"rds.force_ssl": "1"}})
        for queue in resources(template, "AWS::SQS::Queue").values():
            assert queue["Properties"]["SqsManagedSseEnabled"] is True
    dev.has_resource_properties("AWS::ElastiCache::ServerlessCache", {"Engine": "valkey"})  # TLS-only by design
    dev.has_resource_properties(
        "AWS::MSK::ServerlessCluster", {"ClientAuthentication": {"Sasl": {"Iam": {"Enabled": True}}}}
    )
    prod.has_resource_properties(
        "AWS::ElastiCache::ReplicationGroup",
        {"TransitEncryptionEnabled": True, "AtRestEncryptionEnabled": True, "AutomaticFailoverEnabled": True},
    )
    for template in (small, prod):
        template.has_resource_properties(
            "AWS::MSK::Cluster",
            {"EncryptionInfo": {"EncryptionInTransit": {"ClientBroker": "TLS", "InCluster": True}}},
        )
    for template in (dev, small, prod):
        template.has_resource_properties("AWS::RDS::DBProxy", {"RequireTLS": True})


def test_functions_get_their_services_from_the_environment(dev, local):
    intake = resources(dev, "AWS::Lambda::Function")[function_id(dev, "intake")]["Properties"]
    variables = intake["Environment"]["Variables"]
    assert variables["KAFKA_AUTH"] == "iam"
    assert variables["KAFKA_TOPIC"] == "coupon.issue.v1"
    assert variables["BUILDER_FUNCTION"] == {"Ref": function_id(dev, "builder")}
    coupons = resources(dev, "AWS::Lambda::Function")[function_id(dev, "coupons")]["Properties"]
    assert coupons["Handler"] == "functions/coupons/app.handler"
    proxy_id, attribute = coupons["Environment"]["Variables"]["DB_HOST"]["Fn::GetAtt"]
    assert ("Proxy" in proxy_id, attribute) == (True, "Endpoint")
    assert "DATABASE_URL" not in variables
    assert intake["Runtime"] == "python3.12"
    assert intake["Architectures"] == ["arm64"]
    assert intake["Handler"] == "functions/intake/app.handler"
    local_coupons = resources(local, "AWS::Lambda::Function")[function_id(local, "coupons")]["Properties"]
    local_variables = local_coupons["Environment"]["Variables"]
    assert local_variables["DB_SECRET_ARN"].startswith("arn:aws:secretsmanager:")  # the production path, on LocalStack
    assert "DATABASE_URL" not in local_variables
    assert local_variables["REDIS_URL"].startswith("rediss://")
    local_intake = resources(local, "AWS::Lambda::Function")[function_id(local, "intake")]["Properties"]
    kafka = local_intake["Environment"]["Variables"]
    assert (kafka["KAFKA_AUTH"], kafka["KAFKA_TLS"]) == ("none", "on")


@pytest.mark.parametrize("env", ["dev", "small", "prod", "local"])
def test_a_function_is_given_only_the_stores_it_uses(env, request):
    """The intake has no database, the relay no Redis, the topic maker neither: none gets their
    variables, nor (on AWS) the right to connect to the cache or to read the database's secret."""
    template = request.getfixturevalue(env)
    functions = resources(template, "AWS::Lambda::Function")
    uses = {"intake": (True, False), "coupons": (True, True), "worker": (True, True), "dlq": (True, True),
            "rebuild": (True, True), "relay": (False, True)}  # fmt: skip
    if env != "local":
        uses |= {"migrate": (False, True), "topic": (False, False)}
    for name, (redis, database) in uses.items():
        variables = functions[function_id(template, name)]["Properties"]["Environment"]["Variables"]
        assert ("REDIS_URL" in variables, "DB_SECRET_ARN" in variables) == (redis, database), name
        if env != "local":
            assert ("elasticache:Connect" in actions(template, name)) == redis, name


def test_every_local_function_of_the_database_may_read_its_secret_and_no_other(local):
    """On LocalStack the functions read the database's credentials from Secrets Manager, as on
    AWS: each role that uses the database is granted exactly that secret (the integration run
    checks the calls), and the intake's none."""
    variables = resources(local, "AWS::Lambda::Function")[function_id(local, "coupons")]["Properties"]["Environment"]
    secret = variables["Variables"]["DB_SECRET_ARN"]
    for name in ("coupons", "worker", "dlq", "rebuild", "relay"):
        assert resources_of(local, name, "secretsmanager:GetSecretValue") == [json.dumps(secret)], name
    assert resources_of(local, "intake", "secretsmanager:GetSecretValue") == []


def test_the_local_environment_holds_only_what_localstack_provides(local):
    kinds = {resource["Type"].split("::")[1] for resource in local.to_json()["Resources"].values()}
    assert kinds <= {
        "ApiGateway",
        "Lambda",
        "SQS",
        "Events",
        "IAM",
        "Logs",
        "CloudWatch",
        "SNS",
        "KMS",
        "SecretsManager",
    }
    assert not resources(local, "AWS::Lambda::EventSourceMapping") or all(
        "Topics" not in m["Properties"] for m in resources(local, "AWS::Lambda::EventSourceMapping").values()
    )


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
def test_alarms(env, request):
    template = request.getfixturevalue(env)
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    metrics = {(a["Properties"].get("Namespace"), a["Properties"].get("MetricName")) for a in alarms.values()}
    assert ("AWS/SQS", "ApproximateNumberOfMessagesVisible") in metrics
    assert (f"CouponSystem-{env}", "ReconcileDrift") in metrics
    assert ("AWS/ApiGateway", "5XXError") in metrics
    assert ("AWS/Lambda", "Errors") in metrics
    assert ("AWS/Lambda", "Throttles") in metrics
    assert all(a["Properties"]["AlarmActions"] for a in alarms.values())


@pytest.mark.parametrize("env", ["dev", "small", "prod"])
def test_the_intake_holds_no_database_credential_and_has_no_path_to_the_database(env, request):
    """The function every user reaches: no secret of any kind, and a security group the proxy
    (the only way to the database) admits nothing from; the coupons function's it admits."""
    template = request.getfixturevalue(env)
    assert not [a for a in actions(template, "intake") if a.startswith("secretsmanager:")]
    functions = resources(template, "AWS::Lambda::Function")

    def groups_of(name: str) -> list[str]:
        vpc = functions[function_id(template, name)]["Properties"]["VpcConfig"]
        return [group["Fn::GetAtt"][0] for group in vpc["SecurityGroupIds"]]

    ingress = [rule["Properties"] for rule in resources(template, "AWS::EC2::SecurityGroupIngress").values()]
    proxy_admits = {
        rule["SourceSecurityGroupId"]["Fn::GetAtt"][0]
        for rule in ingress
        if rule["GroupId"]["Fn::GetAtt"][0].startswith("NetworkProxy") and rule["FromPort"] == 5432
    }
    assert proxy_admits
    assert not proxy_admits & set(groups_of("intake"))
    assert set(groups_of("coupons")) <= proxy_admits
    intake_groups = set(groups_of("intake"))
    reaches = {rule["GroupId"]["Fn::GetAtt"][0][: -len("XXXXXXXX")] for rule in ingress
               if rule["SourceSecurityGroupId"]["Fn::GetAtt"][0] in intake_groups}  # fmt: skip
    assert reaches == {"NetworkCache", "NetworkKafka", "NetworkEndpoints"}


@pytest.mark.parametrize(("env", "intake", "coupons"), [("dev", 200, 20), ("prod", 1000, 100)])
def test_each_http_function_has_its_own_reserved_concurrency_and_alarms(env, intake, coupons, request):
    """A busy operator cannot starve a sale, nor a sale the operators."""
    template = request.getfixturevalue(env)
    functions = resources(template, "AWS::Lambda::Function")
    for name, reserved in (("intake", intake), ("coupons", coupons)):
        logical_id = function_id(template, name)
        assert functions[logical_id]["Properties"]["ReservedConcurrentExecutions"] == reserved
        watched = {
            a["Properties"]["MetricName"]
            for a in resources(template, "AWS::CloudWatch::Alarm").values()
            if {"Name": "FunctionName", "Value": {"Ref": logical_id}} in a["Properties"].get("Dimensions", [])
        }
        assert watched == {"Errors", "Throttles"}, name


@pytest.mark.parametrize("env", ["dev", "small", "prod", "local"])
def test_the_issue_request_goes_to_the_intake_and_every_other_route_to_the_coupons_function(env, request):
    template = request.getfixturevalue(env)
    by_function: dict[str, set[str]] = {"intake": set(), "coupons": set()}
    paths = {logical_id: r["Properties"]["PathPart"] for logical_id, r in
             resources(template, "AWS::ApiGateway::Resource").items()}  # fmt: skip
    text = json.dumps
    for method in resources(template, "AWS::ApiGateway::Method").values():
        if method["Properties"]["Integration"]["Type"] == "MOCK":  # a preflight: API Gateway's own answer
            continue
        uri = text(method["Properties"]["Integration"]["Uri"])
        target = next(name for name in by_function if function_id(template, name) in uri
                      or (name == "intake" and "IntakeLive" in uri))  # fmt: skip
        resource = method["Properties"]["ResourceId"]
        path = paths.get(resource.get("Ref", ""), "/") if isinstance(resource, dict) else "/"
        by_function[target].add(f"{method['Properties']['HttpMethod']} {path}")
    assert by_function["intake"] == {"POST coupon-issues"}
    assert len(by_function["coupons"]) == 13


def test_the_migration_runs_at_deploy_time(dev):
    dev.has_resource_properties("Custom::Trigger", {"HandlerArn": Match.any_value()})
    assert function_id(dev, "migrate")


def test_cdk_nag_fails_the_synth_on_an_unacknowledged_finding(tmp_path):
    app = cdk.App(context=offline_context("local"), outdir=str(tmp_path))
    stack = build(app)
    sqs.Queue(stack, "Careless")  # no SSL enforcement, no dead-letter queue
    with pytest.raises(RuntimeError, match=r"ValidationFailed: ERROR The SQS queue"):
        app.synth()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("staging", "unknown environment 'staging'; known: dev, local, prod, small"),
        (None, "choose an environment with -c env=NAME"),
    ],
)
def test_an_unknown_environment_lists_the_known_ones(name, message):
    with pytest.raises(CdkContextError, match=message):
        load(cdk_json_context()[CONTEXT_KEY], name)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("api", "rateLimit"), "fast", r"^dev\.api\.rateLimit must be a non-negative integer, got 'fast'$"),
        (("api", "rateLimit"), True, r"^dev\.api\.rateLimit must be a non-negative integer, got True$"),
        (("api", "rateLimit"), "10", r"^dev\.api\.rateLimit must be a non-negative integer, got '10'$"),
        (
            ("api", "publicAuth"),
            "magic",
            r"^dev\.api\.publicAuth must be one of 'none', 'iam' or 'cognito', got 'magic'$",
        ),
        (("api", "colour"), "red", r"^dev\.api\.colour is not a known field; known: \['botControl', 'burstLimit', "),
        (("api",), 3, r"^dev\.api must be an object, got 3$"),
        (("alarmEmails",), "ops@example.com", r"^dev\.alarmEmails must be a list, got 'ops@example.com'$"),
        (("alarmEmails",), [""], r"^dev\.alarmEmails\[0\] must be a non-empty string, got ''$"),
        (("logRetentionDays",), None, r"^dev\.logRetentionDays is required$"),
    ],
)
def test_a_malformed_environment_names_the_field(path, value, message):
    environments = copy.deepcopy(cdk_json_context()[CONTEXT_KEY])
    *parents, last = path
    block = environments["dev"]
    for key in parents:
        block = block[key]
    if value is None:
        del block[last]
    else:
        block[last] = value
    with pytest.raises(CdkContextError, match=message):
        load(environments, "dev")


def test_every_problem_of_an_environment_is_named_at_once():
    environments = copy.deepcopy(cdk_json_context()[CONTEXT_KEY])
    environments["dev"]["api"]["burstLimit"] = -1
    environments["dev"]["workerMemoryMb"] = "big"
    with pytest.raises(CdkContextError) as refused:
        load(environments, "dev")
    assert sorted(str(refused.value).split("; ")) == [
        "dev.api.burstLimit must be a non-negative integer, got -1",
        "dev.workerMemoryMb must be a non-negative integer, got 'big'",
    ]


def test_an_environment_that_is_not_an_object_is_named():
    with pytest.raises(CdkContextError, match=r"^dev must be an object$"):
        load({"dev": 5}, "dev")


@pytest.mark.parametrize("env", ["dev", "prod", "local"])
def test_the_outputs_the_coupons_command_reads_are_there(env, request):
    """``coupons --env`` finds the API, the DLQ, the worker, the metrics and the intake's log group
    (``coupons fairness``) by these outputs, and reads the intake's metrics under its service's
    name (coupon_client/metrics.py)."""
    template = request.getfixturevalue(env)
    outputs = template.to_json()["Outputs"]

    assert {"ApiUrl", "DlqUrl", "WorkerFunctionName", "MetricsNamespace", "IntakeLogGroup"} <= set(outputs)
    assert outputs["MetricsNamespace"]["Value"] == f"CouponSystem-{env}"
    intake_logs = resources(template, "AWS::Lambda::Function")[function_id(template, "intake")]["Properties"]
    assert outputs["IntakeLogGroup"]["Value"] == {"Ref": intake_logs["LoggingConfig"]["LogGroup"]["Ref"]}
    intake = resources(template, "AWS::Lambda::Function")[function_id(template, "intake")]
    variables = intake["Properties"]["Environment"]["Variables"]
    assert variables["POWERTOOLS_SERVICE_NAME"] == INTAKE_SERVICE
    assert variables["POWERTOOLS_METRICS_NAMESPACE"] == outputs["MetricsNamespace"]["Value"]


def _preflights(template) -> dict[str, dict]:
    """Each OPTIONS method, by the path part of its resource."""
    parts = {key: r["Properties"]["PathPart"] for key, r in resources(template, "AWS::ApiGateway::Resource").items()}
    return {
        parts[method["Properties"]["ResourceId"]["Ref"]]: method["Properties"]
        for method in resources(template, "AWS::ApiGateway::Method").values()
        if method["Properties"]["HttpMethod"] == "OPTIONS"
    }


def test_api_gateway_answers_the_preflight_of_each_route_a_shops_page_calls(prod):
    """Only the public routes, each with its one method, answered by a mock integration (no function),
    for the environment's origins, with the headers a page sends and Retry-After exposed."""
    preflights = _preflights(prod)
    assert set(preflights) == {"coupon-issues", "{userId}", "use", "cancel"}
    for part, method in preflights.items():
        assert method["Integration"]["Type"] == "MOCK"
        headers = method["Integration"]["IntegrationResponses"][0]["ResponseParameters"]
        allowed = {"coupon-issues": "POST", "{userId}": "GET", "use": "POST", "cancel": "POST"}[part]
        assert headers["method.response.header.Access-Control-Allow-Methods"] == f"'{allowed}'"
        assert headers["method.response.header.Access-Control-Allow-Headers"] == (
            "'Content-Type,Idempotency-Key,Authorization'"
        )
        assert headers["method.response.header.Access-Control-Max-Age"] == "'7200'"
        assert headers["method.response.header.Access-Control-Expose-Headers"] == "'Retry-After'"
        assert headers["method.response.header.Access-Control-Allow-Origin"] == "'https://shop.example.com'"


def test_without_cors_origins_no_route_answers_a_preflight(dev):
    assert _preflights(dev) == {}


def test_the_functions_are_told_the_origins(prod):
    """The HTTP functions read CORS_ORIGINS (API Gateway's own refusals: test_gateway_responses.py)."""
    for function in ("intake", "coupons"):
        env = resources(prod, "AWS::Lambda::Function")[function_id(prod, function)]["Properties"]["Environment"]
        assert env["Variables"]["CORS_ORIGINS"] == "https://shop.example.com"


def test_any_origin_is_refused_where_the_public_routes_take_a_credential():
    context = copy.deepcopy(cdk_json_context()[CONTEXT_KEY])
    context["dev"]["api"]["corsOrigins"] = ["https://shop.example.com", "*"]
    with pytest.raises(CdkContextError, match=r"^dev\.api: corsOrigins '\*' lets any page call"):
        load(context, "dev")
