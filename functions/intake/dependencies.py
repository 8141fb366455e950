"""The intake's collaborators, built once per Lambda container: the settings, the Redis client,
the Kafka producer, and the issue service over them with the container's memory of answers.

Cached per container (``functools.cache``), so the Redis client and the Kafka producer stay
alive across invocations; :func:`open_connections` opens them during INIT. While Redis cannot
be reached, a request answers 503 and the next one connects again. A missing state is built by
the builder function (``adapters.lambda_rebuild.BuilderInvoker``), when the registry of
coupons in Redis says so: the intake has no database credential and no path to the database.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import redis

from coupon_core.adapters.kafka.publisher import IssuePublisher
from coupon_core.adapters.lambda_rebuild import BuilderInvoker
from coupon_core.domain.issuing import AnswerMemory, IssueService
from coupon_core.observability import logger
from coupon_core.settings.intake import IntakeSettings
from functions.http_api import request
from lua_redis.client import redis_client
from lua_redis.issue_store import IssueStore


@dataclass(frozen=True)
class Wiring:
    settings: IntakeSettings
    client: redis.Redis
    publisher: IssuePublisher
    service: IssueService


@functools.cache
def wiring() -> Wiring:
    """Read the settings (failing with the variable's name if one is wrong) and wire the service."""
    settings = IntakeSettings.from_env()
    client = redis_client(settings.redis)
    publisher = IssuePublisher(settings.kafka, timeout_ms=settings.issuing.produce_timeout_ms)
    issuing, store = settings.issuing, IssueStore(client)
    service = IssueService(
        store,
        publisher.publish,
        BuilderInvoker(settings.builder_function.name).build,
        lookup=store.lookup,
        memory=AnswerMemory(issuing.memory_ms) if issuing.memory_ms else None,
        wait_replicas=issuing.wait_replicas,
        wait_timeout_ms=issuing.wait_timeout_ms,
    )
    return Wiring(settings, client, publisher, service)


def open_connections() -> None:
    """Open the connections now (Redis, the Kafka producer with its topic's metadata).

    Called while a Lambda container initialises: the first request then finds them open instead
    of paying for them. An unreachable server must not stop the container from starting: such a
    failure is logged and the first request connects (or reports a wrong variable) as it would
    have anyway.
    """
    try:
        parts = wiring()
        parts.client.ping()
        parts.publisher.connect()
    except Exception:  # logged; the request path connects again, and reports what is wrong
        logger.warning("could not connect while initialising; the first request will", exc_info=True)


def reset() -> None:
    """Forget the wiring (tests change the environment between cases)."""
    if wiring.cache_info().currsize:
        wiring().publisher.close()
        wiring().client.close()
    wiring.cache_clear()
    request.allowed_origins.cache_clear()
