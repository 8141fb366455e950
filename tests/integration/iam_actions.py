"""What IAM must allow for each AWS API call the functions make, and why each permission that no
integration run observes is granted all the same.

``test_every_aws_call_a_function_made_is_allowed_by_its_role`` maps the calls the executor
recorded to these actions and checks them against the roles of the synthesized templates; a call
of an operation missing here fails the test until its action is named.
"""

from __future__ import annotations


def resource_arn(service: str, resource: str | None, region: str, account: str) -> str:
    """The ARN IAM evaluates for a call on ``resource`` as the executor recorded it (a queue's
    URL, a function's name, a secret's ARN); ``*`` for a call on no resource."""
    if resource is None:
        return "*"
    if resource.startswith("arn:"):
        return resource
    if service == "sqs":  # .../<account>/<name>, whatever the endpoint's form
        queue_account, name = resource.rstrip("/").rsplit("/", 2)[-2:]
        return f"arn:aws:sqs:{region}:{queue_account}:{name}"
    if service == "lambda":
        return f"arn:aws:lambda:{region}:{account}:function:{resource}"
    raise KeyError(f"no ARN known for a {service} resource {resource!r}: name how IAM sees it here")


OPERATION_ACTIONS = {
    ("sqs", "SendMessage"): "sqs:SendMessage",
    ("sqs", "SendMessageBatch"): "sqs:SendMessage",
    ("lambda", "Invoke"): "lambda:InvokeFunction",
    ("secretsmanager", "GetSecretValue"): "secretsmanager:GetSecretValue",
}

_ENI = "Lambda's own use of the role for a function in a VPC: it creates, describes and deletes the ENIs"
_XRAY = "X-Ray's daemon in the Lambda environment sends the trace segments (active tracing), not our code"
_LOGS = "Lambda writes the function's logs with the role"
_MAPPING = "the event source mapping uses the function's role, not the function's code"
_KAFKA = "Kafka's data-plane actions, checked by MSK on each request of the IAM-authenticated connection"

UNOBSERVED_GRANTS = {
    "ec2:AssignPrivateIpAddresses": _ENI,
    "ec2:CreateNetworkInterface": _ENI,
    "ec2:DeleteNetworkInterface": _ENI,
    "ec2:DescribeNetworkInterfaces": _ENI,
    "ec2:DescribeSubnets": _ENI,
    "ec2:UnassignPrivateIpAddresses": _ENI,
    "ec2:DescribeVpcs": f"{_MAPPING} (MSK: AWSLambdaMSKExecutionRole's actions)",
    "ec2:DescribeSecurityGroups": f"{_MAPPING} (MSK: AWSLambdaMSKExecutionRole's actions)",
    "kafka:DescribeClusterV2": f"{_MAPPING} (MSK)",
    "kafka:GetBootstrapBrokers": f"{_MAPPING} (MSK)",
    "kafka-cluster:Connect": _KAFKA,
    "kafka-cluster:DescribeTopic": _KAFKA,
    "kafka-cluster:ReadData": _KAFKA,
    "kafka-cluster:WriteData": _KAFKA,
    "kafka-cluster:WriteDataIdempotently": _KAFKA,
    "kafka-cluster:DescribeGroup": _KAFKA,
    "kafka-cluster:AlterGroup": f"{_KAFKA}; the mapping commits the worker group's offsets",
    "kafka-cluster:DescribeClusterDynamicConfiguration": f"{_KAFKA}; the mapping reads it",
    "kafka-cluster:CreateTopic": f"{_KAFKA}; the topic function, at deploy time only",
    "kafka-cluster:AlterTopic": f"{_KAFKA}; the topic function, at deploy time only",
    "elasticache:Connect": "checked by ElastiCache when an IAM token authenticates a connection; the local Valkey "
    "takes no credentials (docs/architecture.md, Fidelity)",
    "secretsmanager:GetSecretValue": "the database secret on AWS; locally the functions get DATABASE_URL",
    "secretsmanager:DescribeSecret": "granted with GetSecretValue by CDK's grant_read; the functions do not call it",
    "logs:CreateLogGroup": _LOGS,
    "logs:CreateLogStream": _LOGS,
    "logs:PutLogEvents": _LOGS,
    "xray:PutTraceSegments": _XRAY,
    "xray:PutTelemetryRecords": _XRAY,
    "sqs:ReceiveMessage": f"{_MAPPING} (SQS: the DLQ handler's)",
    "sqs:DeleteMessage": f"{_MAPPING} (SQS)",
    "sqs:ChangeMessageVisibility": f"{_MAPPING} (SQS)",
    "sqs:GetQueueAttributes": f"{_MAPPING} (SQS), and CDK's grant_send_messages grants it with SendMessage",
    "sqs:GetQueueUrl": "CDK's grant_send_messages grants it with SendMessage; the functions use the queue's URL",
    "sqs:SendMessage": "Lambda sends a failed scheduled run to the FailedRuns queue with the role (on AWS only)",
}
