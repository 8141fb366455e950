"""MSK IAM tokens: the signer library's own token, with the credentials looked up once."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, urlsplit

import pytest
from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

from coupon_core.adapters.kafka.connection import MskIamTokenProvider
from coupon_core.errors import NoCredentialsError

REGION = "eu-west-1"


pytestmark = pytest.mark.usefixtures("lambda_credentials")


def signed_url(token: str) -> dict[str, list[str]]:
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    assert urlsplit(url).netloc == f"kafka.{REGION}.amazonaws.com"
    return parse_qs(urlsplit(url).query)


def test_the_token_is_the_one_the_signer_makes_through_its_default_chain():
    token = MskIamTokenProvider(REGION).token()

    assert token == MSKAuthTokenProvider.generate_auth_token(REGION)[0]
    query = signed_url(token)
    assert query["Action"] == ["kafka-cluster:Connect"]
    assert query["X-Amz-Credential"] == [f"ASIAEXAMPLEKEY/20261201/{REGION}/kafka-cluster/aws4_request"]
    assert query["X-Amz-Security-Token"] == ["example-session-token"]
    assert query["X-Amz-Date"] == ["20261201T093000Z"]


def test_the_credential_chain_is_walked_once_for_every_connection(botocore_sessions):
    provider = MskIamTokenProvider(REGION)

    tokens = {provider.token() for _ in range(3)}

    assert len(botocore_sessions) == 1
    assert len(tokens) == 1  # the same second, the same credentials: the same presigned URL


def test_without_credentials_the_error_says_so_and_the_next_token_looks_again(monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    provider = MskIamTokenProvider(REGION)

    with pytest.raises(NoCredentialsError, match="KAFKA_AUTH=iam, but no AWS credentials were found"):
        provider.token()

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "ASIALATERKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "later-secret")
    assert signed_url(provider.token())["X-Amz-Credential"][0].startswith("ASIALATERKEY/")
