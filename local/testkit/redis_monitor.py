"""What clients send to Redis, as the server's MONITOR reports it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import redis


def client_commands(client: redis.Redis, action: Callable[[], object]) -> list[str]:
    """The commands clients sent to the server while ``action`` ran, as MONITOR saw them.

    Unlike INFO commandstats, MONITOR tells a command a client sent from one a Lua script ran
    (reported with the client ``lua``), so this counts round trips, not work inside scripts.
    """
    sentinel = f"monitor-done-{time.time_ns()}"
    seen: list[str] = []
    started = threading.Event()

    # A connection of its own, so that the client's pooled connection stays as it was.
    pool = client.connection_pool
    watcher = redis.Redis(connection_pool=redis.ConnectionPool(pool.connection_class, **pool.connection_kwargs))

    def listen() -> None:
        with watcher.monitor() as monitor:
            started.set()
            for entry in monitor.listen():
                if entry["command"] == f"ECHO {sentinel}":
                    return
                if entry.get("client_type") != "lua":
                    seen.append(entry["command"].split()[0].upper())

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    if not started.wait(timeout=10):
        raise TimeoutError("MONITOR did not start: the watcher could not connect")
    time.sleep(0.1)  # MONITOR is registered once its reply has come back
    action()
    client.echo(sentinel)
    listener.join(timeout=10)
    watcher.close()
    return seen
