"""Benchmark: reconciling a coupon of 100,000 issued users (``python -m bench.reconcile``).

On an embedded Valkey (or REDIS_URL), in one run: the chunked reconcile rebuilding a missing
state (staging set in chunks, one RENAME), the chunked reconcile repairing a drifted state
(1,000 users lost, 1,000 leaked), and the naive rebuild of the seed, one Lua script that writes
every user in a single call. For each: wall time and the longest single call as
the server's SLOWLOG measured it (every command logged), which is how long it blocked others.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis

from coupon_core.domain.coupons import CouponState
from local.stack.valkey import start_valkey
from local.testkit.stores import WholeStore
from lua_redis.client import connect
from lua_redis.keys import meta_key, reserved_key

NAIVE_REBUILD = """
redis.call('DEL', KEYS[1])
for i = 1, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
end
return redis.call('ZCARD', KEYS[1])
"""


def measured(client: redis.Redis, action: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds, and the server's longest single command in ms (a script counts as one)."""
    client.slowlog_reset()
    started = time.perf_counter()
    action()
    elapsed = time.perf_counter() - started
    entries = client.slowlog_get(1_000_000)
    return elapsed, max(e["duration"] for e in entries) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--chunk-size", type=int, default=1_000)
    args = parser.parse_args()

    external = os.environ.get("REDIS_URL")
    server = None if external else start_valkey(Path(tempfile.mkdtemp(prefix="bench-reconcile-")))
    redis_url = external or (server.url if server else "")
    os.environ.update(server.client_environment if server else {})  # trust the stack's CA
    try:
        client = connect(redis_url, socket_timeout=60)
        client.config_set("slowlog-log-slower-than", 0)
        client.config_set("slowlog-max-len", 1_000_000)
        store = WholeStore(client, chunk_size=args.chunk_size)
        now = int(time.time() * 1000)
        state = CouponState(1, args.users + 10_000, now - 60_000, now + 3_600_000, now + 7_200_000)
        issued = {user: now - 30_000 + user % 1000 for user in range(1, args.users + 1)}
        naive = client.register_script(NAIVE_REBUILD)
        pairs = [value for user, at in issued.items() for value in (user, at)]

        def drift() -> None:
            client.zrem(reserved_key(1), *range(1, 1_001))
            client.zadd(reserved_key(1), {str(200_000_000 + u): now - 50_000 for u in range(1_000)})

        rows = []
        client.delete(reserved_key(1), meta_key(1))
        rows.append(
            (
                "chunked: rebuild a missing state",
                *measured(client, lambda: store.reconcile(state, issued, release_before=None)),
            )
        )
        drift()
        rows.append(
            (
                "chunked: repair 1,000 lost + 1,000 leaked",
                *measured(client, lambda: store.reconcile(state, issued, release_before=now)),
            )
        )
        assert store.reserved_count(1) == args.users
        client.delete(reserved_key(1), meta_key(1))
        rows.append(
            (
                "naive: one script writes every user",
                *measured(client, lambda: naive(keys=[reserved_key(1)], args=pairs)),
            )
        )
        assert store.reserved_count(1) == args.users

        naive_longest = rows[-1][2]
        print(f"\n{args.users:,} issued users, chunks of {args.chunk_size:,}\n")
        print("| reconcile | wall ms | longest single call ms | longest vs naive |")
        print("|---|---:|---:|---:|")
        for name, elapsed, longest in rows:
            print(f"| {name} | {elapsed * 1000:,.0f} | {longest:.2f} | {longest / naive_longest:.3f}x |")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
