"""Unit-test fixtures: AWS calls go to moto, in-process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from moto import mock_aws

REGION = "eu-west-1"


@pytest.fixture
def aws(monkeypatch) -> Iterator[str]:
    """moto for every boto3 client made inside the test; yields the region."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield REGION
