"""A flash sale driven against Redis from several processes and threads.

Shared by the concurrency tests and the reserve benchmark, so both measure the same load. Each
user clicks ``clicks`` times; the clicks of one user come from different processes at (almost)
the same moment, which is what a double click under load looks like.
"""

from __future__ import annotations

import multiprocessing
import queue as queue_module
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.synchronize import Barrier

from local.testkit.stores import WholeStore
from lua_redis.client import connect

Reserver = Callable[[int, int], str]
"""Reserve one copy of a coupon for a user; return the outcome's name."""

ReserverFactory = Callable[[str], Reserver]
"""Build a reserver for a Redis URL, once per process. Must be a module-level function."""


@dataclass(frozen=True)
class LoadPlan:
    """Who clicks, how often, and from how many processes and threads."""

    coupon_id: int
    users: int
    clicks: int = 1
    processes: int = 4
    threads: int = 8
    first_user_id: int = 1

    def __post_init__(self) -> None:
        if self.processes % self.clicks:
            raise ValueError(f"processes ({self.processes}) must be a multiple of clicks ({self.clicks})")

    @property
    def lanes(self) -> int:
        """Independent sequences of users; each is walked by ``clicks`` workers at once."""
        return self.threads * self.processes // self.clicks

    def lane_of(self, process: int, thread: int) -> int:
        return (process // self.clicks) * self.threads + thread

    def users_of_lane(self, lane: int) -> range:
        return range(self.first_user_id + lane, self.first_user_id + self.users, self.lanes)


@dataclass
class LoadResult:
    """What the load saw: outcome counts, the users that got SUCCESS, and timings."""

    outcomes: Counter[str] = field(default_factory=Counter)
    successes: Counter[int] = field(default_factory=Counter)
    latencies_s: list[float] = field(default_factory=list)
    started: float = float("inf")
    finished: float = 0.0

    @property
    def requests(self) -> int:
        return sum(self.outcomes.values())

    @property
    def elapsed_s(self) -> float:
        return max(self.finished - self.started, 1e-9)

    @property
    def per_second(self) -> float:
        return self.requests / self.elapsed_s

    def percentile_ms(self, percent: int) -> float:
        cuts = statistics.quantiles(self.latencies_s, n=100, method="inclusive")
        return cuts[percent - 1] * 1000

    def merge(self, other: LoadResult) -> None:
        self.outcomes.update(other.outcomes)
        self.successes.update(other.successes)
        self.latencies_s.extend(other.latencies_s)
        self.started = min(self.started, other.started)
        self.finished = max(self.finished, other.finished)


def _run_thread(reserve: Reserver, plan: LoadPlan, lane: int, result: LoadResult, lock: threading.Lock) -> None:
    local = LoadResult()
    for user in plan.users_of_lane(lane):
        began = time.perf_counter()
        outcome = reserve(plan.coupon_id, user)
        local.latencies_s.append(time.perf_counter() - began)
        local.outcomes[outcome] += 1
        if outcome == "SUCCESS":
            local.successes[user] += 1
    with lock:
        result.merge(local)


def _run_process(  # noqa: PLR0917 - the positional arguments of a multiprocessing target
    factory: ReserverFactory,
    redis_url: str,
    plan: LoadPlan,
    process: int,
    barrier: Barrier,
    queue: multiprocessing.Queue,
) -> None:
    reserve = factory(redis_url)
    result, lock = LoadResult(), threading.Lock()
    workers = [
        threading.Thread(target=_run_thread, args=(reserve, plan, plan.lane_of(process, thread), result, lock))
        for thread in range(plan.threads)
    ]
    barrier.wait()
    result.started = time.monotonic()  # CLOCK_MONOTONIC is one clock for every process on Linux
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    result.finished = time.monotonic()
    queue.put(result)


def run_load(factory: ReserverFactory, redis_url: str, plan: LoadPlan) -> LoadResult:
    """Run ``plan`` with a reserver from ``factory`` in fresh (spawned) processes."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(plan.processes)
    queue = context.Queue()
    processes = [
        context.Process(target=_run_process, args=(factory, redis_url, plan, index, barrier, queue))
        for index in range(plan.processes)
    ]
    for process in processes:
        process.start()
    total, reported = LoadResult(), 0
    while reported < len(processes):
        try:
            total.merge(queue.get(timeout=1))
            reported += 1
        except queue_module.Empty:
            if any(process.exitcode for process in processes):
                for process in processes:
                    process.kill()
                raise RuntimeError("a load process failed; see its traceback above") from None
    for process in processes:
        process.join()
    return total


def lua_reserver(redis_url: str) -> Reserver:
    """The real reserve: one EVALSHA of ``reserve.lua`` per request."""
    store = WholeStore(connect(redis_url))
    return lambda coupon_id, user_id: store.reserve(coupon_id, user_id).outcome.value
