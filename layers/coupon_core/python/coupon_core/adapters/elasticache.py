"""The Redis client of a function: to a local server as it is, or to ElastiCache with IAM.

ElastiCache IAM authentication, as AWS documents it (https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/auth-iam.html),
and where each rule is kept:

- The password is a token: a SigV4-presigned ``GET https://<cache>/?Action=connect&User=<user>``
  (with ``&ResourceType=ServerlessCache`` for a serverless cache), service ``elasticache``, sent
  without its scheme in ``AUTH``/``HELLO``, the user's id as the user name. Signed here with the
  execution role's credentials (``aws_credentials.resolved_once``).
- A token is valid for 15 minutes: a new one is signed for every new connection
  (redis-py asks the :class:`ElastiCacheIamCredentials` provider each time), never cached.
- ElastiCache closes an IAM-authenticated connection after 12 hours: ``lua_redis.client.connect``
  reconnects, with a fresh token, a connection older than ``lua_redis.client.MAX_CONNECTION_AGE_S``.
- IAM authentication needs TLS (``rediss://``, checked by the settings) and Valkey 7.2 or later,
  an IAM-enabled user whose name equals its id, in a user group attached to the cache, and
  ``elasticache:Connect`` on the cache and the user (the CDK stack; tests/infra/test_aws_rules.py).
"""

from __future__ import annotations

from urllib.parse import urlencode

import redis
from redis.credentials import CredentialProvider

from coupon_core.settings import RedisSettings
from lua_redis.client import connect

TOKEN_LIFETIME_S = 900  # the longest ElastiCache accepts


class ElastiCacheIamCredentials(CredentialProvider):
    """``(user, token)`` for each new connection to ``cache_name`` as the IAM-enabled ``user``."""

    def __init__(self, user: str, cache_name: str, region: str, *, serverless: bool) -> None:
        self._user = user
        self._cache_name = cache_name
        self._region = region
        self._serverless = serverless

    def get_credentials(self) -> tuple[str, str]:
        return self._user, self.token()

    def token(self) -> str:
        """A presigned ``connect`` request, without its scheme."""
        # Imported on the first token: botocore, which only REDIS_AUTH=iam needs.
        from botocore.auth import SigV4QueryAuth  # noqa: PLC0415
        from botocore.awsrequest import AWSRequest  # noqa: PLC0415

        from coupon_core.adapters.aws_credentials import resolved_once  # noqa: PLC0415

        query = {"Action": "connect", "User": self._user}
        if self._serverless:
            query["ResourceType"] = "ServerlessCache"
        request = AWSRequest(method="GET", url=f"https://{self._cache_name}/?{urlencode(query)}")
        credentials = resolved_once("REDIS_AUTH=iam").load()
        SigV4QueryAuth(credentials, "elasticache", self._region, expires=TOKEN_LIFETIME_S).add_auth(request)
        return str(request.url).removeprefix("https://")


def redis_client(settings: RedisSettings, *, socket_timeout: float = 2.0) -> redis.Redis:
    """A client of the cache ``settings`` name, authenticated as they say (``lua_redis.client.connect``)."""
    if settings.auth == "none":
        return connect(settings.url, socket_timeout=socket_timeout)
    user, cache_name, region = settings.user, settings.cache_name, settings.region
    assert user is not None  # REDIS_AUTH=iam requires all three (RedisSettings checks it)
    assert cache_name is not None
    assert region is not None
    credentials = ElastiCacheIamCredentials(user, cache_name, region, serverless=settings.cache_kind == "serverless")
    return connect(settings.url, socket_timeout=socket_timeout, credential_provider=credentials)
