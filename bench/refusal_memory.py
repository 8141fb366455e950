"""Benchmark: what the intake's memory of refusals saves Redis (``python -m bench.refusal_memory``).

N forked containers of the intake (4 by default), loaded as Lambda loads them (``bench/intake_forked.py``),
once with the memory (``ANSWER_MEMORY_MS=1000``, the default) and once without (``0``), each
answering the same phases of a sale on fresh coupons against embedded Valkey, Tansu and
PostgreSQL:

- the sale: ``--quantity`` copies, ``--users`` users who each click twice, the two clicks in
  different containers (the demo's shape: ``--quantity 200 --users 1000``);
- after the sell-out, one click in eight from a holder (the holders click again, the rest are
  users who hold nothing), and non-holders alone;
- before the window opens.

Per phase: Redis round trips and commands per request, counted from MONITOR as the demo's report
counts them (``redis_monitor.issue_requests_load``: reserve.lua's calls and the holders'
filter's reads, and for commands the calls inside each reserve too), and the containers' CPU per
answer. Then the holders' filter against its alternatives on a coupon of
100,000 copies: what reading it costs Valkey beside a copy of the holders (ZRANGE) and a read
per request (ZSCORE).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import redis

from bench.intake import call, emit, quiet_intake_servers
from bench.intake_forked import Containers
from local.testkit.lambda_events import api_event
from local.testkit.redis_monitor import issue_requests_load, monitored
from lua_redis.client import connect
from lua_redis.keys import holders_key, reserved_key
from lua_redis.store import build_filter, size_bits

VARIANTS = {"without the memory": "0", "with the memory": "1000"}
Clicks = list[tuple[int, int]]  # (user, container)


def events_of(coupon_id: int, clicks: Clicks, containers: int) -> list[list[dict[str, Any]]]:
    events: list[list[dict[str, Any]]] = [[] for _ in range(containers)]
    for user, container in clicks:
        events[container % containers].append(
            api_event("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user})
        )
    return events


def measured(
    client: redis.Redis, pool: Containers, coupon_id: int, clicks: Clicks, containers: int
) -> tuple[float, float, float]:
    """Round trips, commands and CPU µs per request of ``clicks`` on ``coupon_id``."""
    events = events_of(coupon_id, clicks, containers)
    cpu: list[float] = []
    trips, ran = issue_requests_load(monitored(client, lambda: cpu.append(pool.load(events))), coupon_id)
    requests = len(clicks)
    return trips / requests, ran / requests, cpu[0] / requests * 1e6


def phases(args: argparse.Namespace) -> dict[str, Callable[[], tuple[int, Clicks]]]:
    """Each phase: a fresh coupon made ready for it, and the clicks measured on it."""
    q, users = args.quantity, args.users
    both_clicks = [(user, user + click) for user in range(1, users + 1) for click in (0, 1)]

    def the_sale() -> tuple[int, Clicks]:
        return coupon(q), both_clicks

    def sold_out(clicks: Clicks) -> tuple[int, Clicks]:
        coupon_id = coupon(q)
        for user in range(1, q + 1):  # the holders take every copy first (not measured)
            assert call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user})[1]["status"] == "SUCCESS"
        return coupon_id, clicks

    holders_then_others = [(user, user) for user in range(1, q + 1)] + [(q + n, n) for n in range(1, 7 * q + 1)]
    non_holders = [(q + n, n) for n in range(1, 8 * q + 1)]

    def before_the_window() -> tuple[int, Clicks]:
        return coupon(q, opens_in_s=3600), both_clicks

    return {
        f"the sale: {q:,} copies, {users:,} users x 2 clicks": the_sale,
        "after the sell-out, 1 click in 8 from a holder": lambda: sold_out(holders_then_others),
        "after the sell-out, non-holders alone": lambda: sold_out(non_holders),
        "before the window opens": before_the_window,
    }


def coupon(copies: int, *, opens_in_s: int = -60) -> int:
    """A coupon of ``copies`` whose window opens ``opens_in_s`` from now, its state in Redis (built by
    a first request, of a user who takes no copy of it)."""
    now = time.time()
    status, body = call(
        "POST",
        "/coupons",
        {
            "name": "bench",
            "totalQuantity": copies + (opens_in_s < 0),  # the warming request takes one of an open coupon
            "issueStartsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + opens_in_s)),
            "issueEndsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 7200)),
        },
    )
    assert status == 201, body
    coupon_id = int(body["couponId"])
    call("POST", "/coupon-issues", {"couponId": coupon_id, "userId": 2**62})
    return coupon_id


def filter_against_alternatives(client: redis.Redis, copies: int = 100_000) -> None:
    """Valkey's cost of learning who holds a coupon of ``copies``, each way, once."""
    coupon_id = 10**9
    members = [str(user) for user in range(1, copies + 1)]
    for start in range(0, copies, 10_000):
        client.zadd(reserved_key(coupon_id), dict.fromkeys(members[start : start + 10000], 1))
    bits = size_bits(copies)
    client.set(holders_key(coupon_id), build_filter(members, bits))
    raw = redis.Redis.from_url(os.environ["REDIS_URL"])  # bytes, as the store reads the filter
    raw.ping()  # connected before anything is timed
    rows = []
    for name, read in {
        "the holders' filter (GET)": lambda: raw.get(holders_key(coupon_id)),
        "a copy of the holders (ZRANGE)": lambda: raw.zrange(reserved_key(coupon_id), 0, -1),
        "a read per request (ZSCORE)": lambda: raw.zscore(reserved_key(coupon_id), "424242"),
    }.items():
        client.config_resetstat()
        started = time.perf_counter()
        reply = read()
        elapsed = time.perf_counter() - started
        stats = client.info("commandstats")
        usec = sum(
            int(value["usec"]) for key, value in stats.items() if not key.startswith(("cmdstat_info", "cmdstat_config"))
        )
        size = (
            len(reply) if isinstance(reply, bytes) else sum(len(m) + 3 for m in reply) if isinstance(reply, list) else 8
        )
        rows.append(f"| {name} | {usec:,} | {size / 1024:,.0f} KB | {elapsed * 1000:.1f} ms |")
    raw.close()
    emit(
        f"\nLearning who holds a coupon of {copies:,} copies, once "
        "(Valkey's own µs, the reply, the client's wall time):\n"
    )
    emit("| how | Valkey µs | reply | wall |\n|---|---:|---:|---:|")
    for row in rows:
        emit(row)
    emit(f"(the filter: {bits:,} bits, 5 hashes; a read per request costs its µs on every request)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--containers", type=int, default=4)
    parser.add_argument("--quantity", type=int, default=200)
    parser.add_argument("--users", type=int, default=1_000)
    args = parser.parse_args()
    with ExitStack() as stack:
        quiet_intake_servers(stack, "bench-memory-")
        client = connect(os.environ["REDIS_URL"])
        stack.callback(client.close)
        pools = {}
        for name, memory_ms in VARIANTS.items():
            os.environ["ANSWER_MEMORY_MS"] = memory_ms  # read by each container's INIT, after the fork
            pools[name] = Containers("functions.intake.app", args.containers)
            stack.callback(pools[name].close)
        emit(f"\n{args.containers} forked intake containers; per request: Redis round trips, commands, CPU µs\n")
        emit("| phase | " + " | ".join(f"{name}: round trips / commands / CPU µs" for name in VARIANTS) + " |")
        emit("|---|" + "---:|" * len(VARIANTS))
        for phase, make in phases(args).items():
            cells = []
            for name in VARIANTS:
                coupon_id, clicks = make()
                trips, ran, cpu = measured(client, pools[name], coupon_id, clicks, args.containers)
                cells.append(f"{trips:.3f} / {ran:.2f} / {cpu:.0f}")
            emit(f"| {phase} | " + " | ".join(cells) + " |")
        filter_against_alternatives(client)


if __name__ == "__main__":
    main()
