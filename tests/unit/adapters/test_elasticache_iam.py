"""ElastiCache IAM auth tokens: what AWS's documented example signs (botocore's RequestSigner
presigning a ``connect`` request), signed anew for every connection, with credentials found once."""

from __future__ import annotations

import datetime
from urllib.parse import parse_qs, urlencode, urlsplit

import botocore.auth
import botocore.session
import pytest
import redis
from botocore.model import ServiceId
from botocore.signers import RequestSigner

from coupon_core.errors import NoCredentialsError
from coupon_core.settings import RedisSettings
from lua_redis.client import TOKEN_LIFETIME_S, ElastiCacheIamCredentials, redis_client

REGION, USER, CACHE = "eu-west-1", "coupons-dev-app", "coupons-dev"


pytestmark = pytest.mark.usefixtures("lambda_credentials")


def documented_token(*, serverless: bool) -> str:
    """The token as the ElastiCache guide's Python example makes it (auth-iam.html, Connecting)."""
    session = botocore.session.get_session()
    signer = RequestSigner(
        ServiceId("elasticache"),
        REGION,
        "elasticache",
        "v4",
        session.get_credentials(),
        session.get_component("event_emitter"),
    )
    query = {"Action": "connect", "User": USER} | ({"ResourceType": "ServerlessCache"} if serverless else {})
    url = f"https://{CACHE}/?{urlencode(query)}"
    signed = signer.generate_presigned_url(
        {"method": "GET", "url": url, "body": {}, "headers": {}, "context": {}},
        operation_name="connect",
        expires_in=900,
        region_name=REGION,
    )
    return signed.removeprefix("https://")


@pytest.mark.parametrize("serverless", [True, False])
def test_the_token_is_the_documented_presigned_connect_request(serverless):
    user, token = ElastiCacheIamCredentials(USER, CACHE, REGION, serverless=serverless).get_credentials()

    assert user == USER  # the IAM-enabled user's name, which is its id
    assert token == documented_token(serverless=serverless)
    assert not token.startswith("https://")  # ElastiCache takes it without the scheme
    parts = urlsplit(f"https://{token}")
    query = parse_qs(parts.query)
    assert parts.netloc == CACHE
    assert query["Action"] == ["connect"]
    assert query["User"] == [USER]
    assert query.get("ResourceType") == (["ServerlessCache"] if serverless else None)
    assert query["X-Amz-Expires"] == [str(TOKEN_LIFETIME_S)] == ["900"]  # 15 minutes, the longest allowed
    assert query["X-Amz-Credential"] == [f"ASIAEXAMPLEKEY/20261201/{REGION}/elasticache/aws4_request"]
    assert query["X-Amz-Security-Token"] == ["example-session-token"]


def test_every_new_connection_gets_a_token_of_its_own_and_the_chain_is_walked_once(monkeypatch, botocore_sessions):
    provider = ElastiCacheIamCredentials(USER, CACHE, REGION, serverless=True)
    first = provider.get_credentials()[1]
    fourteen_minutes_on = datetime.datetime(2026, 12, 1, 9, 44, 0)  # the fixtures sign at 09:30
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: fourteen_minutes_on)
    later = provider.get_credentials()[1]

    assert first != later  # signed again, not a cached token that would expire under a new connection
    assert parse_qs(urlsplit(f"https://{later}").query)["X-Amz-Date"] == ["20261201T094400Z"]
    assert len(botocore_sessions) == 1


def test_without_credentials_the_error_names_the_setting(monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    with pytest.raises(NoCredentialsError, match="REDIS_AUTH=iam, but no AWS credentials were found"):
        ElastiCacheIamCredentials(USER, CACHE, REGION, serverless=True).get_credentials()


def test_the_client_carries_the_provider_only_with_iam_and_speaks_tls():
    iam = RedisSettings.from_env({"REDIS_URL": "rediss://cache.example:6379", "REDIS_AUTH": "iam", "REDIS_USER": USER,
                                  "REDIS_CACHE_NAME": CACHE, "AWS_REGION": REGION})  # fmt: skip
    plain = RedisSettings.from_env({"REDIS_URL": "redis://127.0.0.1:6379/0"})

    iam_pool, plain_pool = redis_client(iam).connection_pool, redis_client(plain).connection_pool

    assert isinstance(iam_pool.connection_kwargs["credential_provider"], ElastiCacheIamCredentials)
    assert issubclass(iam_pool.connection_class, redis.SSLConnection)
    assert not issubclass(plain_pool.connection_class, redis.SSLConnection)
    assert plain_pool.connection_kwargs.get("credential_provider") is None
