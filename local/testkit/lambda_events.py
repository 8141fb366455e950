"""Lambda events and context as AWS sends them, for calling handlers in-process (tests, benchmarks)."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An API Gateway REST proxy event; ``body`` is sent as JSON, ``raw_body`` as it is."""
    all_headers = {"Content-Type": "application/json", "X-Amzn-Trace-Id": "Root=1-test", **(headers or {})}
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": all_headers,
        "multiValueHeaders": {name: [value] for name, value in all_headers.items()},
        "queryStringParameters": query,
        "multiValueQueryStringParameters": {name: [value] for name, value in query.items()} if query else None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "requestTimeEpoch": time.time_ns() // 1_000_000,
            "stage": "test",
            "httpMethod": method,
            "path": f"/test{path}",
            "authorizer": {"claims": claims} if claims is not None else None,
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "body": raw_body if raw_body is not None else (None if body is None else json.dumps(body)),
        "isBase64Encoded": False,
    }


def msk_event(records: list[tuple[Any, ...]]) -> dict[str, Any]:
    """An MSK event from ``(topic, partition, offset, value[, key])`` records, by topic-partition."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for topic, partition, offset, value, *rest in records:
        key = rest[0] if rest and rest[0] is not None else b""
        grouped.setdefault(f"{topic}-{partition}", []).append(
            {
                "topic": topic,
                "partition": partition,
                "offset": offset,
                "timestamp": 1_764_590_400_000,
                "timestampType": "CREATE_TIME",
                "key": base64.b64encode(key).decode(),
                "value": None if value is None else base64.b64encode(value).decode(),
                "headers": [],
            }
        )
    return {
        "eventSource": "aws:kafka",
        "eventSourceArn": "arn:aws:kafka:eu-west-1:123456789012:cluster/coupons/abc",
        "bootstrapServers": "b-1.coupons.example:9098",
        "records": grouped,
    }


def sqs_event(bodies: list[str]) -> dict[str, Any]:
    """An SQS event with one record per body; message ids are ``m0``, ``m1``, ..."""
    return {
        "Records": [
            {
                "messageId": f"m{index}",
                "receiptHandle": f"handle-{index}",
                "body": body,
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:coupon-dlq",
                "awsRegion": "eu-west-1",
            }
            for index, body in enumerate(bodies)
        ]
    }


def on_failure_letter(
    records: Iterable[tuple[str, int, int]], *, attempts: int, bootstrap_servers: str
) -> dict[str, Any]:
    """The MSK event source mapping's on-failure record for SQS once a batch's retries ran out,
    for ``(topic, partition, offset)`` records: each partition's offset range, no payload."""
    ranges: dict[str, tuple[int, int]] = {}
    count = 0
    for topic, partition, offset in records:
        key = f"{topic}-{partition}"
        first, last = ranges.get(key, (offset, offset))
        ranges[key] = (min(first, offset), max(last, offset))
        count += 1
    return {
        "requestContext": {"condition": "RetryAttemptsExhausted", "approximateInvokeCount": attempts},
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
        "version": "1.0",
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "KafkaBatchInfo": {
            "batchSize": count,
            "bootstrapServers": bootstrap_servers,
            "recordsInfo": {
                key: {"firstRecordOffset": str(first), "lastRecordOffset": str(last)}
                for key, (first, last) in ranges.items()
            },
        },
    }
