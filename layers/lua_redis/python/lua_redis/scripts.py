"""The Lua scripts, loaded from the package and registered on a client by each adapter that runs them.

redis-py's ``Script`` calls EVALSHA and, on NOSCRIPT (a failover, a restart, SCRIPT FLUSH),
loads the script and retries once: one round trip on the hot path, reload only when needed.
"""

from __future__ import annotations

from importlib.resources import files

import redis
from redis.commands.core import Script


def register(client: redis.Redis, *names: str) -> Script:
    """The script made of the Lua file of each of ``names`` (in ``scripts``), in order: a script that
    adds holders names ``holders`` first, for that file's function (Lua has no import here)."""
    source = "".join(
        files("lua_redis").joinpath("scripts", f"{name}.lua").read_text(encoding="utf-8") for name in names
    )
    return client.register_script(source)
