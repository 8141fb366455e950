"""Benchmark: what REDIS_WAIT_REPLICAS=1 costs a reservation (``python -m bench.replica_wait``).

A Valkey primary with two asynchronous replicas on this machine, as prod's group. The same
contended sale (a copy for every user, so that every request writes) runs twice, from 8 threads:
reserve alone, and reserve followed by ``confirm.lua`` and ``WAIT 1 100`` pipelined, as the intake
does with the option on (one more round trip per SUCCESS, answered once a replica has the write).
Prints reserves/s, median and p99 latency per mode, the ratio, and the primary's engine time per
reserve (INFO commandstats ``usec``, every command's: the replicas' acknowledgements, REPLCONF,
too): what the WAIT path costs the coupon's slot. On AWS the
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

import redis

from coupon_core.domain.coupons import CouponState
from local.stack.valkey import start_valkey
from local.testkit.stores import WholeStore
from lua_redis.client import connect

REPLICAS = 2  # as prod's replication group: a SUCCESS waits for one of them
After = Callable[[WholeStore, int, int, int], object]  # the store, the coupon, the user, the reservation's time


def _run(url: str, coupon_id: int, users: int, threads: int, after: After) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()
    per_thread = users // threads

    def lane(first: int) -> None:
        store = WholeStore(connect(url))
        mine = []
        for user in range(first, first + per_thread):
            started = time.perf_counter()
            reservation = store.reserve(coupon_id, user)
            assert reservation.outcome.value == "SUCCESS"
            assert reservation.reserved_at is not None
            after(store, coupon_id, user, reservation.reserved_at)
            mine.append(time.perf_counter() - started)
        with lock:
            latencies.extend(mine)

    lanes = [threading.Thread(target=lane, args=(1 + i * per_thread,)) for i in range(threads)]
    for thread in lanes:
        thread.start()
    for thread in lanes:
        thread.join()
    return latencies


def _primary_usec(client: redis.Redis) -> float:
    """The primary's engine time since the last CONFIG RESETSTAT, every command's (replconf too)."""
    return sum(float(stat["usec"]) for stat in client.info("commandstats").values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=8_000)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-wait-"))
    primary = start_valkey(scratch)
    replicas = [start_valkey(scratch, replica_of=primary) for _ in range(REPLICAS)]
    os.environ.update(primary.client_environment)  # trust the stack's CA
    try:
        for replica in replicas:
            while connect(replica.url).info("replication").get("master_link_status") != "up":
                time.sleep(0.1)
        control = connect(primary.url)
        store = WholeStore(control)
        now = store.server_time_ms()
        modes: dict[str, After] = {
            "reserve": lambda *_: None,
            f"reserve + confirm + WAIT 1 of {REPLICAS}": lambda store, coupon, user, at: store.wait_for_replicas(
                coupon, user, at, 1, 100
            ),
        }
        rows = {}
        for coupon_id, (name, after) in enumerate(modes.items(), start=1):
            store.reconcile(CouponState(coupon_id, args.users, now - 60_000, now + 3_600_000, now + 7_200_000), {},
                            release_before=None)  # fmt: skip
            control.config_resetstat()
            started = time.perf_counter()
            latencies = _run(primary.url, coupon_id, args.users, args.threads, after)
            elapsed = time.perf_counter() - started
            rows[name] = (len(latencies) / elapsed, latencies, _primary_usec(control) / len(latencies))
        print("| mode | reserves/s | p50 ms | p99 ms | reserves/s vs reserve alone | primary µs per reserve |")
        print("|---|---:|---:|---:|---:|---:|")
        base = rows["reserve"][0]
        for name, (rate, latencies, usec) in rows.items():
            cuts = statistics.quantiles(latencies, n=100, method="inclusive")
            print(f"| {name} | {rate:,.0f} | {cuts[49] * 1000:.2f} | {cuts[98] * 1000:.2f} | {rate / base:.2f}x "
                  f"| {usec:.2f} |")  # fmt: skip
    finally:
        for replica in replicas:
            replica.stop()
        primary.stop()


if __name__ == "__main__":
    main()
