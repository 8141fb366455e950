"""Which deployment the command talks to, and as whom.

The operator's identity is botocore's credential chain, as the AWS CLI uses it (``--profile`` or
``AWS_PROFILE``, SSO, environment variables, a role): nothing is pasted or stored here. The
deployment is found by its environment's name, the stack ``Coupons-<env>`` that ``make deploy
ENV=<env>`` made, whose outputs name the API's URL and what the live view reads (the dead letter
queue, the worker function, the metrics namespace); or given as an API URL alone, in which case
the view shows what the API says and names what it cannot read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import boto3
import botocore.credentials
import botocore.exceptions

from coupon_client.errors import NoCredentialsError, SessionExpiredError, UnknownEnvironmentError

STACK_PREFIX = "Coupons-"  # the CDK app's stack of each environment: Coupons-<env> (cdk/app.py)
SSO_EXPIRED = (botocore.exceptions.SSOError, botocore.exceptions.TokenRetrievalError)


@dataclass(frozen=True)
class Target:
    """A deployment: its API and the resources the live view reads (None when unknown)."""

    api_url: str
    region: str
    name: str | None = None  # the environment's name, when found by it
    dlq_url: str | None = None
    worker_function: str | None = None
    metrics_namespace: str | None = None
    aws_endpoint: str | None = None  # AWS's APIs through an endpoint of one's own (LocalStack)


def aws_session(profile: str | None, region: str | None) -> boto3.Session:
    """A session on botocore's chain (``profile`` or ``AWS_PROFILE``, SSO, environment, role), in
    ``region``, else ``AWS_REGION`` (as the AWS CLI v2 reads it), else botocore's own choice
    (``AWS_DEFAULT_REGION``, the profile's)."""
    try:
        return boto3.Session(profile_name=profile, region_name=region or os.environ.get("AWS_REGION"))
    except botocore.exceptions.ProfileNotFound as exc:
        raise NoCredentialsError(f"{exc}: name one of ~/.aws/config's profiles with --profile") from None


def credentials(session: boto3.Session) -> botocore.credentials.Credentials:
    """The session's credentials, checked now so that an expired SSO session is said before
    anything is sent; raises :class:`NoCredentialsError` or :class:`SessionExpiredError`."""
    found = session.get_credentials()
    if found is None:
        raise NoCredentialsError(
            "no AWS credentials: sign in (aws sso login --profile NAME, then --profile NAME), "
            "or set AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        )
    try:
        found.get_frozen_credentials()
    except SSO_EXPIRED:
        raise SessionExpiredError(f"the SSO session has expired: run aws sso login{_profile_flag(session)}") from None
    except botocore.exceptions.BotoCoreError as exc:
        raise NoCredentialsError(f"the AWS credentials could not be loaded: {exc}") from None
    return found


def region_of(session: boto3.Session) -> str:
    if not session.region_name:
        raise UnknownEnvironmentError("no AWS region: pass --region, or set AWS_REGION or a region in the profile")
    return str(session.region_name)


def find(session: boto3.Session, environment: str) -> Target:
    """The deployment of ``environment``, from its stack's outputs in the session's region."""
    region = region_of(session)
    stack_name = f"{STACK_PREFIX}{environment}"
    cloudformation = session.client("cloudformation")
    try:
        stacks = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    except botocore.exceptions.ClientError as exc:
        if "does not exist" not in str(exc):
            raise
        others = sorted(_deployed(cloudformation))
        known = f"; deployed here: {', '.join(others)}" if others else "; none is deployed here"
        raise UnknownEnvironmentError(
            f"no environment {environment!r} in {region} (no stack {stack_name}){known}"
        ) from None
    outputs = {item["OutputKey"]: item["OutputValue"] for item in stacks[0].get("Outputs", [])}
    endpoint = _aws_endpoint(cloudformation)
    if "ApiUrl" not in outputs:
        raise UnknownEnvironmentError(f"{stack_name} in {region} has no ApiUrl output: is its deploy finished?")
    return Target(
        api_url=reachable(outputs["ApiUrl"], endpoint),
        region=region,
        name=environment,
        dlq_url=outputs.get("DlqUrl"),
        worker_function=outputs.get("WorkerFunctionName"),
        metrics_namespace=outputs.get("MetricsNamespace"),
        aws_endpoint=endpoint,
    )


def reachable(api_url: str, aws_endpoint: str | None) -> str:
    """The URL to call the API at. On AWS, the stack's own. Through an endpoint of AWS's APIs of
    one's own (LocalStack: ``AWS_ENDPOINT_URL``), the stack's URL names a host only that
    endpoint's DNS knows, so the API is called through the endpoint's path for it instead,
    ``<endpoint>/_aws/execute-api/<api id>/<stage>``."""
    if aws_endpoint is None:
        return api_url
    parts = urlsplit(api_url)
    api_id, stage = (parts.hostname or "").split(".")[0], parts.path.strip("/").split("/")[0]
    return f"{aws_endpoint.rstrip('/')}/_aws/execute-api/{api_id}/{stage}"


def _aws_endpoint(client: Any) -> str | None:
    """The endpoint of AWS's APIs when it is not AWS's own (``AWS_ENDPOINT_URL``)."""
    configured = os.environ.get("AWS_ENDPOINT_URL")
    return str(client.meta.endpoint_url) if configured else None


def _deployed(cloudformation: Any) -> list[str]:
    """The environments deployed in the client's region, by name."""
    names = []
    for page in cloudformation.get_paginator("describe_stacks").paginate():
        for stack in page["Stacks"]:
            if stack["StackName"].startswith(STACK_PREFIX) and stack["StackStatus"] != "DELETE_COMPLETE":
                names.append(stack["StackName"].removeprefix(STACK_PREFIX))
    return names


def _profile_flag(session: boto3.Session) -> str:
    return f" --profile {session.profile_name}" if session.profile_name != "default" else ""
