"""The Lua scripts, loaded from the package and registered on a client.

redis-py's ``Script`` calls EVALSHA and, on NOSCRIPT (a failover, a restart, SCRIPT FLUSH),
loads the script and retries once: one round trip on the hot path, reload only when needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files

import redis
from redis.commands.core import Script


def _source(name: str) -> str:
    return files("lua_redis").joinpath("scripts", f"{name}.lua").read_text(encoding="utf-8")


def _adding_holders(name: str) -> str:
    """A script that adds holders, after ``holders.lua``'s function (Lua has no import here)."""
    return _source("holders") + _source(name)


@dataclass(frozen=True)
class Scripts:
    """One registered ``Script`` per Lua file."""

    reserve: Script
    release: Script
    add_holders: Script
    restore_requests: Script
    install: Script
    rebuild_gate: Script
    update_state: Script
    take_writes: Script
    registry_lookup: Script
    registry_fill: Script

    @classmethod
    def register(cls, client: redis.Redis) -> Scripts:
        return cls(
            reserve=client.register_script(_adding_holders("reserve")),
            release=client.register_script(_source("release")),
            add_holders=client.register_script(_adding_holders("add_holders")),
            restore_requests=client.register_script(_source("restore_requests")),
            install=client.register_script(_source("install")),
            rebuild_gate=client.register_script(_source("rebuild_gate")),
            update_state=client.register_script(_source("update_state")),
            take_writes=client.register_script(_source("take_writes")),
            registry_lookup=client.register_script(_source("registry_lookup")),
            registry_fill=client.register_script(_source("registry_fill")),
        )
