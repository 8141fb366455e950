"""Every local store answers as its AWS counterpart does: over TLS only, verified against the
stack's CA, and (Valkey, PostgreSQL) to credentials only.

Each test talks to the embedded services the suite starts (or to the servers named by
REDIS_URL, DATABASE_URL, KAFKA_BOOTSTRAP_SERVERS: then they hold for those servers).
"""

from __future__ import annotations

import socket
import ssl
import struct

import certifi
import pg8000.native
import pytest
import redis
from kafka import KafkaAdminClient
from kafka.errors import KafkaError
from sqlalchemy import make_url

from local.stack.processes import url_port, without_credentials
from local.stack.tls import certificates
from local.testkit.kafka_topics import client_options

POSTGRES_PROTOCOL_3 = 196608


def _answer(port: int, greeting: bytes) -> bytes:
    """What a server on ``port`` sends back to ``greeting`` sent in plain text ('' if it hangs up)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(greeting)
        try:
            return sock.recv(100)
        except ConnectionResetError:
            return b""


def _startup_message() -> bytes:
    body = struct.pack("!i", POSTGRES_PROTOCOL_3) + b"user\0postgres\0database\0coupons\0\0"
    return struct.pack("!i", len(body) + 4) + body


def test_valkey_refuses_plain_text_and_a_client_without_credentials(redis_url):
    port = url_port(redis_url)
    assert _answer(port, b"PING\r\n") == b""  # not +PONG, not -NOAUTH: no RESP without TLS
    with pytest.raises(redis.AuthenticationError):
        redis.Redis.from_url(without_credentials(redis_url), socket_timeout=5).ping()
    wrong = redis_url.replace("@", "x@", 1)
    with pytest.raises(redis.AuthenticationError, match="invalid username-password pair"):
        redis.Redis.from_url(wrong, socket_timeout=5).ping()
    assert redis.Redis.from_url(redis_url, socket_timeout=5).ping()


def test_valkey_s_certificate_is_checked(redis_url, monkeypatch):
    """A client whose platform trusts only the public CAs refuses the server: verification is on."""
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    with pytest.raises(redis.ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        redis.Redis.from_url(redis_url, socket_timeout=5).ping()


def test_postgresql_refuses_plain_text_a_wrong_password_and_an_unknown_ca(database_url):
    url = make_url(database_url)
    assert url.query.get("sslmode") == "verify-full"
    assert _answer(int(url.port or 0), _startup_message()) == b""  # no 'R' (authentication) without TLS
    trusted = ssl.create_default_context()
    login = {"user": url.username, "host": url.host, "port": url.port, "database": url.database, "timeout": 5}
    with pytest.raises(pg8000.native.DatabaseError, match="28P01"):  # invalid_password
        pg8000.native.Connection(**login, password="not-the-password", ssl_context=trusted)
    with pytest.raises(ssl.SSLCertVerificationError):
        pg8000.native.Connection(
            **login, password=url.password, ssl_context=ssl.create_default_context(cafile=certifi.where())
        )
    connection = pg8000.native.Connection(**login, password=url.password, ssl_context=trusted)
    try:
        assert connection.run("SELECT current_user") == [[url.username]]
    finally:
        connection.close()


def test_the_broker_answers_over_tls_only(kafka_bootstrap_servers):
    over_tls = client_options(kafka_bootstrap_servers, request_timeout_ms=5_000, bootstrap_timeout_ms=5_000)
    assert over_tls["security_protocol"] == "SSL"
    admin = KafkaAdminClient(**over_tls)
    try:
        assert isinstance(admin.list_topics(), list)
    finally:
        admin.close()
    for refused in ({"security_protocol": "PLAINTEXT"}, {"ssl_cafile": certifi.where()}):
        with pytest.raises(KafkaError):  # never answered: a second is as good as the five above
            KafkaAdminClient(**{**over_tls, "bootstrap_timeout_ms": 1_000, **refused}).close()


def test_the_certificates_are_made_once_and_replaced_when_broken(tmp_path):
    folder = tmp_path / "tls"
    first = certificates(folder)
    ca = first.ca.read_bytes()
    assert certificates(folder).ca.read_bytes() == ca  # kept, not made again
    assert first.key.stat().st_mode & 0o077 == 0
    assert first.client_environment["SSL_CERT_FILE"] == str(first.ca)  # the system's CAs: their folder
    first.cert.write_text("not a certificate")
    assert certificates(folder).ca.read_bytes() != ca  # a broken set is made again, whole
