"""Fixtures of the tests of the tokens this project signs (MSK IAM, ElastiCache IAM): the
execution role's credentials as Lambda provides them, at a fixed signing time, and a count of the
botocore sessions made."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import botocore.auth
import botocore.session
import pytest

from coupon_core.adapters import aws_credentials

SIGNED_AT = datetime.datetime(2026, 12, 1, 9, 30, 0)  # botocore signs with a naive UTC time; 09:30:00Z in tokens


@pytest.fixture
def lambda_credentials(monkeypatch, tmp_path) -> Iterator[None]:
    """The execution role's credentials in the environment, as Lambda sets them; no other source."""
    for name in ("AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "ASIAEXAMPLEKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example/secret+key")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "example-session-token")
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: SIGNED_AT)
    aws_credentials.resolved_once.cache_clear()
    yield
    aws_credentials.resolved_once.cache_clear()


@pytest.fixture
def botocore_sessions(monkeypatch) -> list[tuple[object, ...]]:
    """Every botocore session created from here on (a walk of the credential chain each)."""
    sessions: list[tuple[object, ...]] = []
    session_class = botocore.session.Session

    def counted(*args: object, **kwargs: object) -> botocore.session.Session:
        sessions.append(args)
        return session_class(*args, **kwargs)

    monkeypatch.setattr(botocore.session, "Session", counted)
    return sessions
