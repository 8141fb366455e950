"""The domain's ports, one contract each, held by both of their implementations: the unit tier's
fake (``tests/unit/domain/fakes.py``) and the real adapter on real Valkey. What the domain's unit
tests prove on a fake holds on the servers because the fake keeps the same contract here; the
servers' tests prove only what needs them (concurrency, faults, interleavings).

- ``CouponLocks``: a coupon's state and issue locks, one owner at a time; a store that cannot be
  reached says so.
- ``CouponRegistry``: what a lookup answers for a coupon without a state (not found, ended, one
  build a claim), and what a load keeps.
- ``FailureLedger``: a failure is recorded once per request, never for a user who holds an
  issue, and keeps the first release noted for it.
- ``RangeReader``: a range of one partition's offsets reads back whole, in order, and nothing
  outside it.
- ``CouponCatalog``, the part the fake keeps: a coupon is found with its holders and its
  window's end, and no other coupon is.

The other fakes answer what each test scripts (an outcome, a failure): no behaviour of theirs
to hold to an adapter.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from kafka import KafkaProducer
from sqlalchemy import Engine, text

from coupon_core.adapters.kafka.range_reader import KafkaRangeReader
from coupon_core.adapters.postgres.admin_catalog import SqlAdminCatalog
from coupon_core.adapters.postgres.catalog import SqlCouponCatalog
from coupon_core.adapters.postgres.ledger import SqlLedger
from coupon_core.backend_errors import LockUnavailableError
from coupon_core.domain.coupons import Coupon, IssuedUsers
from coupon_core.domain.dead_letters import OffsetRange
from coupon_core.domain.delivery import Delivered, Position
from coupon_core.domain.failures import RangeReader
from coupon_core.domain.ledger import Failure, FailureOutcome
from coupon_core.domain.operations import NewCoupon
from coupon_core.domain.records import IssueRecord, to_millis
from coupon_core.domain.reservations import MissingState, ReleaseOutcome
from coupon_core.errors import StateUnavailableError
from local.testkit.kafka_topics import client_options, create_topic, kafka_settings
from lua_redis.client import connect
from lua_redis.issue_store import IssueStore
from lua_redis.lock import RedisCouponLocks
from lua_redis.registry import RedisCouponRegistry
from tests.database_support import empty_tables
from tests.services.support import HOUR_MS, now_ms
from tests.unit.domain import fakes

IMPLEMENTATIONS = ["fake", "valkey"]
CLOSED_PORT = "rediss://127.0.0.1:1/0"


# CouponLocks


@pytest.fixture(params=IMPLEMENTATIONS)
def locks(request):
    if request.param == "fake":
        return fakes.Locks()
    return RedisCouponLocks(request.getfixturevalue("redis_client"))


@pytest.fixture(params=IMPLEMENTATIONS)
def unreachable_locks(request):
    return fakes.Locks(down=True) if request.param == "fake" else RedisCouponLocks(connect(CLOSED_PORT))


def test_a_free_lock_is_granted_and_free_again_after_its_block(locks):
    for _ in range(2):
        with locks.state(3, lease_s=5, wait_s=1):
            pass
    with locks.issue(3, lease_s=5, wait_s=1):
        pass


def test_a_lock_in_use_is_refused_once_the_wait_is_over(locks):
    for lock in (locks.state, locks.issue):
        with lock(3, lease_s=5, wait_s=1), pytest.raises(LockUnavailableError), lock(3, lease_s=5, wait_s=1):
            pass


def test_a_coupons_two_locks_and_two_coupons_locks_are_apart(locks):
    with locks.state(3, lease_s=5, wait_s=1), locks.issue(3, lease_s=5, wait_s=1), locks.state(4, lease_s=5, wait_s=1):
        pass


def test_locks_in_a_store_that_cannot_be_reached_say_so(unreachable_locks):
    with pytest.raises(StateUnavailableError), unreachable_locks.state(3, lease_s=5, wait_s=1):
        pass


# CouponRegistry


class ValkeyRegistry:
    """The registry as the domain holds it: the intake's lookup (``IssueStore``) and the
    builder's register and load (``RedisCouponRegistry``), on one Valkey."""

    def __init__(self, client) -> None:
        self._store, self._registry = IssueStore(client), RedisCouponRegistry(client)

    def lookup(self, coupon_id: int, claim_ms: int) -> MissingState:
        return self._store.lookup(coupon_id, claim_ms)

    def register(self, expiries: Mapping[int, int]) -> None:
        self._registry.register(expiries)

    def begin_load(self) -> str | None:
        return self._registry.begin_load()

    def finish_load(self, token: str, expiries: Mapping[int, int]) -> bool:
        return self._registry.finish_load(token, expiries)


@pytest.fixture(params=IMPLEMENTATIONS)
def registry(request):
    """A registry no load has completed yet (a Redis just started, or one that lost its keys)."""
    if request.param == "fake":
        return fakes.Registry(complete=False)
    return ValkeyRegistry(request.getfixturevalue("redis_client"))


def complete(registry, expiries: dict[int, int]) -> None:
    token = registry.begin_load()
    assert token is not None
    assert registry.finish_load(token, expiries)


def test_a_complete_registry_tells_an_unknown_id_and_an_expired_coupon(registry):
    complete(registry, {1: now_ms() + HOUR_MS, 2: now_ms() - 1})

    assert registry.lookup(3, 1000) is MissingState.COUPON_NOT_FOUND
    assert registry.lookup(2, 1000) is MissingState.ENDED


def test_one_caller_a_claim_has_a_live_coupon_built_and_the_others_wait(registry):
    complete(registry, {1: now_ms() + HOUR_MS, 2: now_ms() + HOUR_MS})

    assert [registry.lookup(1, 60_000) for _ in range(5)] == [MissingState.BUILD] + [MissingState.BUILDING] * 4
    assert registry.lookup(2, 200) is MissingState.BUILD
    time.sleep(0.25)
    assert registry.lookup(2, 200) is MissingState.BUILD  # the claim ran out: the next caller builds


def test_an_incomplete_registry_rules_out_no_id_but_still_lets_one_caller_a_claim_ask(registry):
    """After a loss of Redis an unknown id may be a coupon created before it: it is built."""
    registry.register({1: now_ms() + HOUR_MS})  # a create wrote its entry; no load has run

    assert [registry.lookup(7, 60_000) for _ in range(2)] == [MissingState.BUILD, MissingState.BUILDING]


def test_a_load_adds_what_is_missing_keeps_what_a_writer_put_and_completes(registry):
    token = registry.begin_load()
    assert token is not None
    registry.register({2: now_ms() - 1})  # a change written while the load read the database: ended

    assert registry.finish_load(token, {1: now_ms() + HOUR_MS, 2: now_ms() + HOUR_MS})
    assert registry.begin_load() is None  # complete: nothing to load
    assert registry.lookup(2, 1000) is MissingState.ENDED  # the writer's entry, not the load's
    assert registry.lookup(1, 1000) is MissingState.BUILD
    assert registry.lookup(9, 1000) is MissingState.COUPON_NOT_FOUND


def test_an_empty_database_completes_an_empty_registry(registry):
    complete(registry, {})
    assert registry.lookup(1, 1000) is MissingState.COUPON_NOT_FOUND


# FailureLedger


class PostgresFailures:
    """The DLQ handler's ledger on PostgreSQL (``SqlLedger``) for one coupon, and what the
    contract reads of it: the recorded requests with the release each one's row keeps."""

    def __init__(self, engine: Engine) -> None:
        empty_tables(engine)
        self.coupon_id = created(engine, open_sale())
        self._engine, self._ledger = engine, SqlLedger(engine)

    def hold(self, user_id: int) -> None:
        self._ledger.record_group(self.coupon_id, [record(self.coupon_id, user_id)])

    def record_failures(self, failures: Sequence[Failure]) -> list[FailureOutcome]:
        return self._ledger.record_failures(self.coupon_id, failures)

    def note_releases(self, releases: Mapping[uuid.UUID, ReleaseOutcome]) -> None:
        self._ledger.note_releases(releases)

    def recorded(self) -> dict[uuid.UUID, str | None]:
        with self._engine.connect() as connection:
            rows = connection.execute(
                text("SELECT request_id, source->>'release' FROM coupon_issue_failures WHERE coupon_id = :c"),
                {"c": self.coupon_id},
            )
            return {uuid.UUID(str(request_id)): release for request_id, release in rows}


class FakeFailures:
    """``fakes.FailureLedger`` behind the same reading."""

    coupon_id = 1

    def __init__(self) -> None:
        self._ledger = fakes.FailureLedger()

    def hold(self, user_id: int) -> None:
        self._ledger.issued.add((self.coupon_id, user_id))

    def record_failures(self, failures: Sequence[Failure]) -> list[FailureOutcome]:
        return self._ledger.record_failures(self.coupon_id, failures)

    def note_releases(self, releases: Mapping[uuid.UUID, ReleaseOutcome]) -> None:
        self._ledger.note_releases(releases)

    def recorded(self) -> dict[uuid.UUID, str | None]:
        releases = self._ledger.releases
        return {request_id: releases.get(request_id) for request_id in self._ledger.failures}


def open_sale() -> NewCoupon:
    """A coupon of 10 copies, its window the hour either side of now (whole seconds)."""
    now = datetime.now(UTC).replace(microsecond=0)
    return NewCoupon("contract", 10, now - timedelta(hours=1), now + timedelta(hours=1))


def created(engine: Engine, new: NewCoupon) -> int:
    """The coupon's id, made as the operators' create makes it (no intake's registry to tell here)."""
    return SqlAdminCatalog(engine).create(new, before_commit=lambda coupon: None).coupon_id


def record(coupon_id: int, user_id: int) -> IssueRecord:
    return IssueRecord(coupon_id, user_id, uuid.uuid4(), now_ms())


def failure(ledger: FakeFailures | PostgresFailures, user_id: int) -> Failure:
    return Failure(record(ledger.coupon_id, user_id), "NO_STOCK", Position("coupon-issues", 0, user_id))


@pytest.fixture(params=IMPLEMENTATIONS)
def failures(request):
    if request.param == "fake":
        return FakeFailures()
    return PostgresFailures(request.getfixturevalue("migrated_engine"))


def test_a_failure_is_recorded_once_however_often_its_letter_comes(failures):
    first, second = failure(failures, 1), failure(failures, 2)

    assert failures.record_failures([first, first, second]) == [
        FailureOutcome.RECORDED, FailureOutcome.ALREADY_RECORDED, FailureOutcome.RECORDED
    ]  # fmt: skip
    assert failures.record_failures([first]) == [FailureOutcome.ALREADY_RECORDED]
    assert failures.recorded() == {first.record.request_id: None, second.record.request_id: None}


def test_a_failure_of_a_user_holding_an_issue_is_not_recorded(failures):
    failures.hold(5)
    held, free = failure(failures, 5), failure(failures, 6)

    assert failures.record_failures([held, free]) == [FailureOutcome.ALREADY_ISSUED, FailureOutcome.RECORDED]
    assert failures.recorded() == {free.record.request_id: None}


def test_what_a_release_found_is_kept_once_and_only_for_a_recorded_request(failures):
    recorded, never = failure(failures, 1), failure(failures, 2)
    failures.record_failures([recorded])

    failures.note_releases({recorded.record.request_id: ReleaseOutcome.RELEASED})
    failures.note_releases(
        {recorded.record.request_id: ReleaseOutcome.NOT_HELD, never.record.request_id: ReleaseOutcome.STALE}
    )

    assert failures.recorded() == {recorded.record.request_id: "RELEASED"}


# RangeReader


@pytest.fixture(params=IMPLEMENTATIONS)
def written(request) -> tuple[RangeReader, list[Delivered]]:
    """A reader, and the records on a topic of two partitions that it reads back: three on each."""
    if request.param == "fake":
        topic = "coupon-issues"
    else:
        servers = request.getfixturevalue("kafka_bootstrap_servers")
        topic = create_topic(servers, partitions=2)
    records = [
        Delivered(Position(topic, partition, offset), record(1, 10 * partition + offset))
        for partition in (0, 1)
        for offset in range(3)
    ]
    if request.param == "fake":
        return fakes.RangeReader(records), records
    producer = KafkaProducer(**client_options(servers))
    for delivered in records:
        assert delivered.record is not None
        position = delivered.position
        sent = producer.send(topic, value=delivered.record.encode(), partition=position.partition).get(timeout=10)
        assert sent.offset == position.offset
    producer.close()
    return KafkaRangeReader(kafka_settings(servers, topic), max_records=100, timeout_s=10), records


def test_a_range_is_read_back_whole_in_order_and_nothing_outside_it(written):
    reader, records = written
    topic = records[0].position.topic

    assert [d.record for d in reader.read(OffsetRange(topic, 1, 1, 2))] == [d.record for d in records[4:6]]
    assert [d.position for d in reader.read(OffsetRange(topic, 0, 0, 0))] == [records[0].position]


# CouponCatalog (what the domain's fake keeps of it: a coupon, its holders, its window's end)


class PostgresCatalog:
    """``SqlCouponCatalog``, its coupon made by the operators' create and its holders by the worker's ledger."""

    def __init__(self, engine: Engine) -> None:
        empty_tables(engine)
        self._engine, self.catalog = engine, SqlCouponCatalog(engine)

    def sale(self, new: NewCoupon, users: Sequence[int]) -> tuple[int, list[IssueRecord]]:
        coupon_id = created(self._engine, new)
        records = [record(coupon_id, user) for user in users]
        SqlLedger(self._engine).record_group(coupon_id, records)
        return coupon_id, records


class FakeCatalog:
    """``fakes.Catalog`` given the same sale as its snapshot."""

    catalog: fakes.Catalog

    def sale(self, new: NewCoupon, users: Sequence[int]) -> tuple[int, list[IssueRecord]]:
        coupon = Coupon(41, new.name, new.total_quantity, new.total_quantity - len(users),
                        new.issue_starts_at, new.issue_ends_at, issued=len(users))  # fmt: skip
        records = [record(coupon.coupon_id, user) for user in users]
        self.catalog = fakes.Catalog(IssuedUsers(coupon, {r.user_id: r.reserved_at for r in records}))
        return coupon.coupon_id, records


@pytest.fixture(params=IMPLEMENTATIONS)
def catalogs(request):
    if request.param == "fake":
        return FakeCatalog()
    return PostgresCatalog(request.getfixturevalue("migrated_engine"))


def test_a_coupon_is_found_with_its_holders_and_its_windows_end_and_no_other(catalogs):
    new = open_sale()
    coupon_id, records = catalogs.sale(new, (1, 2))
    catalog = catalogs.catalog

    found, holders = catalog.find(coupon_id), catalog.issued_users(coupon_id)
    assert found is not None
    assert (found.coupon_id, found.total_quantity, found.issued) == (coupon_id, 10, 2)
    assert holders is not None
    assert holders.reserved_at == {r.user_id: r.reserved_at for r in records}
    assert catalog.window_ends() == {coupon_id: to_millis(new.issue_ends_at)}
    assert (catalog.find(coupon_id + 1), catalog.issued_users(coupon_id + 1)) == (None, None)
