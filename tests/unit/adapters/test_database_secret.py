"""The database URL from a Secrets Manager secret (moto), and TLS as the URL asks for it."""

from __future__ import annotations

import json
import ssl

import boto3
import pytest

from coupon_core.adapters.postgres.engine import engine_for_url, url_from_secret
from coupon_core.backend_errors import SecretContentsError


@pytest.fixture
def secrets(aws):
    return boto3.client("secretsmanager", region_name=aws)


def rds_secret(secrets, name: str, password: str) -> str:
    """A secret shaped as RDS writes it; its ARN."""
    fields = {"host": "db.example", "port": 5432, "username": "app", "password": password, "dbname": "coupons"}
    return secrets.create_secret(Name=name, SecretString=json.dumps(fields))["ARN"]


def test_an_rds_secret_becomes_a_pg8000_url(secrets):
    arn = rds_secret(secrets, "coupons-db", "p@ss:word")

    url = url_from_secret(arn, secrets)

    assert url.render_as_string(hide_password=False) == "postgresql+pg8000://app:p%40ss%3Aword@db.example:5432/coupons"


def test_a_secret_without_the_fields_names_them(secrets):
    arn = secrets.create_secret(Name="half", SecretString=json.dumps({"host": "db", "port": 5432}))["ARN"]
    with pytest.raises(SecretContentsError, match="lacks username, password, dbname"):
        url_from_secret(arn, secrets)


def test_a_secret_that_is_not_json_is_refused(secrets):
    arn = secrets.create_secret(Name="text", SecretString="postgres://x")["ARN"]
    with pytest.raises(SecretContentsError, match="is not JSON"):
        url_from_secret(arn, secrets)


def test_a_proxy_host_replaces_the_secrets_host(secrets):
    arn = rds_secret(secrets, "proxied", "pw")
    url = url_from_secret(arn, secrets, host="proxy.example")
    assert (url.host, url.port, url.database) == ("proxy.example", 5432, "coupons")


def test_sslmode_verify_full_becomes_a_verifying_tls_context_and_leaves_the_url(monkeypatch):
    """pg8000 reads no ``sslmode``: the URL's libpq word becomes its ``ssl_context``, one that
    checks the certificate and the host name, and is not passed on as an unknown argument."""
    captured = {}

    def connect(**kwargs):
        captured.update(kwargs)
        raise ConnectionRefusedError("no server here")

    engine = engine_for_url("postgresql+pg8000://app:pw@db.example:5432/coupons?sslmode=verify-full")
    monkeypatch.setattr(engine.dialect.loaded_dbapi, "connect", connect)
    with pytest.raises(Exception, match="no server here"):
        engine.connect()
    context = captured["ssl_context"]
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)
    assert "sslmode" not in captured
    plain = engine_for_url("postgresql+pg8000://app:pw@db.example:5432/coupons")
    captured.clear()
    with pytest.raises(Exception, match="no server here"):
        plain.connect()
    assert "ssl_context" not in captured
