"""Benchmark: the intake against the bare handler in forked containers, CPU read from outside
them (``python -m bench.intake_forked``).

N containers of each handler (8 by default), each a process forked from this one before any
handler is imported, which then sets ``AWS_LAMBDA_INITIALIZATION_TYPE`` and imports its handler
(its INIT, connections opened, as Lambda loads it) and stays warm from load to load. A load is a
SOLD_OUT-heavy sale on a fresh coupon: every user clicks twice, a user's clicks in one container
(``--users 1900 --copies 100``: 3,800 requests). Each container's CPU is read from
``/proc/<pid>/stat`` by this process (every thread of it: the Kafka producer's I/O thread too)
around the load, the events made before it. Rounds alternate which handler goes first; the
first round, which warms the containers' code and connections, is left out of the median.
Prints CPU µs per answer and its ratio (the bare handler's over the intake's), round by round.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import os
import statistics
import sys
from contextlib import ExitStack
from multiprocessing.connection import Connection
from typing import Any

HANDLERS = {"bare": "bench.bare_intake", "intake": "functions.intake.app"}
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> float:
    """User and system CPU of the process ``pid``, all its threads."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()  # noqa: SIM115 - one read
    return (int(fields[11]) + int(fields[12])) / TICKS


def _container(module: str, orders: Connection) -> None:
    os.environ["AWS_LAMBDA_INITIALIZATION_TYPE"] = "on-demand"
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the metrics lines, for the process's life
    from local.testkit.lambda_events import InProcessContext  # noqa: PLC0415 - after the fork

    handler, context = importlib.import_module(module).handler, InProcessContext()
    orders.send("ready")
    while (events := orders.recv()) is not None:
        orders.send("loaded")
        orders.recv()  # go
        for event in events:
            handler(event, context)
        orders.send("done")


class Containers:
    def __init__(self, module: str, count: int) -> None:
        context = multiprocessing.get_context("fork")
        self._pairs: list[tuple[Any, Connection]] = []
        for _ in range(count):
            ours, theirs = context.Pipe()
            process = context.Process(target=_container, args=(module, theirs))
            process.start()
            self._pairs.append((process, ours))
        for _, orders in self._pairs:
            assert orders.recv() == "ready"

    def load(self, events: list[list[dict[str, Any]]]) -> float:
        """CPU seconds the containers spent answering ``events`` (one list per container)."""
        for (_, orders), mine in zip(self._pairs, events, strict=True):
            orders.send(mine)
        for _, orders in self._pairs:
            assert orders.recv() == "loaded"
        before = sum(_cpu_s(process.pid) for process, _ in self._pairs)
        for _, orders in self._pairs:
            orders.send("go")
        for _, orders in self._pairs:
            assert orders.recv() == "done"
        return sum(_cpu_s(process.pid) for process, _ in self._pairs) - before

    def close(self) -> None:
        for process, orders in self._pairs:
            orders.send(None)
            process.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--containers", type=int, default=8)
    parser.add_argument("--users", type=int, default=1_900)
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    from bench.intake import create_coupon, emit, quiet_intake_servers  # noqa: PLC0415 - sets the environment
    from local.testkit.lambda_events import api_event  # noqa: PLC0415

    with ExitStack() as stack:
        quiet_intake_servers(stack, "bench-forked-")
        pools = {name: Containers(module, args.containers) for name, module in HANDLERS.items()}
        for pool in pools.values():
            stack.callback(pool.close)
        requests = 2 * args.users
        shape = f"{requests:,} requests from {args.users:,} users, {args.copies} copies"
        emit(f"\n{args.containers} forked containers, {shape}\n")
        emit("| round | bare µs/answer | intake µs/answer | bare / intake |\n|---:|---:|---:|---:|")
        ratios = []
        for round_ in range(args.rounds):
            cpu = {}
            for name in ("bare", "intake") if round_ % 2 else ("intake", "bare"):
                coupon_id = create_coupon(total=args.copies)
                events: list[list[dict[str, Any]]] = [[] for _ in range(args.containers)]
                for user in range(1, args.users + 1):
                    for _ in (1, 2):
                        body = {"couponId": coupon_id, "userId": user}
                        events[user % args.containers].append(api_event("POST", "/coupon-issues", body))
                cpu[name] = pools[name].load(events) / requests * 1e6
            ratio = cpu["bare"] / cpu["intake"]
            ratios += [ratio] if round_ else []
            label = f"{round_}{' (warm-up)' if not round_ else ''}"
            emit(f"| {label} | {cpu['bare']:.0f} | {cpu['intake']:.0f} | {ratio:.2f}x |")
        emit(f"\nmedian of rounds 1-{args.rounds - 1}: the intake at {statistics.median(ratios):.2f}x the bare handler")


if __name__ == "__main__":
    main()
