"""The SQLAlchemy engine, from DATABASE_URL or from a Secrets Manager secret."""

from __future__ import annotations

import json
import ssl
from typing import Any

import boto3
from sqlalchemy import URL, Engine, create_engine, make_url
from sqlalchemy.exc import SQLAlchemyError

from coupon_core.backend_errors import SecretContentsError
from coupon_core.settings.backend import DatabaseSettings

_SECRET_FIELDS = ("host", "port", "username", "password", "dbname")
SOCKET_TIMEOUT_S = 5
# What a database call raises when the database is unreachable: SQLAlchemy wraps pg8000's own
# errors, not a socket timeout pg8000 lets through while it opens a connection.
DRIVER_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError, OSError)


def url_from_secret(secret_arn: str, secretsmanager: Any = None, *, host: str | None = None) -> URL:
    """The URL in an RDS-style secret: JSON with host, port, username, password, dbname.

    ``host`` replaces the secret's host (an RDS Proxy endpoint in front of the instance).
    """
    client = secretsmanager or boto3.client("secretsmanager")
    raw = client.get_secret_value(SecretId=secret_arn)["SecretString"]
    try:
        secret = json.loads(raw)
    except json.JSONDecodeError:
        raise SecretContentsError(f"secret {secret_arn} is not JSON") from None
    missing = [field for field in _SECRET_FIELDS if not isinstance(secret, dict) or field not in secret]
    if missing:
        raise SecretContentsError(f"secret {secret_arn} lacks {', '.join(missing)}")
    return URL.create(
        "postgresql+pg8000",
        username=secret["username"],
        password=secret["password"],
        host=host or secret["host"],
        port=int(secret["port"]),
        database=secret["dbname"],
    )


def make_engine(settings: DatabaseSettings, *, pool_size: int = 2) -> Engine:
    """An engine for one Lambda container: a small pool, connections checked before use.

    Every socket operation (connecting included) gives up after ``SOCKET_TIMEOUT_S``: pg8000
    has no timeout by default, so a silently dropped network would hang a call until the
    Lambda timeout, holding whatever lock its caller holds. With a secret, connections use TLS
    with certificate verification; with a URL, as its ``sslmode`` says (:func:`engine_for_url`).
    """
    options: dict[str, Any] = {"pool_size": pool_size, "max_overflow": 0, "pool_pre_ping": True}
    if settings.url is not None:
        return engine_for_url(settings.url, **options)
    url = url_from_secret(str(settings.secret_arn), host=settings.host)
    return create_engine(url, **options, connect_args={"timeout": SOCKET_TIMEOUT_S, "ssl_context": _verified()})


def engine_for_url(url: str, **options: Any) -> Engine:
    """An engine for a DATABASE_URL: over TLS verified against the platform's trust store when
    the URL says ``sslmode=verify-full`` (libpq's word, which pg8000 does not read itself), else
    in plain text; ``options`` go to SQLAlchemy's ``create_engine``."""
    parsed = make_url(url)
    connect_args: dict[str, Any] = {"timeout": SOCKET_TIMEOUT_S}
    if parsed.query.get("sslmode") == "verify-full":
        connect_args["ssl_context"] = _verified()
    return create_engine(parsed.difference_update_query(["sslmode"]), **options, connect_args=connect_args)


def _verified() -> ssl.SSLContext:
    """Certificate and host name checked against the platform's trust store (on AWS, Amazon's
    CAs that sign RDS Proxy's certificates; locally, SSL_CERT_FILE's, with the stack's CA)."""
    return ssl.create_default_context()
