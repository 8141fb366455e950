"""The functions' Redis client (:func:`redis_client`): one that fails fast, renews its connection
before ElastiCache closes it, authenticates with IAM on ElastiCache, and whose driver errors
become the domain's (:data:`redis_unavailable`); and the Lua scripts, registered on it by each
adapter that runs them (:func:`register`).

redis-py's ``Script`` calls EVALSHA and, on NOSCRIPT (a failover, a restart, SCRIPT FLUSH),
loads the script and retries once: one round trip on the hot path, reload only when needed.

ElastiCache IAM authentication, as AWS documents it (https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/auth-iam.html),
and where each rule is kept:

- The password is a token: a SigV4-presigned ``GET https://<cache>/?Action=connect&User=<user>``
  (with ``&ResourceType=ServerlessCache`` for a serverless cache), service ``elasticache``, sent
  without its scheme in ``AUTH``/``HELLO``, the user's id as the user name. Signed here with the
  execution role's credentials (``aws_credentials.resolved_once``).
- A token is valid for 15 minutes: a new one is signed for every new connection
  (redis-py asks the :class:`ElastiCacheIamCredentials` provider each time), never cached.
- ElastiCache closes an IAM-authenticated connection after 12 hours: ``connect``
  reconnects, with a fresh token, a connection older than :data:`MAX_CONNECTION_AGE_S`.
- IAM authentication needs TLS (``rediss://``, checked by the settings) and Valkey 7.2 or later,
  an IAM-enabled user whose name equals its id, in a user group attached to the cache, and
  ``elasticache:Connect`` on the cache and the user (the CDK stack; tests/infra/test_aws_rules.py).
"""

from __future__ import annotations

import time
from importlib.resources import files
from typing import Any
from urllib.parse import urlencode

import redis
from redis.backoff import NoBackoff
from redis.commands.core import Script
from redis.credentials import CredentialProvider
from redis.retry import Retry

from coupon_core.errors import Reraise, StateUnavailableError
from coupon_core.settings import RedisSettings

# ElastiCache closes an IAM-authenticated connection after 12 hours; an hour's margin.
MAX_CONNECTION_AGE_S = 11 * 3600
_clock = time.monotonic  # a connection's age; tests move it

# Every call that reaches Redis runs under this (a ``with`` block, a decorator, or in place).
redis_unavailable = Reraise(
    StateUnavailableError, "Redis unavailable", (redis.ConnectionError, redis.TimeoutError, redis.OutOfMemoryError)
)


class _RenewedConnection(redis.Connection):
    """A connection that, past :data:`MAX_CONNECTION_AGE_S`, closes and opens again (with new
    credentials) before its next command, instead of being closed by the server mid-request."""

    _opened_at = 0.0

    def connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        if self._sock is None:  # opening: its age counts from here, its handshake included
            self._opened_at = _clock()
        super().connect_check_health(*args, **kwargs)

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if self._sock is not None and _clock() - self._opened_at > MAX_CONNECTION_AGE_S:
            self.disconnect()
        super().send_packed_command(command, check_health)


class _RenewedSSLConnection(_RenewedConnection, redis.SSLConnection):
    """The same over TLS."""


def connect(
    url: str,
    *,
    socket_timeout: float = 2.0,
    credential_provider: CredentialProvider | None = None,
) -> redis.Redis:
    """A client for ``url`` (``redis://``, or ``rediss://`` for TLS) that fails fast.

    A broken connection (typically one that went stale while a Lambda container was frozen) is
    retried once on a new connection, right away. A timeout is never retried: the command may
    have run, and a reserve run twice would answer DUPLICATE for the caller's own reservation.
    ``credential_provider`` gives the user and password of each new connection (ElastiCache's
    IAM tokens); a connection is renewed before it is :data:`MAX_CONNECTION_AGE_S` old. A
    timeout while sending or reading closes the connection, so no late reply is ever read as the
    next command's. A Lambda container answers one request at a time: its pool holds one
    connection.
    """
    secure = url.startswith("rediss://")
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=socket_timeout,
        socket_connect_timeout=socket_timeout,
        retry=Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,)),
        credential_provider=credential_provider,
        connection_class=_RenewedSSLConnection if secure else _RenewedConnection,
    )


def register(client: redis.Redis, *names: str) -> Script:
    """The script made of the Lua file of each of ``names`` (in ``scripts``), in order: a script
    that adds holders names ``holders`` first, for that file's function (Lua has no import here)."""
    source = "".join(
        files("lua_redis").joinpath("scripts", f"{name}.lua").read_text(encoding="utf-8") for name in names
    )
    return client.register_script(source)


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
    """A client of the cache ``settings`` name, authenticated as they say (:func:`connect`)."""
    if settings.auth == "none":
        return connect(settings.url, socket_timeout=socket_timeout)
    user, cache_name, region = settings.user, settings.cache_name, settings.region
    assert user is not None  # REDIS_AUTH=iam requires all three (RedisSettings checks it)
    assert cache_name is not None
    assert region is not None
    credentials = ElastiCacheIamCredentials(user, cache_name, region, serverless=settings.cache_kind == "serverless")
    return connect(settings.url, socket_timeout=socket_timeout, credential_provider=credentials)
