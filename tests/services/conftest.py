"""Fixtures for tests against the real embedded Valkey: a flushed server for every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from lua_redis import ReservationStore, connect


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = connect(redis_url)
    client.flushall()
    client.config_resetstat()
    yield client
    client.close()


@pytest.fixture
def store(redis_client: redis.Redis) -> ReservationStore:
    return ReservationStore(redis_client)
