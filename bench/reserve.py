"""Benchmarks of the reserve, the one script every request runs: ``python -m bench.reserve MODE``.

alternatives  the Lua reserve against naive, WATCH/MULTI and lock-per-request versions (and an
              INCR, the floor): every version runs the same flash sale (same users, double clicks,
              processes and threads) on the same Valkey, one after the other, from a clean state.
              Prints ops/s, the ratio to Lua, the oversold count, the users booked twice and the
              server's time per call (INFO commandstats). Two scenarios: "sell-out" (ten times more
              users than copies: most answers are SOLD_OUT, which only reads) and "contended" (a copy
              for every user: every request writes, the worst case for WATCH/MULTI, whose
              transactions abort each other). The versions check what ``reserve.lua`` checks
              (window, duplicate, quantity) on the same keys, so the only difference is how the
              check and the write are tied together.
ceiling       what one Valkey core sustains for ``reserve.lua`` on one hot coupon. Every key of a
              coupon lives in one hash slot, so one coupon is served by one shard's one engine
              thread, however large the cluster. For each answer a sale gives (SUCCESS: a copy
              taken; SOLD_OUT: after the sell-out, most of a sale; DUPLICATE: a second click) and
              for a plain SET, ``--processes`` clients each keep ``--depth`` calls in flight
              (pipelined, raw RESP on a socket) for ``--seconds``. Prints the server's time per call
              (commandstats ``usec_per_call``), the ceiling it allows (1,000,000 / usec), the calls
              per second measured and their ratio to the ceiling, and the engine thread's whole CPU
              per call (INFO cpu). The SET is the yardstick of ElastiCache Serverless, which bills a
              SET as one ECPU and other commands by their vCPU time: a reserve's engine CPU over a
              SET's estimates its ECPUs.
wait          what REDIS_WAIT_REPLICAS=1 costs a reservation: a primary with two asynchronous
              replicas, as prod's group; a contended sale (a copy for every user, so that every
              request writes) from 8 threads, reserve alone and reserve followed by ``confirm.lua``
              and ``WAIT 1 100`` pipelined, as the intake does with the option on (one more round
              trip per SUCCESS, answered once a replica has the write). Prints reserves/s, p50 and
              p99 latency, the ratio, and the primary's engine time per reserve (every command's,
              the replicas' REPLCONF too). On AWS the replica is in another availability zone:
              there the round trip dominates.

    make bench                                               # each mode, at its defaults
    python -m bench.reserve alternatives --scenario sell-out
    python -m bench.reserve ceiling --depth 1                # one call at a time, as a Lambda container
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

from coupon_core.domain.coupons import CouponState
from local.stack.services import service_urls
from local.stack.valkey import start_valkey
from local.testkit.flash_sale import LoadPlan, LoadResult, Reserver, ReserverFactory, lua_reserver, run_load
from local.testkit.stores import WholeStore
from lua_redis.client import connect, register
from lua_redis.keys import holders_key, idempotency_key, meta_key, requests_key, reserved_key
from lua_redis.lock import held_lock, issue_lock_name

# alternatives: the versions measured against reserve.lua


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _decide(client: redis.Redis, coupon_id: int, user_id: int) -> tuple[str | None, int]:
    """Read the state with separate commands; return an outcome, or None if the user may take one."""
    total, starts_at, ends_at = (
        str(value) for value in client.hmget(meta_key(coupon_id), "total", "startsAt", "endsAt")
    )
    now = _now_ms()
    if now < int(starts_at):
        return "NOT_OPEN", now
    if now >= int(ends_at):
        return "ENDED", now
    if client.zscore(reserved_key(coupon_id), user_id) is not None:
        return "DUPLICATE", now
    if client.zcount(reserved_key(coupon_id), 1, "+inf") >= int(total):
        return "SOLD_OUT", now
    return None, now


def _check_then_write(client: redis.Redis, coupon_id: int, user_id: int) -> str:
    outcome, now = _decide(client, coupon_id, user_id)
    if outcome:
        return outcome
    client.zadd(reserved_key(coupon_id), {str(user_id): now})
    return "SUCCESS"


def naive_reserver(redis_url: str) -> Reserver:
    """Check, then write, in separate round trips: fast, and it oversells."""
    client = connect(redis_url)
    return lambda coupon_id, user_id: _check_then_write(client, coupon_id, user_id)


def watch_reserver(redis_url: str) -> Reserver:
    """Optimistic: WATCH the keys, check, MULTI/EXEC the write, start again on a conflict."""
    client = connect(redis_url)

    def reserve(coupon_id: int, user_id: int) -> str:
        while True:
            with client.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(reserved_key(coupon_id), meta_key(coupon_id))
                    outcome, now = _decide(pipe, coupon_id, user_id)
                    if outcome:
                        return outcome
                    pipe.multi()
                    pipe.zadd(reserved_key(coupon_id), {str(user_id): now})
                    pipe.execute()
                    return "SUCCESS"
                except redis.WatchError:
                    continue

    return reserve


def locked_reserver(redis_url: str) -> Reserver:
    """Pessimistic: the coupon's lock around the naive check-then-write, for every request."""
    client = connect(redis_url, socket_timeout=30)

    def reserve(coupon_id: int, user_id: int) -> str:
        with held_lock(client, issue_lock_name(coupon_id), lease_s=10, wait_s=10):
            return _check_then_write(client, coupon_id, user_id)

    return reserve


def incr_reserver(redis_url: str) -> Reserver:
    """Not a reserve at all: one INCR, the cheapest write Redis has, as the floor."""
    client = connect(redis_url)

    def reserve(coupon_id: int, user_id: int) -> str:
        client.execute_command("INCR", f"bench:incr:{{{coupon_id}}}")  # redis-py's incr() sends INCRBY
        return "INCR"

    return reserve


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


def alternatives(args: argparse.Namespace) -> None:
    """Every version on the same sale, one after the other, from a clean state."""
    names = ["lua", *[name for name in args.only or STRATEGIES if name != "lua"]]

    with ExitStack() as stack:
        redis_url = service_urls(stack, "bench-reserve-", ("REDIS_URL",))["REDIS_URL"]
        for scenario in args.scenario or SCENARIOS:
            users, quantity = SCENARIOS[scenario]
            plan = LoadPlan(coupon_id=1, users=users, clicks=2, processes=args.processes, threads=args.threads)
            rows = []
            for name in names:
                print(f"{scenario}: running {name} ...", flush=True)
                rows.append(run_strategy(name, redis_url, plan, quantity))
            print_table(scenario, rows, plan, quantity)


# ceiling: one hot coupon on one engine thread

COUPON = 1


def _command(*parts: str | int) -> bytes:
    """One command in RESP, the protocol's own encoding (what a client library would send)."""
    encoded = [str(part).encode() for part in parts]
    return b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(e), e) for e in encoded)


@contextmanager
def _raw_socket(client: redis.Redis) -> Iterator[socket.socket]:
    """The socket of one of ``client``'s connections, connected, encrypted and authenticated."""
    connection = client.connection_pool.get_connection()
    connection.connect()
    try:
        assert connection._sock is not None  # redis-py keeps the socket there
        yield connection._sock
    finally:
        connection.disconnect()


def client_loop(url: str, answer: str, users: tuple[int, int, bool], depth: int, seconds: float) -> float:
    """One client's calls per second: rounds of ``depth`` calls written at once, then their
    replies read, for ``seconds`` from its first call (its process's start and its connection
    left out). ``users``: the first user, the step to the next, and whether every call is the
    first user's. The socket is the library's, once it has done the TLS handshake and AUTH, then
    used raw, so that the client's own cost (a library encoding each call in Python) is not what
    is measured; the reserves are the commands ``WholeStore.reserve`` sends, and SET is the
    yardstick (one ECPU on ElastiCache Serverless)."""
    first_user, users_step, same_user = users
    script = register(client := connect(url), "holders", "reserve")
    sha = client.script_load(script.script)  # EVALSHA on a raw socket does not load it on NOSCRIPT
    keys = [reserved_key(COUPON), meta_key(COUPON), requests_key(COUPON), idempotency_key(COUPON), holders_key(COUPON)]
    # +OK; *2, the code and the time; SOLD_OUT's *5, its code, 0, the ms it stands, and the filter's
    # version (an epoch of 32 hex digits and the count of adds, two bulk strings of two lines each)
    lines_per_reply = {"SET": 1, "SOLD_OUT": 8}.get(answer, 3)
    calls, user = 0, first_user
    with _raw_socket(client) as conn:
        started = time.monotonic()
        while time.monotonic() < started + seconds:
            batch = []
            for _ in range(depth):
                who = first_user if same_user else user
                if answer == "SET":
                    batch.append(_command("SET", f"probe:{{{COUPON}}}:{who}", "x"))
                else:
                    batch.append(_command("EVALSHA", sha, len(keys), *keys, who, str(uuid.uuid4()), ""))
                user += users_step
            conn.sendall(b"".join(batch))
            lines = 0
            while lines < lines_per_reply * depth:
                data = conn.recv(1 << 20)
                if b"-" in data[:1] or b"\r\n-" in data:
                    raise RuntimeError(f"Valkey refused a call: {data[:200]!r}")
                lines += data.count(b"\r\n")
            calls += depth
        return calls / (time.monotonic() - started)


def _engine_cpu_s(client: redis.Redis) -> float:
    """The engine thread's CPU so far, user and system (INFO cpu): the command, and the reading,
    parsing and writing around it that commandstats leave out."""
    cpu = client.info("cpu")
    return float(cpu["used_cpu_user_main_thread"]) + float(cpu["used_cpu_sys_main_thread"])


def measure(url: str, answer: str, args: argparse.Namespace) -> tuple[float, float, float]:
    """(server usec per call, engine CPU usec per call, calls per second) for ``answer``'s path."""
    client = connect(url)
    client.flushall()
    now = client.time()[0] * 1000
    total = {"SUCCESS": 100_000_000, "SOLD_OUT": 1}.get(answer, 100_000_000)
    state = CouponState(COUPON, total, now - 60_000, now + 3_600_000, now + 7_200_000)
    store = WholeStore(client)
    store.reconcile(state, {}, release_before=None)
    if answer == "SOLD_OUT":
        store.reserve(COUPON, 10**12)  # the one copy is gone
    if answer == "DUPLICATE":
        for process in range(args.processes):
            store.reserve(COUPON, 1 + process)
    client.config_resetstat()
    cpu_before = _engine_cpu_s(client)
    jobs = [
        (url, answer, (1 + process, args.processes, answer == "DUPLICATE"), args.depth, args.seconds)
        for process in range(args.processes)
    ]
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        rate = sum(pool.starmap(client_loop, jobs))
    stats = client.info("commandstats")["cmdstat_set" if answer == "SET" else "cmdstat_evalsha"]
    engine_usec = (_engine_cpu_s(client) - cpu_before) * 1e6 / int(stats["calls"])
    return float(stats["usec_per_call"]), engine_usec, rate


def ceiling(args: argparse.Namespace) -> None:
    """One coupon's ceiling for each answer, and a SET's beside it."""
    with ExitStack() as stack:
        url = service_urls(stack, "bench-ceiling-", ("REDIS_URL",))["REDIS_URL"]
        rows = [(answer, *measure(url, answer, args)) for answer in ("SET", "SUCCESS", "SOLD_OUT", "DUPLICATE")]
    print(f"one coupon, {args.processes} client processes x {args.depth} pipelined calls, {args.seconds:.0f} s each")
    print(
        "| answer | server usec/call | ceiling calls/s (1e6/usec) | measured calls/s | measured / ceiling "
        "| engine CPU usec/call | ECPUs (engine CPU / a SET's) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    set_cpu = rows[0][2]
    for answer, usec, cpu, rate in rows:
        allowed = 1_000_000 / usec
        cells = f"{usec:.2f} | {allowed:,.0f} | {rate:,.0f} | {rate / allowed:.2f} | {cpu:.2f} | {cpu / set_cpu:.1f}"
        print(f"| {answer} | {cells} |")


# wait: a reservation that waits for a replica

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


def wait(args: argparse.Namespace) -> None:
    """The contended sale on a primary and its replicas, with and without the WAIT."""
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    versions = modes.add_parser("alternatives", help="the Lua reserve against the ways without a script")
    versions.add_argument("--scenario", choices=list(SCENARIOS), action="append", help="run only these scenarios")
    versions.add_argument("--processes", type=int, default=4)
    versions.add_argument("--threads", type=int, default=8)
    versions.add_argument("--only", choices=list(STRATEGIES), action="append", help="run only these versions")
    hot = modes.add_parser("ceiling", help="what one Valkey core sustains on one hot coupon")
    hot.add_argument("--processes", type=int, default=2)
    hot.add_argument("--depth", type=int, default=32, help="calls in flight per client (pipelined)")
    hot.add_argument("--seconds", type=float, default=5)
    replicated = modes.add_parser("wait", help="what REDIS_WAIT_REPLICAS=1 costs a reservation")
    replicated.add_argument("--users", type=int, default=8_000)
    replicated.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    {"alternatives": alternatives, "ceiling": ceiling, "wait": wait}[args.mode](args)


if __name__ == "__main__":
    main()
