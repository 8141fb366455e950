"""Benchmark: grouped persistence against one transaction per record (``python -m bench.worker``).

The worker's persister against embedded PostgreSQL and Valkey (or DATABASE_URL and REDIS_URL):
for batches of 100 and 1,000 records of one coupon (a flash sale), records/s persisted with
the grouped path (the coupon lock once, one transaction for the group) and with one lock and
one transaction per record, in the same run on the same database, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine

from coupon_core.adapters.postgres.catalog import SqlCouponCatalog
from coupon_core.adapters.postgres.ledger import SqlLedger
from coupon_core.adapters.postgres.migrate import upgrade
from coupon_core.domain.coupons import NewCoupon
from coupon_core.domain.dead_letters import Rejection
from coupon_core.domain.persisting import IssuePersister, LockTimes, RecordOutcome
from coupon_core.domain.records import Delivered, IssueMessage, Position
from local.services import STARTERS
from lua_redis import CouponLocks, ReservationStore, connect


class CountingDlq:
    """Stands in for SQS: the benchmark measures the database path, which rejects nothing here."""

    def __init__(self) -> None:
        self.sent = 0

    def send(self, rejections: Sequence[Rejection]) -> set[Position]:
        self.sent += len(rejections)
        return set()


def records_for(coupon_id: int, count: int, first_offset: int) -> list[Delivered]:
    now_ms = time.time_ns() // 1_000_000
    return [
        Delivered(
            Position("coupon.issue.v1", 0, first_offset + i),
            IssueMessage(coupon_id, first_offset + i + 1, uuid.uuid4(), now_ms + i),
        )
        for i in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=3_000, help="records per mode and batch size")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[100, 1_000])
    args = parser.parse_args()

    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-worker-")))
        urls = {}
        for env_var in ("DATABASE_URL", "REDIS_URL"):
            urls[env_var] = os.environ.get(env_var) or ""
            if not urls[env_var]:
                service = STARTERS[env_var](scratch)
                stack.callback(service.stop)
                urls[env_var] = service.url
        engine = create_engine(urls["DATABASE_URL"], pool_size=2)
        upgrade(engine)
        client = connect(urls["REDIS_URL"], socket_timeout=10)
        dlq = CountingDlq()
        persister = IssuePersister(
            SqlLedger(engine), ReservationStore(client), CouponLocks(client), dlq, LockTimes(lease_s=30, wait_s=5)
        )
        catalog = SqlCouponCatalog(engine)
        now = datetime.now(UTC)

        print("| batch size | grouped records/s | per-record records/s | grouped / per-record |")
        print("|---:|---:|---:|---:|")
        for size in args.batch_sizes:
            rates = {}
            for mode in ("grouped", "per-record"):
                coupon = catalog.create(
                    NewCoupon("bench", args.records, now - timedelta(hours=1), now + timedelta(hours=1))
                )
                batches = [records_for(coupon.coupon_id, size, start) for start in range(0, args.records, size)]
                started = time.perf_counter()
                for batch in batches:
                    if mode == "grouped":
                        verdicts = persister.persist(batch)
                    else:
                        verdicts = {}
                        for record in batch:
                            verdicts |= persister.persist([record])
                    assert all(v.outcome is RecordOutcome.ISSUED for v in verdicts.values()), verdicts
                rates[mode] = sum(len(batch) for batch in batches) / (time.perf_counter() - started)
            print(
                f"| {size:,} | {rates['grouped']:,.0f} | {rates['per-record']:,.0f} "
                f"| {rates['grouped'] / rates['per-record']:.1f}x |",
                flush=True,
            )
        assert dlq.sent == 0


if __name__ == "__main__":
    main()
