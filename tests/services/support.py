"""Helpers shared by the tests against the real services."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import redis

from lua_redis import CouponState

HOUR_MS = 3_600_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def open_coupon(
    coupon_id: int = 1, total: int = 10, *, starts_in_ms: int = -HOUR_MS, lasts_ms: int = 2 * HOUR_MS
) -> CouponState:
    """A coupon whose window opens ``starts_in_ms`` from now (negative: already open)."""
    starts_at = now_ms() + starts_in_ms
    ends_at = starts_at + lasts_ms
    return CouponState(coupon_id, total, starts_at, ends_at, expires_at=ends_at + 24 * HOUR_MS)


def client_commands(client: redis.Redis, action: Callable[[], object]) -> list[str]:
    """The commands clients sent to the server while ``action`` ran, as MONITOR saw them.

    Unlike INFO commandstats, MONITOR tells a command a client sent from one a Lua script ran
    (reported with the client ``lua``), so this counts round trips, not work inside scripts.
    """
    sentinel = f"monitor-done-{time.time_ns()}"
    seen: list[str] = []
    started = threading.Event()

    # A connection of its own, so that the client's pooled connection stays as it was.
    watcher = redis.Redis(connection_pool=redis.ConnectionPool(**client.connection_pool.connection_kwargs))

    def listen() -> None:
        with watcher.monitor() as monitor:
            started.set()
            for entry in monitor.listen():
                if entry["command"] == f"ECHO {sentinel}":
                    return
                if entry.get("client_type") != "lua":
                    seen.append(entry["command"].split()[0].upper())

    listener = threading.Thread(target=listen)
    listener.start()
    started.wait()
    time.sleep(0.1)  # MONITOR is registered once its reply has come back
    action()
    client.echo(sentinel)
    listener.join(timeout=10)
    watcher.close()
    return seen


def command_calls(client: redis.Redis) -> dict[str, int]:
    """Calls per command since the last CONFIG RESETSTAT, leaving out INFO and CONFIG themselves."""
    stats = client.info("commandstats")
    calls = {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}
    return {name: count for name, count in calls.items() if not name.startswith(("info", "config"))}
