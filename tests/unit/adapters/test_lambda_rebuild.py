"""The on-demand reconcile's Lambda call, against botocore's stubbed Lambda API."""

from __future__ import annotations

import io
import json

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from coupon_core.adapters.lambda_rebuild import RebuildInvoker
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
