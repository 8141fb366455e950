"""What clients send to Redis, as the server's MONITOR reports it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis

from lua_redis.client import register
from lua_redis.keys import holders_key, reserved_key


@dataclass(frozen=True)
class Seen:
    """One command MONITOR reported: its words, and whether a Lua script ran it."""

    command: str
    from_script: bool


def monitored(client: redis.Redis, action: Callable[[], object]) -> list[Seen]:
    """Every command the server ran while ``action`` ran, in its order, as MONITOR saw it.

    Unlike INFO commandstats, MONITOR tells a command a client sent from one a Lua script ran
    (reported with the client ``lua``, right after the script's call: a script runs alone), so
    it counts round trips and, apart, the work inside scripts.
    """
    sentinel = f"monitor-done-{time.time_ns()}"
    seen: list[Seen] = []
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
                seen.append(Seen(entry["command"], entry.get("client_type") == "lua"))

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    if not started.wait(timeout=10):
        raise TimeoutError("MONITOR did not start: the watcher could not connect")
    time.sleep(0.1)  # MONITOR is registered once its reply has come back
    action()
    client.echo(sentinel)
    listener.join(timeout=120)
    watcher.close()
    return seen


def client_commands(client: redis.Redis, action: Callable[[], object]) -> list[str]:
    """The commands clients sent while ``action`` ran (their names; not those scripts ran)."""
    return [entry.command.split()[0].upper() for entry in monitored(client, action) if not entry.from_script]


def issue_requests_load(seen: list[Seen], coupon_id: int) -> tuple[int, int]:
    """What the intake's issue requests for ``coupon_id`` asked of Redis among ``seen``: round
    trips (reserve.lua's EVALSHA, the holders' filter's GET) and commands (those, and the calls
    inside each reserve). Other clients' commands (the worker's locks, the rebuild's) are left out."""
    reserve = f"EVALSHA {_reserve_sha()} 5 {reserved_key(coupon_id)} "
    filter_read = f"GET {holders_key(coupon_id)}"
    trips = commands = 0
    inside_reserve = False
    for entry in seen:
        if entry.from_script:
            commands += inside_reserve
            continue
        inside_reserve = entry.command.startswith(reserve)
        if inside_reserve or entry.command == filter_read:
            trips += 1
            commands += 1
    return trips, commands


def _reserve_sha() -> str:
    """The SHA-1 of reserve.lua as the store registers it (with the holders' function before it)."""
    return str(register(redis.Redis(), "holders", "reserve").sha)  # registering sends nothing
