"""Which deployment and which identity: the stack's outputs through CloudFormation (moto), and
botocore's credential chain as the AWS CLI reads it (environment, profiles, SSO)."""

from __future__ import annotations

import hashlib
import json

import boto3
import pytest
from moto import mock_aws

from coupon_client import environment
from coupon_client.cli import Options
from coupon_client.errors import NoCredentialsError, SessionExpiredError, UnknownEnvironmentError
from coupon_client.output import Format
from local.stack import control

API_URL = "https://abc123.execute-api.eu-west-1.amazonaws.com/dev/"
START_URL = "https://example.awsapps.com/start"


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield


def deploy(name: str, outputs: dict[str, str]) -> None:
    template = {
        "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name="eu-west-1").create_stack(
        StackName=name, TemplateBody=json.dumps(template)
    )


def test_an_environment_is_found_by_its_stacks_outputs(aws):
    deploy("Coupons-dev", {"ApiUrl": API_URL, "DlqUrl": "https://sqs/dlq", "WorkerFunctionName": "worker",
                           "MetricsNamespace": "CouponSystem-dev"})  # fmt: skip

    target = environment.find(environment.aws_session(None, "eu-west-1"), "dev")

    assert target == environment.Target(
        api_url=API_URL, region="eu-west-1", name="dev", dlq_url="https://sqs/dlq", worker_function="worker",
        metrics_namespace="CouponSystem-dev",
    )  # fmt: skip


def test_an_unknown_environment_names_those_deployed_in_the_region(aws):
    deploy("Coupons-dev", {"ApiUrl": API_URL})
    deploy("Coupons-small", {"ApiUrl": API_URL})
    deploy("Unrelated", {"ApiUrl": API_URL})

    with pytest.raises(
        UnknownEnvironmentError, match=r"no environment 'prod' in eu-west-1 .*deployed here: dev, small$"
    ):
        environment.find(environment.aws_session(None, "eu-west-1"), "prod")


def test_no_region_is_said(aws):
    with pytest.raises(UnknownEnvironmentError, match="no AWS region"):
        environment.find(environment.aws_session(None, None), "dev")


def test_aws_region_is_read_as_the_aws_cli_reads_it(aws, monkeypatch):
    monkeypatch.setenv("AWS_REGION", "ap-northeast-2")
    assert environment.region_of(environment.aws_session(None, None)) == "ap-northeast-2"
    assert environment.region_of(environment.aws_session(None, "eu-west-1")) == "eu-west-1"


def test_through_an_endpoint_of_ones_own_the_api_is_called_by_the_endpoints_path():
    assert environment.reachable(API_URL, None) == API_URL
    assert (environment.reachable("https://qu2wssvcdd.execute-api.127.0.0.1:4566/local/", "http://127.0.0.1:4566")
            == "http://127.0.0.1:4566/_aws/execute-api/qu2wssvcdd/local")  # fmt: skip


@pytest.fixture
def aws_config(monkeypatch, tmp_path):
    """An empty home: no credentials but what the test writes into ~/.aws/config."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / ".aws" / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / ".aws" / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    (tmp_path / ".aws" / "sso" / "cache").mkdir(parents=True)
    (tmp_path / ".aws" / "config").write_text(
        f"""[profile ops]
sso_session = corp
sso_account_id = 123456789012
sso_role_name = Operator
region = eu-west-1

[profile legacy]
sso_start_url = {START_URL}
sso_region = eu-west-1
sso_account_id = 123456789012
sso_role_name = Operator

[sso-session corp]
sso_start_url = {START_URL}
sso_region = eu-west-1
"""
    )
    return tmp_path


def expired_sso_token(home, cache_key: str) -> None:
    name = hashlib.sha1(cache_key.encode()).hexdigest()
    token = {"startUrl": START_URL, "region": "eu-west-1", "accessToken": "x", "expiresAt": "2020-01-01T00:00:00Z"}
    (home / ".aws" / "sso" / "cache" / f"{name}.json").write_text(json.dumps(token))


def test_no_credentials_is_said(aws_config):
    with pytest.raises(NoCredentialsError, match="no AWS credentials"):
        environment.credentials(environment.aws_session(None, "eu-west-1"))


def test_an_unknown_profile_is_said(aws_config):
    with pytest.raises(NoCredentialsError, match="nobody"):
        environment.aws_session("nobody", None)


@pytest.mark.parametrize(("profile", "cache_key"), [("ops", "corp"), ("legacy", START_URL)])
def test_an_expired_sso_session_says_to_sign_in_again(aws_config, profile, cache_key):
    expired_sso_token(aws_config, cache_key)

    with pytest.raises(SessionExpiredError, match=f"run aws sso login --profile {profile}"):
        environment.credentials(environment.aws_session(profile, None))


def test_a_profile_is_used_as_the_aws_cli_uses_it(aws_config):
    (aws_config / ".aws" / "credentials").write_text(
        "[static]\naws_access_key_id = AKIDSTATIC\naws_secret_access_key = secret\n"
    )

    found = environment.credentials(environment.aws_session("static", "eu-west-1"))

    assert found.get_frozen_credentials().access_key == "AKIDSTATIC"


def write_stack_env(folder, endpoint: str) -> None:
    (folder / ".local").mkdir(parents=True)
    lines = {**control.OPERATOR, "AWS_ENDPOINT_URL": endpoint, "REDIS_URL": "rediss://127.0.0.1:1"}
    (folder / ".local" / "stack.env").write_text("".join(f"{k}={v}\n" for k, v in lines.items()))


def test_make_up_writes_what_the_local_environment_reads():
    assert environment.LOCAL == control.STACK.removeprefix(environment.STACK_PREFIX) == control.OPERATOR["COUPONS_ENV"]
    assert {"AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= set(control.OPERATOR)
    # the AWS CLI v1 reads the region from AWS_DEFAULT_REGION only, v2 from either
    assert control.OPERATOR["AWS_DEFAULT_REGION"] == control.OPERATOR["AWS_REGION"]


def test_the_local_stack_is_found_from_any_folder_of_the_checkout(tmp_path):
    write_stack_env(tmp_path, "http://127.0.0.1:4566")
    inside = tmp_path / "docs" / "deeper"
    inside.mkdir(parents=True)

    found = environment.local_stack(inside)

    assert found == environment.LocalStack("http://127.0.0.1:4566", "us-east-1", "test", "test")


def test_no_local_stack_is_said_with_what_to_do(tmp_path):
    with pytest.raises(
        UnknownEnvironmentError, match=r"no local stack: no \.local/stack\.env in .* \(make up writes it"
    ):
        environment.local_stack(tmp_path)


def test_the_local_environment_is_reached_with_the_stacks_identity_not_the_operators(
    moto_endpoint, tmp_path, monkeypatch
):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAOPERATOR")  # a real identity, which must not be sent
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "operator-secret")
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    write_stack_env(tmp_path, moto_endpoint)
    api_url = "https://abc123.execute-api.localhost.localstack.cloud:4566/local/"
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}, "Outputs": {"ApiUrl": {"Value": api_url}}}
    cloudformation = boto3.client("cloudformation", region_name="us-east-1", endpoint_url=moto_endpoint,
                                  aws_access_key_id="test", aws_secret_access_key="test")  # fmt: skip
    cloudformation.create_stack(StackName="Coupons-local", TemplateBody=json.dumps(template))
    monkeypatch.chdir(tmp_path)

    session = Options("local", None, None, None, None, Format.JSON, debug=False, read_timeout=5).session()
    target = session.target()

    assert target.api_url == f"{moto_endpoint}/_aws/execute-api/abc123/local"
    assert (target.region, target.aws_endpoint) == ("us-east-1", moto_endpoint)
    assert session.credentials().get_frozen_credentials().access_key == "test"
