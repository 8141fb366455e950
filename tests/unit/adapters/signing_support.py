"""The execution role's credentials as Lambda provides them, and a fixed signing time, for the
tests of the tokens this project signs (MSK IAM, ElastiCache IAM)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import botocore.auth
import pytest

from coupon_core.adapters import aws_credentials

SIGNED_AT = datetime.datetime(2026, 12, 1, 9, 30, 0)  # botocore signs with a naive UTC time


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
