"""The flash-sale demo (``make demo``): a real sale against the reservation layer.

Starts an embedded Valkey (or uses ``REDIS_URL``), opens a coupon, lets 10,000 users click
twice each from several processes, and prints the outcomes, the throughput, the latency and
whether invariants I1 (no oversell) and I2 (one per user) held. Exits 1 if one broke.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from local.flash_sale import LoadPlan, LoadResult, lua_reserver, run_load
from local.services import start_valkey
from lua_redis import CouponState, ReservationStore, connect
from lua_redis.keys import meta_key, reserved_key, watermark_key

SCRATCH = Path(".local") / "demo"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quantity", type=int, default=1_000, help="copies of the coupon")
    parser.add_argument("--users", type=int, default=10_000, help="distinct users")
    parser.add_argument("--clicks", type=int, default=2, help="requests per user, sent at the same moment")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8)
    return parser.parse_args(argv)


def check_invariants(result: LoadResult, store: ReservationStore, coupon_id: int, quantity: int) -> dict[str, bool]:
    reserved = store.reserved_count(coupon_id)
    successes = result.outcomes.get("SUCCESS", 0)
    return {
        f"I1 no oversell: {successes} SUCCESS, {reserved} reserved, quantity {quantity}": (
            successes <= quantity and reserved <= quantity
        ),
        "I2 one per user: no user got two SUCCESS, reserved count equals SUCCESS count": (
            max(result.successes.values(), default=0) <= 1 and reserved == successes
        ),
    }


def report(result: LoadResult, invariants: dict[str, bool], plan: LoadPlan) -> None:
    print(
        f"\nFlash sale: {plan.users:,} users x {plan.clicks} clicks "
        f"from {plan.processes} processes x {plan.threads} threads"
    )
    for outcome, count in result.outcomes.most_common():
        print(f"  {outcome:<10} {count:>8,}")
    print(f"  {'requests':<10} {result.requests:>8,} in {result.elapsed_s:.2f} s = {result.per_second:,.0f} requests/s")
    print(
        f"  latency    p50 {result.percentile_ms(50):.2f} ms, p95 {result.percentile_ms(95):.2f} ms, "
        f"p99 {result.percentile_ms(99):.2f} ms"
    )
    print("\nInvariants")
    for name, held in invariants.items():
        print(f"  [{'held' if held else 'BROKEN'}] {name}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = LoadPlan(coupon_id=1, users=args.users, clicks=args.clicks, processes=args.processes, threads=args.threads)
    external = os.environ.get("REDIS_URL")
    server = None if external else start_valkey(SCRATCH)
    redis_url = external or server.url
    try:
        client = connect(redis_url)
        store = ReservationStore(client)
        now_ms = client.time()[0] * 1000
        coupon = CouponState(plan.coupon_id, args.quantity, now_ms - 1_000, now_ms + 3_600_000, now_ms + 7_200_000)
        client.delete(*(key(plan.coupon_id) for key in (meta_key, reserved_key, watermark_key)))  # a fresh sale
        store.reconcile(coupon, {}, watermark=None, skew_ms=0)
        print(f"Coupon {plan.coupon_id}: {args.quantity:,} copies, Valkey at {redis_url}")
        result = run_load(lua_reserver, redis_url, plan)
        invariants = check_invariants(result, store, plan.coupon_id, args.quantity)
        report(result, invariants, plan)
    finally:
        if server is not None:
            server.stop()
    return 0 if all(invariants.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
