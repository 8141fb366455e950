"""Authenticated Redis connections against the real Valkey: each new connection asks its
credential provider (ElastiCache IAM tokens are one per connection), and a connection is renewed
before ElastiCache's 12-hour limit would close it."""

from __future__ import annotations

import pytest
import redis

import lua_redis.client
from local.stack.processes import without_credentials
from lua_redis.client import MAX_CONNECTION_AGE_S, connect

USER = "coupons-app"


class Tokens(redis.CredentialProvider):
    """Hands out the current password, as the IAM provider hands out a fresh token; counts asks."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.asked = 0

    def get_credentials(self) -> tuple[str, str]:
        self.asked += 1
        return USER, self.password


@pytest.fixture
def address(redis_url) -> str:
    """The server's URL without the suite's own credentials: the provider gives them."""
    return without_credentials(redis_url)


@pytest.fixture
def app_user(redis_client):
    redis_client.execute_command("ACL", "SETUSER", USER, "on", ">first-token", "~*", "+@all")
    yield
    redis_client.execute_command("ACL", "DELUSER", USER)


def test_a_connection_authenticates_as_its_provider_says_and_a_wrong_token_is_refused(address, app_user):
    tokens = Tokens("first-token")
    client = connect(address, credential_provider=tokens)
    assert client.execute_command("ACL", "WHOAMI") == USER
    assert tokens.asked == 1

    with pytest.raises(redis.AuthenticationError):
        connect(address, credential_provider=Tokens("stale-token")).ping()


def test_a_connection_past_its_age_is_renewed_with_new_credentials_before_its_next_command(
    address, redis_client, app_user, monkeypatch
):
    now = [5 * 24 * 3600.0]  # a host up for days: a connection's age is not the clock's
    monkeypatch.setattr(lua_redis.client, "_clock", lambda: now[0])
    tokens = Tokens("first-token")
    client = connect(address, credential_provider=tokens)
    first = client.client_id()
    now[0] += MAX_CONNECTION_AGE_S - 1
    assert client.client_id() == first  # still young: the same connection

    # The token rotates (an IAM token lasts 15 minutes); the old connection keeps its session.
    redis_client.execute_command("ACL", "SETUSER", USER, "resetpass", ">second-token")
    tokens.password = "second-token"
    now[0] += 2  # past the age

    renewed = client.client_id()
    assert renewed != first
    assert tokens.asked == 2
    assert client.execute_command("ACL", "WHOAMI") == USER
    assert str(first) not in {str(entry["id"]) for entry in redis_client.client_list()}  # the old one is closed
