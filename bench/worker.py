"""Benchmark: the worker's and the DLQ handler's batching (``python -m bench.worker``).

Against embedded PostgreSQL and Valkey (or DATABASE_URL and REDIS_URL), in one run on the same
database:

- the worker's persister, for batches of 100 and 1,000 records of one coupon (a flash sale):
  records/s with the grouped path (the coupon lock once, one transaction for the group) and with
  one lock and one transaction per record, and the ratio;
- the DLQ handler's failure recorder, for an on-failure letter of 1,000 records of one coupon
  (read back from a stand-in for Kafka, so that the figure is the database's and Redis'):
  settled as one letter (one transaction and one release call per coupon) and as 1,000
  rejection letters (one each), in seconds, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

from coupon_core.adapters.postgres.admin_catalog import SqlAdminCatalog
from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.adapters.postgres.ledger import SqlLedger
from coupon_core.adapters.postgres.migrate import upgrade
from coupon_core.domain.dead_letters import OffsetRange, Rejection
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.failures import FailureRecorder
from coupon_core.domain.ledger import FailureOutcome
from coupon_core.domain.operations import NewCoupon
from coupon_core.domain.persisting import IssuePersister, LockTimes, RecordOutcome
from coupon_core.domain.records import IssueRecord
from local.stack.services import service_urls
from local.testkit.stores import WholeStore
from lua_redis.client import connect
from lua_redis.lock import RedisCouponLocks


class CountingDlq:
    """Stands in for SQS: the benchmark measures the database path, which rejects nothing here."""

    def __init__(self) -> None:
        self.sent = 0

    def send(self, rejections: Sequence[Rejection]) -> set[Position]:
        self.sent += len(rejections)
        return set()


class StoredRange:
    """Stands in for Kafka: the records of an on-failure letter, read back by offset."""

    def __init__(self, records: list[Delivered]) -> None:
        self._records = records

    def read(self, offsets: OffsetRange) -> list[Delivered]:
        return [r for r in self._records if offsets.first <= r.position.offset <= offsets.last]


def on_failure_letter(count: int) -> str:
    ranges = {"coupon.issue.v1-0": {"firstRecordOffset": "0", "lastRecordOffset": str(count - 1)}}
    return json.dumps(
        {"requestContext": {"condition": "RetryAttemptsExhausted"}, "KafkaBatchInfo": {"recordsInfo": ranges}}
    )


def records_for(coupon_id: int, count: int, first_offset: int) -> list[Delivered]:
    now_ms = time.time_ns() // 1_000_000
    return [
        Delivered(
            Position("coupon.issue.v1", 0, first_offset + i),
            IssueRecord(coupon_id, first_offset + i + 1, uuid.uuid4(), now_ms + i),
        )
        for i in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=3_000, help="records per mode and batch size")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[100, 1_000])
    parser.add_argument("--failures", type=int, default=1_000, help="records of the on-failure letter")
    args = parser.parse_args()

    with ExitStack() as stack:
        urls = service_urls(stack, "bench-worker-", ("DATABASE_URL", "REDIS_URL"))
        engine = engine_for_url(urls["DATABASE_URL"], pool_size=2)
        upgrade(engine)
        client = connect(urls["REDIS_URL"], socket_timeout=10)
        dlq = CountingDlq()
        persister = IssuePersister(SqlLedger(engine), RedisCouponLocks(client), dlq, LockTimes(lease_s=30, wait_s=5))
        catalog = SqlAdminCatalog(engine)
        now = datetime.now(UTC)

        print("| batch size | grouped records/s | per-record records/s | grouped / per-record |")
        print("|---:|---:|---:|---:|")
        for size in args.batch_sizes:
            rates = {}
            for mode in ("grouped", "per-record"):
                coupon = catalog.create(
                    NewCoupon("bench", args.records, now - timedelta(hours=1), now + timedelta(hours=1)),
                    before_commit=lambda coupon: None,  # the worker only: no intake asks the registry
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

        print()
        print("| dead letters | one on-failure letter, s | one letter each, s | speed-up |")
        print("|---:|---:|---:|---:|")
        seconds = {}
        store = WholeStore(client)
        for mode in ("one letter", "each"):
            coupon = catalog.create(
                NewCoupon("bench-dlq", args.failures, now - timedelta(hours=1), now + timedelta(hours=1)),
                before_commit=lambda coupon: None,
            )
            store.reconcile(coupon.state(3_600_000), {}, release_before=None)
            records = [
                Delivered(Position("coupon.issue.v1", 0, i), IssueRecord(coupon.coupon_id, user, uuid.uuid4(), at))
                for i, user in enumerate(range(1, args.failures + 1))
                if (at := store.reserve(coupon.coupon_id, user).reserved_at) is not None
            ]
            recorder = FailureRecorder(SqlLedger(engine), store, RedisCouponLocks(client), StoredRange(records))
            started = time.perf_counter()
            if mode == "one letter":
                outcomes = recorder.handle(on_failure_letter(len(records)))
            else:
                outcomes = [
                    o for r in records for o in recorder.handle(json.dumps(Rejection(r, "NO_STOCK").envelope()))
                ]
            seconds[mode] = time.perf_counter() - started
            assert outcomes == [FailureOutcome.RECORDED] * len(records), outcomes
            assert store.reserved_count(coupon.coupon_id) == 0
        print(
            f"| {args.failures:,} | {seconds['one letter']:.2f} | {seconds['each']:.2f} "
            f"| {seconds['each'] / seconds['one letter']:.1f}x faster |",
            flush=True,
        )


if __name__ == "__main__":
    main()
