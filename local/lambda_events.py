"""Lambda events and context as AWS sends them, for calling handlers in-process (tests, benchmarks)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class InProcessContext:
    function_name: str = "test-function"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:test-function"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 30_000


def api_event(
    method: str,
    path: str,
    body: Any = None,
    *,
    raw_body: str | None = None,
    claims: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An API Gateway REST proxy event; ``body`` is sent as JSON, ``raw_body`` as it is."""
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": {"Content-Type": "application/json", "X-Amzn-Trace-Id": "Root=1-test"},
        "multiValueHeaders": {},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "stage": "test",
            "httpMethod": method,
            "path": f"/test{path}",
            "authorizer": {"claims": claims} if claims is not None else None,
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "body": raw_body if raw_body is not None else (None if body is None else json.dumps(body)),
        "isBase64Encoded": False,
    }
