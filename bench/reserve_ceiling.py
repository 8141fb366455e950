"""Benchmark: what one Valkey core sustains for ``reserve.lua`` on one hot coupon
(``python -m bench.reserve_ceiling``).

Every key of a coupon lives in one hash slot (the keys carry ``{id}``), so one coupon is served
by one shard's one engine thread, however large the cluster: its ceiling is that core's. For
each answer a sale gives (SUCCESS: a copy taken; SOLD_OUT: after the sell-out, which is most of
a sale; DUPLICATE: a second click) and for a plain SET, ``--processes`` clients each keep
``--depth`` calls in flight (pipelined, as redis-benchmark does; raw RESP on a socket) for
``--seconds``. Prints the server's own time per call (INFO commandstats ``usec_per_call``), the
ceiling that time allows (1,000,000 / usec per call), the calls per second measured, measured /
ceiling, and the engine thread's whole CPU per call (INFO cpu: the reading, parsing and writing
too). The SET is the yardstick of ElastiCache Serverless, which bills a simple SET or GET as one
ECPU and other commands by the vCPU time they take: a reserve's engine CPU over a SET's
estimates its ECPUs.
"""

from __future__ import annotations

import argparse
import multiprocessing
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import redis

from coupon_core.domain.coupons import CouponState
from local.stack.services import service_urls
from local.testkit.stores import WholeStore
from lua_redis.client import connect, register
from lua_redis.keys import holders_key, idempotency_key, meta_key, requests_key, reserved_key

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


def client_loop(url: str, answer: str, users: tuple[int, int, bool], depth: int, until: float) -> int:
    """One client: rounds of ``depth`` calls written at once, then their replies read, until
    ``until``. ``users``: the first user, the step to the next, and whether every call is the
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
        while time.monotonic() < until:
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
    return calls


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
    until = time.monotonic() + args.seconds
    jobs = [
        (url, answer, (1 + process, args.processes, answer == "DUPLICATE"), args.depth, until)
        for process in range(args.processes)
    ]
    started = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        calls = sum(int(n) for n in pool.starmap(client_loop, jobs))
    elapsed = time.monotonic() - started
    engine_usec = (_engine_cpu_s(client) - cpu_before) * 1e6 / calls
    stats = client.info("commandstats")["cmdstat_set" if answer == "SET" else "cmdstat_evalsha"]
    return float(stats["usec_per_call"]), engine_usec, calls / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--depth", type=int, default=32, help="calls in flight per client (pipelined)")
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
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
        ceiling = 1_000_000 / usec
        cells = f"{usec:.2f} | {ceiling:,.0f} | {rate:,.0f} | {rate / ceiling:.2f} | {cpu:.2f} | {cpu / set_cpu:.1f}"
        print(f"| {answer} | {cells} |")


if __name__ == "__main__":
    main()
