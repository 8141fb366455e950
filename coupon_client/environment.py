"""Which deployment the command talks to, and as whom.

The operator's identity is botocore's credential chain, as the AWS CLI uses it (``--profile`` or
``AWS_PROFILE``, SSO, environment variables, a role): nothing is pasted or stored here. The
deployment is found by its environment's name, the stack ``Coupons-<env>`` that ``make deploy
ENV=<env>`` made, whose outputs name the API's URL and what the live view reads (the dead letter
queue, the worker function, the metrics namespace); or given as an API URL alone, in which case
the view shows what the API says and names what it cannot read.

The environment ``local`` is the stack ``make up`` runs on LocalStack. ``make up`` writes what
reaching it takes (LocalStack's endpoint, region and test identity) to ``.local/stack.env`` in
the checkout, where the command finds it from the current directory or any folder above: no
export, and no real credential ever sent to an emulator.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import botocore.credentials
import botocore.exceptions

from coupon_client.errors import (
    CouponsError,
    ForbiddenError,
    NoAnswerError,
    NoCredentialsError,
    SessionExpiredError,
    TlsError,
    UnavailableError,
    UnknownEnvironmentError,
    UnreachableError,
)

STACK_PREFIX = "Coupons-"  # the CDK app's stack of each environment: Coupons-<env> (cdk/app.py)
LOCAL = "local"  # the environment make up runs (local/stack/control.py)
LOCAL_STACK_FILE = Path(".local") / "stack.env"
SSO_EXPIRED = (botocore.exceptions.SSOError, botocore.exceptions.TokenRetrievalError)
EXPIRED_CODES = frozenset({"ExpiredToken", "ExpiredTokenException", "RequestExpired"})
INVALID_CODES = frozenset({"InvalidClientTokenId", "UnrecognizedClientException", "SignatureDoesNotMatch",
                           "InvalidSignatureException"})  # fmt: skip
DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})
THROTTLED_CODES = frozenset({"Throttling", "ThrottlingException", "TooManyRequestsException", "RequestLimitExceeded"})


@dataclass(frozen=True)
class Target:
    """A deployment: its API and the resources the live view reads (None when unknown)."""

    api_url: str
    region: str
    name: str | None = None  # the environment's name, when found by it
    dlq_url: str | None = None
    worker_function: str | None = None
    metrics_namespace: str | None = None
    intake_log_group: str | None = None  # where the intake's metrics lines are (coupons fairness)
    aws_endpoint: str | None = None  # AWS's APIs through an endpoint of one's own (LocalStack)


@dataclass(frozen=True)
class LocalStack:
    """What ``make up`` wrote for reaching the local stack's AWS APIs (LocalStack)."""

    endpoint: str
    region: str
    access_key_id: str
    secret_access_key: str


def local_stack(start: Path) -> LocalStack:
    """The local stack described by ``.local/stack.env`` in ``start`` or the nearest folder above."""
    for folder in (start, *start.parents):
        found = folder / LOCAL_STACK_FILE
        if found.is_file():
            lines = found.read_text().splitlines()
            env = dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
            try:
                return LocalStack(env["AWS_ENDPOINT_URL"], env["AWS_REGION"], env["AWS_ACCESS_KEY_ID"],
                                  env["AWS_SECRET_ACCESS_KEY"])  # fmt: skip
            except KeyError as exc:
                raise UnknownEnvironmentError(f"{found} has no {exc.args[0]}: run make down, then make up") from None
    raise UnknownEnvironmentError(
        f"no local stack: no {LOCAL_STACK_FILE} in {start} or above (make up writes it in the checkout; "
        "run coupons from inside it)"
    )


def aws_session(profile: str | None, region: str | None, local: LocalStack | None = None) -> boto3.Session:
    """A session on botocore's chain (``profile`` or ``AWS_PROFILE``, SSO, environment, role), in
    ``region``, else ``AWS_REGION`` (as the AWS CLI v2 reads it), else botocore's own choice
    (``AWS_DEFAULT_REGION``, the profile's). On the local stack, its test identity instead."""
    if local is not None:
        return boto3.Session(aws_access_key_id=local.access_key_id, aws_secret_access_key=local.secret_access_key,
                             region_name=region or local.region)  # fmt: skip
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


def region_in(api_url: str) -> str | None:
    """The region an API's own URL names (``https://ID.execute-api.REGION.amazonaws.com/STAGE``)."""
    host = urlsplit(api_url).hostname or ""
    parts = host.split(".")
    return parts[2] if len(parts) == 5 and parts[1] == "execute-api" and host.endswith(".amazonaws.com") else None


def region_of(session: boto3.Session) -> str:
    if not session.region_name:
        raise UnknownEnvironmentError("no AWS region: pass --region, or set AWS_REGION or a region in the profile")
    return str(session.region_name)


def find(session: boto3.Session, environment: str, endpoint: str | None = None) -> Target:
    """The deployment of ``environment``, from its stack's outputs in the session's region
    (through ``endpoint`` when AWS's APIs are reached at one's own, such as LocalStack's)."""
    region = region_of(session)
    stack_name = f"{STACK_PREFIX}{environment}"
    cloudformation = session.client("cloudformation", endpoint_url=endpoint)
    try:
        with aws_errors("cloudformation:DescribeStacks", endpoint):
            stacks = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    except botocore.exceptions.ClientError as exc:
        if "does not exist" not in str(exc):
            raise
        with aws_errors("cloudformation:DescribeStacks", endpoint):
            others = sorted(_deployed(cloudformation))
        known = f"; deployed here: {', '.join(others)}" if others else "; none is deployed here"
        raise UnknownEnvironmentError(
            f"no environment {environment!r} in {region} (no stack {stack_name}){known}"
        ) from None
    outputs = {item["OutputKey"]: item["OutputValue"] for item in stacks[0].get("Outputs", [])}
    if "ApiUrl" not in outputs:
        raise UnknownEnvironmentError(f"{stack_name} in {region} has no ApiUrl output: is its deploy finished?")
    return Target(
        api_url=reachable(outputs["ApiUrl"], endpoint),
        region=region,
        name=environment,
        dlq_url=outputs.get("DlqUrl"),
        worker_function=outputs.get("WorkerFunctionName"),
        metrics_namespace=outputs.get("MetricsNamespace"),
        # LocalStack writes a function's lines to its default group, not the one its logging
        # configuration names (docs/architecture.md, where the local stack differs)
        intake_log_group=f"/aws/lambda/{outputs['IntakeFunctionName']}"
        if environment == LOCAL and "IntakeFunctionName" in outputs
        else outputs.get("IntakeLogGroup"),
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


@contextmanager
def aws_errors(action: str, endpoint: str | None, meaning: Mapping[str, CouponsError] | None = None) -> Iterator[None]:
    """A failed call of AWS's API ``action`` as the one error its cause is, ``meaning`` first (what
    an error code means to this call); an error code neither knows is left to the caller
    (``ClientError``)."""
    where = endpoint or "AWS"
    try:
        yield
    except (botocore.exceptions.EndpointConnectionError, botocore.exceptions.ConnectTimeoutError) as exc:
        raise UnreachableError(f"could not connect to {where} for {action}: {exc}; nothing was sent") from None
    except botocore.exceptions.SSLError as exc:
        raise TlsError(f"TLS failed with {where} for {action}: {exc}; nothing was sent") from None
    except (botocore.exceptions.ReadTimeoutError, botocore.exceptions.ConnectionClosedError) as exc:
        raise NoAnswerError(f"no answer from {where} to {action} ({exc}): a read, nothing changed; try again") from None
    except botocore.exceptions.ClientError as exc:
        error = _refused(exc, action, meaning or {})
        if error is None:
            raise
        raise error from None


def _refused(
    exc: botocore.exceptions.ClientError, action: str, meaning: Mapping[str, CouponsError]
) -> CouponsError | None:
    code = exc.response.get("Error", {}).get("Code", "")
    said = exc.response.get("Error", {}).get("Message", code)
    if code in meaning:
        return meaning[code]
    if code in EXPIRED_CODES:
        return SessionExpiredError(f"AWS refused the credentials as expired ({code}: {said}): sign in again")
    if code in INVALID_CODES:
        return NoCredentialsError(f"AWS refused the credentials or the signature ({code}: {said})")
    if code in DENIED_CODES:
        return ForbiddenError(f"your identity may not call {action} ({code}: {said})")
    if code in THROTTLED_CODES:  # botocore's own retries spent
        return UnavailableError(f"AWS throttled {action} ({code}: {said}): nothing changed; try again shortly")
    return None


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
