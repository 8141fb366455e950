"""Benchmark: what REDIS_WAIT_REPLICAS=1 costs a reservation (``python -m bench.replica_wait``).

A Valkey primary with one asynchronous replica on this machine. The same contended sale (a copy
for every user, so that every request writes) runs twice, from 8 threads: reserve alone, and
reserve followed by ``WAIT 1 100`` as the intake does with the option on (one more round trip
per SUCCESS, answered once the replica has the write). Prints reserves/s, median and p99
latency per mode, the ratio, and the primary's own time per call (INFO commandstats
``usec_per_call``: what WAIT costs the coupon's slot, against the reserve's EVALSHA). On AWS the
replica is in another availability zone: there the round trip, not the replica's work, dominates
the added latency.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from coupon_core.domain.coupons import CouponState
from local.stack.valkey import start_valkey
from local.testkit.stores import WholeStore
from lua_redis.client import connect


def _run(url: str, coupon_id: int, users: int, threads: int, after: Callable[[WholeStore], object]) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()
    per_thread = users // threads

    def lane(first: int) -> None:
        store = WholeStore(connect(url))
        mine = []
        for user in range(first, first + per_thread):
            started = time.perf_counter()
            assert store.reserve(coupon_id, user).outcome.value == "SUCCESS"
            after(store)
            mine.append(time.perf_counter() - started)
        with lock:
            latencies.extend(mine)

    lanes = [threading.Thread(target=lane, args=(1 + i * per_thread,)) for i in range(threads)]
    for thread in lanes:
        thread.start()
    for thread in lanes:
        thread.join()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=8_000)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-wait-"))
    primary = start_valkey(scratch)
    replica = start_valkey(scratch, replica_of=primary)
    os.environ.update(primary.client_environment)  # trust the stack's CA
    try:
        replica_client = connect(replica.url)
        while replica_client.info("replication").get("master_link_status") != "up":
            time.sleep(0.1)
        store = WholeStore(connect(primary.url))
        now = store.server_time_ms()
        modes: dict[str, Callable[[WholeStore], object]] = {
            "reserve": lambda _: None,
            "reserve + WAIT 1": lambda s: s.wait_for_replicas(1, 100),
        }
        rows = {}
        for coupon_id, (name, after) in enumerate(modes.items(), start=1):
            store.reconcile(CouponState(coupon_id, args.users, now - 60_000, now + 3_600_000, now + 7_200_000), {},
                            release_before=None)  # fmt: skip
            started = time.perf_counter()
            latencies = _run(primary.url, coupon_id, args.users, args.threads, after)
            rows[name] = (len(latencies) / (time.perf_counter() - started), latencies)
        print("| mode | reserves/s | p50 ms | p99 ms | reserves/s vs reserve alone |")
        print("|---|---:|---:|---:|---:|")
        base = rows["reserve"][0]
        for name, (rate, latencies) in rows.items():
            cuts = statistics.quantiles(latencies, n=100, method="inclusive")
            print(f"| {name} | {rate:,.0f} | {cuts[49] * 1000:.2f} | {cuts[98] * 1000:.2f} | {rate / base:.2f}x |")
        stats = connect(primary.url).info("commandstats")
        print("\nthe primary's time per call: " + ", ".join(
            f"{command} {stats[f'cmdstat_{command}']['usec_per_call']:.2f} µs" for command in ("evalsha", "wait")
        ))  # fmt: skip
    finally:
        replica.stop()
        primary.stop()


if __name__ == "__main__":
    main()
