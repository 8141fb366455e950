"""The baseline the intake handler is measured against (``bench/intake.py``): what a request
needs at the least, and no framework.

Parse the JSON body, check the two ids, one EVALSHA of the same ``reserve.lua``, one ``acks=all``
idempotent produce on SUCCESS, a JSON answer. No validation messages, no idempotency key, no
logging, metrics or tracing, no state initialisation (the coupon is warm), no release on a
failed produce: the floor the intake's features are priced against.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

from kafka import KafkaProducer

from coupon_core.domain.records import MAX_BIGINT
from local.testkit.kafka_topics import client_options
from lua_redis.client import connect, register
from lua_redis.keys import holders_key, idempotency_key, meta_key, requests_key, reserved_key

ANSWERS = ("SUCCESS", "DUPLICATE", "SOLD_OUT", "NOT_OPEN", "ENDED", "STATE_MISSING", "KEY_REUSED", "CLOSED")

_client = connect(os.environ["REDIS_URL"])
_reserve = register(_client, "holders", "reserve")
_producer = KafkaProducer(
    **client_options(os.environ["KAFKA_BOOTSTRAP_SERVERS"]), acks="all", enable_idempotence=True, linger_ms=0
)
_topic = os.environ["KAFKA_TOPIC"]


def _answer(status_code: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"statusCode": status_code, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    try:
        body = json.loads(event["body"])
        coupon_id, user_id = body["couponId"], body["userId"]
    except (TypeError, ValueError, KeyError):
        return _answer(422, {"status": "INVALID_REQUEST", "error": "body"})
    if not all(type(v) is int and 1 <= v <= MAX_BIGINT for v in (coupon_id, user_id)):
        return _answer(422, {"status": "INVALID_REQUEST", "error": "ids"})
    request_id = str(uuid.uuid4())
    keys = [
        reserved_key(coupon_id),
        meta_key(coupon_id),
        requests_key(coupon_id),
        idempotency_key(coupon_id),
        holders_key(coupon_id),
    ]
    code, reserved_at, *_ = _reserve(keys=keys, args=[user_id, request_id, ""])  # a refusal's standing: unused
    if code != 0:
        return _answer(409, {"status": ANSWERS[code], "couponId": coupon_id, "userId": user_id})
    record = {"v": 1, "couponId": coupon_id, "userId": user_id, "requestId": request_id, "reservedAt": reserved_at}
    _producer.send(_topic, key=str(coupon_id).encode(), value=json.dumps(record).encode()).get(timeout=3)
    reserved = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(reserved_at / 1000))
    accepted = {"status": "SUCCESS", "couponId": coupon_id, "userId": user_id, "requestId": request_id}
    return _answer(202, accepted | {"reservedAt": reserved})
