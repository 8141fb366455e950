"""Benchmark: the Lua reserve against naive, WATCH/MULTI and lock-per-request versions.

Every version runs the same flash sale (same users, double clicks, processes and threads) on
the same Valkey, one after the other, from a clean state. Prints ops/s, the ratio to Lua, the
oversold count, the users booked twice, and the server's time per call (INFO commandstats).

Two scenarios: "sell-out" (ten times more users than copies: most answers are SOLD_OUT, which
only reads) and "contended" (a copy for every user: every request writes, the worst case for
WATCH/MULTI, whose transactions abort each other).

    make bench            # or: python -m bench.reserve --scenario sell-out
"""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.reserve_alternatives import incr_reserver, locked_reserver, naive_reserver, watch_reserver
from coupon_core.domain.coupons import CouponState
from local.stack.valkey import start_valkey
from local.testkit.flash_sale import LoadPlan, LoadResult, ReserverFactory, lua_reserver, run_load
from local.testkit.stores import WholeStore
from lua_redis.client import connect

STRATEGIES: dict[str, tuple[ReserverFactory, str]] = {
    "lua": (lua_reserver, "evalsha"),
    "naive": (naive_reserver, ""),
    "watch/multi": (watch_reserver, "exec"),
    "lock per request": (locked_reserver, ""),
    "incr (floor)": (incr_reserver, "incr"),
}


SCENARIOS: dict[str, tuple[int, int]] = {  # name: (users, quantity); every user clicks twice
    "sell-out": (10_000, 1_000),
    "contended": (2_000, 2_000),
}


@dataclass(frozen=True)
class Row:
    name: str
    result: LoadResult
    oversold: int
    double_booked: int
    server_usec: float | None


def run_strategy(name: str, redis_url: str, plan: LoadPlan, quantity: int) -> Row:
    factory, command = STRATEGIES[name]
    client = connect(redis_url)
    client.flushall()
    now = connect(redis_url).time()[0] * 1000
    state = CouponState(plan.coupon_id, quantity, now - 60_000, now + 3_600_000, now + 7_200_000)
    WholeStore(client).reconcile(state, {}, release_before=None)
    client.config_resetstat()
    result = run_load(factory, redis_url, plan)
    stats = client.info("commandstats")
    server_usec = float(stats[f"cmdstat_{command}"]["usec_per_call"]) if command else None
    successes = result.outcomes.get("SUCCESS", 0)
    double_booked = sum(1 for count in result.successes.values() if count > 1)
    return Row(name, result, max(0, successes - quantity), double_booked, server_usec)


def print_table(scenario: str, rows: list[Row], plan: LoadPlan, quantity: int) -> None:
    lua_rate = rows[0].result.per_second
    print(
        f"\n{scenario}: {plan.users:,} users x {plan.clicks} clicks, quantity {quantity:,}, "
        f"{plan.processes} processes x {plan.threads} threads\n"
    )
    print("| version | ops/s | vs Lua | p99 ms | SUCCESS | oversold | users booked twice | server us/call |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        usec = f"{row.server_usec:.2f}" if row.server_usec is not None else "-"
        print(
            f"| {row.name} | {row.result.per_second:,.0f} | {row.result.per_second / lua_rate:.2f}x "
            f"| {row.result.percentile_ms(99):.2f} | {row.result.outcomes.get('SUCCESS', 0)} "
            f"| {row.oversold} | {row.double_booked} | {usec} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", choices=list(SCENARIOS), action="append", help="run only these scenarios")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--only", choices=list(STRATEGIES), action="append", help="run only these versions")
    args = parser.parse_args()
    names = ["lua", *[name for name in args.only or STRATEGIES if name != "lua"]]

    external = os.environ.get("REDIS_URL")
    server = None if external else start_valkey(Path(tempfile.mkdtemp(prefix="bench-reserve-")))
    redis_url = external or (server.url if server else "")
    os.environ.update(server.client_environment if server else {})  # trust the stack's CA
    try:
        for scenario in args.scenario or SCENARIOS:
            users, quantity = SCENARIOS[scenario]
            plan = LoadPlan(coupon_id=1, users=users, clicks=2, processes=args.processes, threads=args.threads)
            rows = []
            for name in names:
                print(f"{scenario}: running {name} ...", flush=True)
                rows.append(run_strategy(name, redis_url, plan, quantity))
            print_table(scenario, rows, plan, quantity)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
