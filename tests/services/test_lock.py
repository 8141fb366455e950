"""The coupon lock on a real Valkey: exclusion, bounded waits, leases, no spinning."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from coupon_core.backend_errors import LockUnavailableError
from coupon_core.errors import StateUnavailableError
from lua_redis.client import connect
from lua_redis.lock import held_lock, issue_lock_name
from tests.services.support import command_calls

NAME = issue_lock_name(1)


def test_lock_key_shares_the_coupon_hash_tag(redis_client):
    with held_lock(redis_client, NAME, lease_s=5, wait_s=1):
        assert redis_client.keys("lock:*") == ["lock:coupon-issue:{1}"]


def test_only_one_holder_at_a_time_across_threads(redis_url):
    counter = connect(redis_url)
    counter.set("counter", 0)

    def increment_unsafely() -> None:
        client = connect(redis_url, socket_timeout=12)  # past wait_s: a waiter blocks on its socket
        for _ in range(20):
            with held_lock(client, NAME, lease_s=10, wait_s=10):
                value = int(client.get("counter"))
                time.sleep(0.0005)
                client.set("counter", value + 1)

    workers = [threading.Thread(target=increment_unsafely) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert int(counter.get("counter")) == 160


def test_waiting_past_the_bound_raises_lock_unavailable(redis_client, redis_url):
    with held_lock(redis_client, NAME, lease_s=10, wait_s=1):
        began = time.monotonic()
        with (
            pytest.raises(LockUnavailableError, match="still held"),
            held_lock(connect(redis_url), NAME, lease_s=10, wait_s=1),
        ):
            pytest.fail("acquired a held lock")
        assert time.monotonic() - began >= 0.9


def test_a_waiter_blocks_instead_of_polling(redis_client, redis_url):
    acquired_at: list[float] = []

    def waiter() -> None:
        with held_lock(connect(redis_url, socket_timeout=7), NAME, lease_s=10, wait_s=5):
            acquired_at.append(time.monotonic())

    with held_lock(redis_client, NAME, lease_s=10, wait_s=1):
        redis_client.config_resetstat()
        thread = threading.Thread(target=waiter)
        thread.start()
        time.sleep(1.5)
        released_at = time.monotonic()
    thread.join()

    calls = command_calls(redis_client)
    assert acquired_at
    assert acquired_at[0] >= released_at
    assert calls["set"] <= 3  # a failed SET NX, then the one that wins: no polling loop
    assert calls["blpop"] <= 2


def test_an_expired_lease_frees_the_lock_and_its_late_release_only_warns(redis_client, redis_url, caplog):
    caplog.set_level(logging.WARNING)
    with held_lock(redis_client, NAME, lease_s=1, wait_s=1):
        time.sleep(1.2)
        with held_lock(connect(redis_url), NAME, lease_s=5, wait_s=1):
            pass
    assert "ran out" in caplog.text


def test_unreachable_redis_raises_state_unavailable():
    with pytest.raises(StateUnavailableError), held_lock(connect("redis://127.0.0.1:1/0"), NAME, lease_s=5, wait_s=1):
        pytest.fail("acquired a lock on no server")
