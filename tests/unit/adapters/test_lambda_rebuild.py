"""The rebuild code's two synchronous calls (the builder's build of a missing state, the rebuild's
reconcile on demand), against botocore's stubbed Lambda API."""

from __future__ import annotations

import io
import json

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber
from moto import mock_aws

from coupon_core.adapters.lambda_rebuild import BuilderInvoker
from coupon_core.adapters.lambda_reconcile import RebuildInvoker
from coupon_core.domain.reservations import STATE_BUILD_TIMEOUT_S, MissingState
from coupon_core.errors import UnavailableError


def payload(document: object) -> StreamingBody:
    raw = json.dumps(document).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


@pytest.fixture
def lambda_client():
    client = boto3.client("lambda", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stubber:
        yield client, stubber


def test_the_report_of_the_rebuild_for_the_coupon(lambda_client):
    client, stubber = lambda_client
    expected = {"FunctionName": "Coupons-dev-rebuild", "Payload": b'{"couponId": 42}'}
    stubber.add_response("invoke", {"StatusCode": 200, "Payload": payload({"reconciled": []})}, expected)
    assert RebuildInvoker("Coupons-dev-rebuild", client).reconcile(42) == {"reconciled": []}


def test_a_failed_rebuild_is_unavailable_with_its_message(lambda_client):
    client, stubber = lambda_client
    failed = {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": payload({"errorMessage": "Redis gone"})}
    stubber.add_response("invoke", failed)
    with pytest.raises(UnavailableError, match="rebuild function failed: Redis gone"):
        RebuildInvoker("rebuild", client).reconcile(1)


def test_an_unreachable_lambda_is_unavailable(lambda_client):
    client, stubber = lambda_client
    stubber.add_client_error("invoke", "TooManyRequestsException", "Rate exceeded")
    with pytest.raises(UnavailableError, match="rebuild function unreachable"):
        RebuildInvoker("rebuild", client).reconcile(1)


@pytest.mark.parametrize("state", sorted(set(MissingState) - {MissingState.BUILD}))
def test_a_missing_state_is_built_by_the_builder_and_its_outcome_read_back(lambda_client, state):
    client, stubber = lambda_client
    expected = {"FunctionName": "builder", "Payload": b'{"stateMissing": 42}'}
    stubber.add_response("invoke", {"StatusCode": 200, "Payload": payload({"couponId": 42, "state": state})}, expected)
    assert BuilderInvoker("builder", client).build(42) is state


@pytest.mark.parametrize(
    "reply", [{"reconciled": []}, {"state": "MAYBE"}, {"state": "BUILD"}, {"state": ["READY"]}, [1], "READY"]
)
def test_a_reply_that_is_not_a_state_build_is_unavailable(lambda_client, reply):
    client, stubber = lambda_client
    stubber.add_response("invoke", {"StatusCode": 200, "Payload": payload(reply)})
    with pytest.raises(UnavailableError, match="builder function replied"):
        BuilderInvoker("builder", client).build(1)


def test_a_throttled_state_build_is_unavailable(lambda_client):
    client, stubber = lambda_client
    stubber.add_client_error("invoke", "TooManyRequestsException", "Rate exceeded", http_status_code=429)
    with pytest.raises(UnavailableError, match="TooManyRequestsException"):
        BuilderInvoker("builder", client).build(1)


def test_the_intakes_client_tries_once_within_its_bound(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    invoker = BuilderInvoker("builder")
    with mock_aws(), pytest.raises(UnavailableError, match="builder function unreachable"):
        invoker.build(1)  # no such function: its client is made on this first use, and tries once
    config = invoker._client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (1, STATE_BUILD_TIMEOUT_S)
    assert config.retries["total_max_attempts"] == 1


@pytest.mark.parametrize(
    ("invoker", "variable"),
    [(BuilderInvoker(None, client=object()).build, "BUILDER_FUNCTION"),
     (RebuildInvoker(None, client=object()).reconcile, "REBUILD_FUNCTION")],
)  # fmt: skip
def test_without_its_function_every_call_is_unavailable_and_names_the_variable(invoker, variable):
    """A client that would fail if it were called: nothing is invoked."""
    with pytest.raises(UnavailableError, match=f"{variable} is not set"):
        invoker(1)


def test_a_client_that_cannot_be_made_is_unavailable_not_an_escape(monkeypatch, tmp_path):
    """botocore's refusal to make the client (no region here) is the function unreachable, as a
    failed invoke is: the intake answers 503, never lets it escape."""
    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))

    with pytest.raises(UnavailableError, match="builder function unreachable: NoRegionError"):
        BuilderInvoker("builder").build(1)
    with pytest.raises(UnavailableError, match="rebuild function unreachable: NoRegionError"):
        RebuildInvoker("rebuild").reconcile(1)
