"""checkov findings accepted on purpose, each with its reason, in one place to be reviewed (as
``nag.py`` is for cdk-nag).

``tests/infra/test_checkov.py`` runs checkov's CloudFormation rules on the dev, small and prod templates
and fails on a finding that no entry here accepts, and on an entry that no longer matches any
finding. An entry names the resources it covers by logical-id prefix, so that a new resource
failing the same check is not accepted silently.
"""

from __future__ import annotations

# The functions CDK itself adds: the AwsCustomResource that reads MSK's bootstrap brokers, the
# deploy-time trigger's provider, the default security group's restriction, and the topic
# custom resource's provider framework.
CDK_HELPERS = (
    "AWS679f53fac002430cb0da5b7982bd22872",
    "AWSCDKTriggerCustomResourceProvider",
    "CustomVpcRestrictDefaultSGCustomResourceProvider",
    "KafkaTopicsProviderframeworkonEvent",
)
NAMES = ("Intake", "Coupons", "Worker", "Dlq", "Builder", "Rebuild", "Relay", "Migrate", "Topic")  # our functions' ids
OUR_FUNCTIONS = tuple(f"{name}Function" for name in NAMES[:7])  # those that serve traffic
DEPLOY_TIME = tuple(f"{name}Function" for name in NAMES[7:])  # run by CloudFormation at deploy time
ROLES = tuple(f"{name}RoleDefaultPolicy" for name in NAMES)
LOG_GROUPS = (
    "AWSCDKTriggerCustomResourceProviderCustomResourceProviderLogGroup",
    "CustomVpcRestrictDefaultSGCustomResourceProviderLogGroup",
    "ApiAccessLogs",
    "NetworkFlowLogs",
    "KafkaBootstrapBrokersLogs",
    "KafkaBrokerLogs",
    "KafkaTopicsProviderLogs",
    *(f"{name}Logs" for name in NAMES),
)

ACCEPTED: dict[str, tuple[tuple[str, ...], str]] = {
    "CKV_AWS_27": (
        ("DeadLetters",),
        "The queues are encrypted at rest with SSE-SQS (SqsManagedSseEnabled), which checkov does not "
        "count; a customer key would add a KMS call per message and key grants for Lambda and the "
        "event source mappings, for readers that are only the stack's own roles.",
    ),
    "CKV_AWS_111": (
        ROLES,
        "The one statement without a resource is what AWS accepts no resource for: the ENI actions of a "
        "function in a VPC (ec2:CreateNetworkInterface and the rest) and X-Ray's PutTraceSegments and "
        "PutTelemetryRecords. Every data action names its resource (tests/infra/test_stack.py).",
    ),
    "CKV_AWS_115": (
        (*DEPLOY_TIME, *CDK_HELPERS),
        "Run only during a deployment, once or a few times, by CloudFormation: no load to bound. The "
        "functions that serve traffic have their concurrency set (cdk.json's concurrency).",
    ),
    "CKV_AWS_116": (
        (*OUR_FUNCTIONS, *DEPLOY_TIME, *CDK_HELPERS),
        "A function's DLQ serves asynchronous invocations only. The intake and the coupons function are "
        "invoked synchronously (API Gateway); the worker by the MSK mapping, whose failures go to the SQS "
        "DLQ (its on-failure destination); the DLQ handler by the SQS mapping, whose failures go to the "
        "redrive queue; the "
        "scheduled rebuild and relay keep their failed runs in the FailedRuns queue through an on-failure "
        "destination (EventInvokeConfig), which checkov does not read; the deploy-time functions are "
        "invoked synchronously by CloudFormation, which reports their failure.",
    ),
    "CKV_AWS_117": (
        CDK_HELPERS,
        "CDK's own helper functions call AWS APIs only (MSK, EC2, Lambda, CloudFormation) and reach no "
        "data store; every function of ours runs in the VPC.",
    ),
    "CKV_AWS_118": (
        ("DatabaseInstance",),
        "The alarms use CloudWatch's standard RDS metrics (CPU, connections) and the proxy's borrow "
        "latency; Enhanced Monitoring's OS metrics are an investigation's tool (docs/operations.md), "
        "not a standing cost.",
    ),
    "CKV_AWS_120": (
        ("ApiDeploymentStage",),
        "No caching, on purpose: every answer is a reservation, a user's status or an operator's change; "
        "a cached answer would be a wrong one.",
    ),
    "CKV_AWS_149": (
        ("Coupons", "EdgeHeaderSecret"),
        "The database secret and the edge's header are encrypted with Secrets Manager's AWS managed key; "
        "only the functions' roles and the proxy read the first, each granted by name, and only "
        "CloudFormation the second (coupon_cdk/edge.py).",
    ),
    "CKV_AWS_59": (
        ("ApicouponscouponIdavailabilityGET",),
        "A sale's availability is public in every environment: a shop's page reads it before a shopper "
        "signs in, and it tells no user's data; the edge caches it, and the web ACL and the stage's "
        "throttle count every request that reaches it (cdk-nag's APIG4 acceptance says the same).",
    ),
    "CKV_AWS_68": (
        ("EdgeDistribution",),
        "The web ACL is the API stage's (Regional), and it counts every request the edge lets through; "
        "a CloudFront web ACL must live in us-east-1 (cdk-nag's CFR2 acceptance says the same).",
    ),
    "CKV_AWS_86": (
        ("EdgeDistribution",),
        "The edge answers one public read from its cache; CloudFront's metrics count its requests, and "
        "the stage's access log holds every request that reaches the API.",
    ),
    "CKV_AWS_174": (
        ("EdgeDistribution",),
        "The distribution uses CloudFront's own domain and certificate, whose security policy CloudFront "
        "sets; a shop that puts its own domain in front sets TLSv1.2_2021 with its certificate.",
    ),
    "CKV_AWS_157": (
        ("DatabaseInstance",),
        "Only in dev, which is single-AZ to keep its cost down; prod is Multi-AZ (cdk.json, "
        "database.multiAz), as cdk-nag's RDS3 acceptance says.",
    ),
    "CKV_AWS_158": (
        LOG_GROUPS,
        "Log groups are encrypted by CloudWatch Logs with its own key. What they hold carries no "
        "personal data: the intake logs request ids, never user ids (the database maps one to the "
        "other for whoever may see it), and no secret is ever logged.",
    ),
    "CKV_AWS_161": (
        ("DatabaseInstance",),
        "The functions reach PostgreSQL only through RDS Proxy, over TLS, with the Secrets Manager "
        "secret; IAM database authentication would be the proxy's, a later step (docs/architecture.md).",
    ),
    "CKV_AWS_173": (
        (*OUR_FUNCTIONS, *DEPLOY_TIME, "KafkaTopicsProviderframeworkonEvent"),
        "Lambda encrypts environment variables at rest with its AWS managed key; they hold no secret "
        "(the database password is in Secrets Manager, the cache's and the brokers' tokens are signed "
        "at run time), only names, URLs and limits.",
    ),
}


def reason_for(check_id: str, logical_id: str) -> str | None:
    """The reason a finding is accepted, or None when nothing here accepts it."""
    entry = ACCEPTED.get(check_id)
    if entry is None:
        return None
    prefixes, reason = entry
    return reason if logical_id.startswith(prefixes) else None
