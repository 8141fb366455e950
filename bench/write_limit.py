"""Benchmark: the processing limit holds the database write rate under a burst
(``python -m bench.write_limit``).

Against embedded PostgreSQL and Valkey (or DATABASE_URL and REDIS_URL). ``--writers`` worker
processes, each with the worker's own persister, write batches of ``--batch`` fresh issues as
fast as they can for ``--seconds``: first without a limit, then with the shared token bucket at
``--limit`` writes per second (burst = one batch per writer). Prints rows written per second in
each run, and the limited run's rate over the limit (the limit holds when it is at most about
1.0; the burst adds ``burst / seconds`` at the start).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

from sqlalchemy import text

from coupon_core.adapters.postgres.admin_catalog import SqlAdminCatalog
from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.adapters.postgres.ledger import SqlLedger
from coupon_core.adapters.postgres.migrate import upgrade
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.operations import NewCoupon
from coupon_core.domain.persisting import IssuePersister, LockTimes, RecordOutcome, Throttle
from coupon_core.domain.records import IssueRecord
from local.stack.services import service_urls
from lua_redis.client import connect
from lua_redis.limit import RedisWriteLimit, WriteRate
from lua_redis.lock import RedisCouponLocks

TOPIC = "coupon.issue.v1"


class NoDeadLetters:
    def send(self, rejections: object) -> set[Position]:
        return set()


def writer(urls: dict[str, str], coupon_id: int, limit: tuple[int, int], batch: int, until: float) -> int:
    """One worker process: persist batches until ``until`` (monotonic) under ``limit`` (writes per
    second and burst; 0 per second: none); how many rows it wrote."""
    per_second, burst = limit
    engine = engine_for_url(urls["DATABASE_URL"], pool_size=1)
    client = connect(urls["REDIS_URL"], socket_timeout=10)
    throttle = Throttle(RedisWriteLimit(client, WriteRate(per_second, burst)), budget_s=60) if per_second else None
    persister = IssuePersister(SqlLedger(engine), RedisCouponLocks(client), NoDeadLetters(), LockTimes(30, 5), throttle)
    written, offset = 0, 0
    while time.monotonic() < until:
        records = [
            Delivered(Position(TOPIC, 0, offset + i), IssueRecord(coupon_id, offset + i + 1, uuid.uuid4(), 1))
            for i in range(batch)
        ]
        offset += batch
        verdicts = persister.persist(records)
        written += sum(v.outcome is RecordOutcome.ISSUED for v in verdicts.values())
    engine.dispose()
    return written


def run(urls: dict[str, str], args: argparse.Namespace, limit: int) -> float:
    engine = engine_for_url(urls["DATABASE_URL"])
    catalog = SqlAdminCatalog(engine)
    now = datetime.now(UTC)
    coupons = [
        catalog.create(
            NewCoupon("bench", 10_000_000, now - timedelta(hours=1), now + timedelta(hours=1)),
            before_commit=lambda coupon: None,  # the workers only: no intake asks the registry
        ).coupon_id
        for _ in range(args.writers)
    ]
    connect(urls["REDIS_URL"]).delete("limit:db-writes")
    started = time.monotonic() + 1  # every process starts at once
    until = started + args.seconds
    burst = args.batch * args.writers
    with multiprocessing.get_context("spawn").Pool(args.writers) as pool:
        jobs = [pool.apply_async(writer, (urls, coupon_id, (limit, burst), args.batch, until)) for coupon_id in coupons]
        time.sleep(max(0.0, started - time.monotonic()))
        written = sum(int(job.get()) for job in jobs)
    with engine.connect() as connection:
        rows = int(
            connection.execute(
                text("SELECT count(*) FROM coupon_issues WHERE coupon_id = ANY(:ids)"), {"ids": coupons}
            ).scalar_one()
        )
    engine.dispose()
    assert rows == written, (rows, written)
    return written / float(args.seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--limit", type=int, default=300, help="writes per second across the writers")
    args = parser.parse_args()
    with ExitStack() as stack:
        urls = service_urls(stack, "bench-limit-", ("DATABASE_URL", "REDIS_URL"))
        engine = engine_for_url(urls["DATABASE_URL"])
        upgrade(engine)
        engine.dispose()
        unlimited = run(urls, args, 0)
        limited = run(urls, args, args.limit)
    print(f"{args.writers} writers, batches of {args.batch}, {args.seconds:.0f} s each run")
    print("| run | rows/s | over the limit |")
    print("|---|---:|---:|")
    print(f"| no limit | {unlimited:,.0f} | {unlimited / args.limit:.2f} |")
    print(f"| limit {args.limit}/s | {limited:,.0f} | {limited / args.limit:.2f} |")


if __name__ == "__main__":
    main()
