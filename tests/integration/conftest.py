"""The live stack for the integration run: ``make up``'s, reused if it is up, else started here."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
import redis
from sqlalchemy import Engine

from coupon_client.api_client import ApiClient
from coupon_core.adapters.postgres.engine import engine_for_url
from local.stack import control as stack
from lua_redis.client import connect


@dataclass
class Live:
    env: dict[str, str]
    api: ApiClient
    engine: Engine
    redis: redis.Redis
    aws: dict[str, Any]

    def invoke(self, function: str, event: Any) -> Any:
        """The deployed function's answer to ``event``."""
        return json.loads(self._invoke(function, event)["Payload"].read())

    def invoke_for_logs(self, function: str, event: Any) -> list[str]:
        """The invocation's log lines, as Lambda returns them with ``LogType=Tail`` (the last 4 KB)."""
        return base64.b64decode(self._invoke(function, event, LogType="Tail")["LogResult"]).decode().splitlines()

    def _invoke(self, function: str, event: Any, **options: str) -> dict[str, Any]:
        return boto3.client("lambda", **self.aws).invoke(
            FunctionName=self.env[f"{function.upper()}_FUNCTION"], Payload=json.dumps(event).encode(), **options
        )


@pytest.fixture(scope="session")
def live() -> Iterator[Live]:
    started_here = not stack.is_up()
    env = stack.up()
    aws = {"endpoint_url": env["AWS_ENDPOINT_URL"], "region_name": "us-east-1",
           "aws_access_key_id": "test", "aws_secret_access_key": "test"}  # fmt: skip
    engine = engine_for_url(env["DATABASE_URL"], pool_pre_ping=True)
    yield Live(env, ApiClient(env["API_URL"]), engine, connect(env["REDIS_URL"]), aws)
    engine.dispose()
    if started_here:
        stack.down()
