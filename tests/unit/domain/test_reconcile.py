"""The reconcile's and a build's decisions through their ports: what each reads, in which order,
under which lock, what it hands the store's repairs (``ReconcileStore.reconcile``, held to Redis in
tests/services/test_store_reconcile.py) and what it reports."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from coupon_core.backend_errors import ReadBackError, StateLostError, UnknownCouponsError
from coupon_core.domain import reconcile as reconcile_module
from coupon_core.domain.coupons import Coupon, CouponState, IssuedUsers, ReconcileChanges
from coupon_core.domain.in_flight import InFlight
from coupon_core.domain.ports import STATE_LOCK_LEASE_S, STATE_LOCK_WAIT_S
from coupon_core.domain.reconcile import CouponReconciled, Holders, Reconciler, ReconcileReport
from coupon_core.domain.records import to_millis
from coupon_core.domain.reservations import MissingState
from tests.unit.domain import fakes

HOUR = timedelta(hours=1)
RETENTION_MS, SKEW_MS, PRODUCE_BOUND_MS = 3_600_000, 5_000, 2_000
NOW_MS = 1_764_590_400_000


@dataclass
class Store(fakes.Reservations):
    """The reservations with coupon 3's state or not (``has``; no other coupon has one), Redis'
    clock, the rebuild gate's answer (each wait asked: the coupon and the wait), and the repairs'."""

    has: bool = False
    now_ms: int = NOW_MS
    changes: ReconcileChanges | None = None
    releases_before: list[int | None] = field(default_factory=list)
    waits_asked: list[tuple[int, int]] = field(default_factory=list)

    def has_state(self, coupon_id: int) -> bool:
        return self.has and coupon_id == 3

    def server_time_ms(self) -> int:
        return self.now_ms

    def rebuild_wait_ms(self, coupon_id: int, wait_ms: int) -> int:
        self.waits_asked.append((coupon_id, wait_ms))
        return self.wait_ms

    def reconcile(self, state, holders, *, release_before, request_ids=None):  # type: ignore[no-untyped-def]
        self.releases_before.append(release_before)
        made = super().reconcile(state, holders, release_before=release_before, request_ids=request_ids)
        return self.changes or made


@dataclass
class Catalog(fakes.Catalog):
    """The catalog of its snapshot's coupon alone, with the coupons of a window and the ids it does not know."""

    known: set[int] = field(default_factory=lambda: {3})
    windows: list[tuple[datetime, datetime]] = field(default_factory=list)

    def find(self, coupon_id: int) -> Coupon | None:
        coupon = super().find(coupon_id)
        return coupon if coupon is not None and coupon.coupon_id == coupon_id else None

    def issued_users(self, coupon_id: int) -> IssuedUsers | None:
        snapshot = super().issued_users(coupon_id)
        return snapshot if snapshot is not None and snapshot.coupon.coupon_id == coupon_id else None

    def coupon_ids_in_window(self, since: datetime, until: datetime) -> list[int]:
        self.windows.append((since, until))
        return [3]

    def missing(self, coupon_ids: list[int]) -> list[int]:
        return [coupon for coupon in coupon_ids if coupon not in self.known]


@dataclass
class Locks(fakes.Locks):
    """The locks, with the lease and the wait each was asked for."""

    asked: list[tuple[int, int]] = field(default_factory=list)

    def state(self, coupon_id: int, *, lease_s: int, wait_s: int) -> object:
        self.asked.append((lease_s, wait_s))
        return super().state(coupon_id, lease_s=lease_s, wait_s=wait_s)


@dataclass
class Registry(fakes.Registry):
    """The registry, with the token each load was finished with."""

    tokens: list[str] = field(default_factory=list)

    def finish_load(self, token: str, expiries: Mapping[int, int]) -> bool:
        self.tokens.append(token)
        return super().finish_load(token, expiries)


def sale(starts: datetime, ends: datetime, issued: dict[int, int] | None = None) -> IssuedUsers:
    coupon = Coupon(3, "test", 10, 10, starts, ends, issued=len(issued or {}))
    return IssuedUsers(coupon, dict(issued or {}), {user: f"db-{user}" for user in issued or {}})


def open_sale(issued: dict[int, int] | None = None) -> IssuedUsers:
    now = datetime.now(UTC)
    return sale(now - HOUR, now + HOUR, issued)


def reconciler(
    store: Store,
    catalog: fakes.Catalog,
    *,
    in_flight: fakes.InFlightReader | None = None,
    registry: fakes.Registry | None = None,
    locks: fakes.Locks | None = None,
    for_a_request: fakes.InFlightReader | None = None,
) -> Reconciler:
    return Reconciler(
        store, locks or fakes.Locks(), catalog, in_flight or fakes.InFlightReader(), registry or fakes.Registry(),
        retention_ms=RETENTION_MS, skew_ms=SKEW_MS, produce_bound_ms=PRODUCE_BOUND_MS,
        in_flight_for_a_request=for_a_request,
    )  # fmt: skip


def test_a_build_of_a_state_already_there_reads_nothing_more_under_the_state_lock():
    store, catalog, locks = Store(has=True), Catalog(open_sale()), Locks()
    assert reconciler(store, catalog, locks=locks).build(3) is MissingState.READY
    assert (locks.taken, catalog.reads, store.installed) == ([("state", 3)], [], [])
    assert locks.asked == [(STATE_LOCK_LEASE_S, STATE_LOCK_WAIT_S)]


def test_a_build_of_a_coupon_that_does_not_exist_is_coupon_not_found():
    store, catalog = Store(), Catalog()
    assert reconciler(store, catalog).build(3) is MissingState.COUPON_NOT_FOUND
    assert store.installed == []


def test_a_build_of_a_coupon_gone_between_its_find_and_its_snapshot_is_coupon_not_found():
    @dataclass
    class Vanishing(Catalog):
        def issued_users(self, coupon_id: int) -> IssuedUsers | None:
            self.reads.append("issued_users")
            return None

    store = Store()
    assert reconciler(store, Vanishing(open_sale())).build(3) is MissingState.COUPON_NOT_FOUND
    assert store.installed == []


def test_a_build_registers_the_coupon_until_its_state_expires_and_an_expired_one_is_ended():
    now = datetime.now(UTC)
    ended = sale(now - 3 * HOUR, now - 2 * HOUR)  # its state expired an hour after its window
    store, registry = Store(), fakes.Registry()
    assert reconciler(store, Catalog(ended), registry=registry).build(3) is MissingState.ENDED
    assert registry.entries == {3: to_millis(ended.coupon.issue_ends_at) + RETENTION_MS}
    assert store.installed == []
    nearly = sale(now - 2 * HOUR, now - HOUR + timedelta(seconds=5))  # five seconds of retention left
    assert reconciler(Store(), Catalog(nearly)).build(3) is MissingState.READY


def test_a_build_asked_as_the_state_would_expire_is_ended(monkeypatch):
    ends = datetime(2030, 1, 1, tzinfo=UTC)
    expires_at = to_millis(ends) + RETENTION_MS
    monkeypatch.setattr(reconcile_module, "time", SimpleNamespace(time=lambda: expires_at / 1000))
    store = Store()
    assert reconciler(store, Catalog(sale(ends - HOUR, ends))).build(3) is MissingState.ENDED
    assert store.installed == []


def test_a_build_logs_the_holders_it_installed(caplog):
    catalog = Catalog(open_sale({7: 100, 8: 200}))
    in_flight = fakes.InFlightReader({3: {9: 300}, 4: {10: 400}})
    with caplog.at_level(logging.INFO, logger="coupon_core.domain.reconcile"):
        reconciler(Store(), catalog, in_flight=in_flight).build(3)
    (record,) = [r for r in caplog.records if r.message == "coupon state built from its holders"]
    assert (record.couponId, record.issued, record.inFlight, record.installed) == (3, 2, 1, True)  # type: ignore[attr-defined]


def test_a_state_lost_mid_sale_is_built_only_after_the_produces_in_flight_end():
    store = Store(wait_ms=1_500)
    assert reconciler(store, Catalog(open_sale())).build(3) is MissingState.BUILDING
    assert (store.waits_asked, store.installed) == ([(3, PRODUCE_BOUND_MS)], [])
    again = Store(wait_ms=0)
    assert reconciler(again, Catalog(open_sale())).build(3) is MissingState.READY


def test_a_coupon_not_yet_open_is_built_at_once():
    now = datetime.now(UTC)
    store = Store(wait_ms=1_500)
    assert reconciler(store, Catalog(sale(now + HOUR, now + 2 * HOUR))).build(3) is MissingState.READY
    assert store.waits_asked == []


def test_a_build_reads_the_records_in_flight_before_the_database_and_installs_every_holder():
    log: list[str] = []
    catalog = Catalog(open_sale({7: 100}))
    catalog.reads = log
    in_flight = fakes.InFlightReader({3: {8: 200}, 4: {9: 300}}, log=log)
    run_reader = fakes.InFlightReader({3: {99: 1}})
    store = Store()

    built = reconciler(store, catalog, in_flight=run_reader, for_a_request=in_flight).build(3)

    assert built is MissingState.READY
    assert log == ["find", "in_flight", "issued_users"]
    ((state, holders),) = store.installed
    assert (state.coupon_id, holders) == (3, {7: 100, 8: 200})
    assert store.releases_before == [None]  # a build releases no one
    assert store.request_ids == [{7: "db-7"}]


def test_a_registry_that_holds_every_coupon_is_not_loaded_again():
    catalog, registry = Catalog(open_sale()), fakes.Registry(complete=True)
    reconciler(Store(has=True), catalog, registry=registry).complete_registry()
    assert (catalog.reads, registry.loads) == ([], 0)


def test_an_incomplete_registry_is_loaded_with_each_coupons_expiry(caplog):
    catalog, registry = Catalog(open_sale()), Registry(complete=False)
    with caplog.at_level(logging.INFO, logger="coupon_core.domain.reconcile"):
        reconciler(Store(), catalog, registry=registry).complete_registry()
    assert (catalog.reads, registry.loads, registry.complete) == (["window_ends"], 1, True)
    assert registry.tokens == ["token"]  # the load finished is the one begun
    assert registry.entries == {3: to_millis(catalog.snapshot.coupon.issue_ends_at) + RETENTION_MS}  # type: ignore[union-attr]
    (record,) = [r for r in caplog.records if r.message == "registry of coupons loaded"]
    assert (record.coupons, record.complete) == (1, True)  # type: ignore[attr-defined]


def test_the_coupons_near_their_window_are_asked_for_the_lookback_and_the_lookahead():
    catalog = Catalog(open_sale())
    before = datetime.now(UTC)
    assert reconciler(Store(), catalog).coupons_near_their_window(60_000, 120_000) == [3]
    after = datetime.now(UTC)
    ((since, until),) = catalog.windows
    assert before - timedelta(seconds=60) <= since <= after - timedelta(seconds=60)
    assert before + timedelta(seconds=120) <= until <= after + timedelta(seconds=120)


def test_unknown_coupons_are_named_and_known_ones_pass():
    catalog = Catalog(open_sale(), known={3})
    reconciler(Store(), catalog).check_known([3])
    with pytest.raises(UnknownCouponsError, match=r"^no coupon with id 4, 5; nothing was reconciled$"):
        reconciler(Store(), catalog).check_known([3, 4, 5])


def test_a_runs_holders_are_read_after_redis_clock_and_release_only_what_is_older_than_the_skew():
    reader = fakes.InFlightReader({3: {8: 200}})
    holders = reconciler(Store(now_ms=NOW_MS), Catalog(), in_flight=reader).read_holders()
    assert holders == Holders(InFlight({3: {8: 200}}), NOW_MS - SKEW_MS, NOW_MS)


def test_a_tail_that_cannot_be_read_releases_no_one_and_says_why(caplog):
    class Unreadable:
        def read(self) -> InFlight:
            raise ReadBackError("the tail: test")

    with caplog.at_level(logging.WARNING, logger="coupon_core.domain.reconcile"):
        holders = reconciler(Store(), Catalog(), in_flight=Unreadable()).read_holders()  # type: ignore[arg-type]
    assert holders == Holders(InFlight({}), None, NOW_MS, "the tail: test")
    (record,) = caplog.records
    assert (record.message, record.detail) == (  # type: ignore[attr-defined]
        "in-flight records unknown: nothing is released this run",
        "the tail: test",
    )


def test_a_run_whose_tail_cannot_be_read_reports_why_and_releases_no_one():
    class Unreadable:
        def read(self) -> InFlight:
            raise ReadBackError("the tail: test")

    store = Store(has=True)
    report = reconciler(store, Catalog(open_sale({7: 100})), in_flight=Unreadable()).reconcile([3])  # type: ignore[arg-type]
    assert (report.inFlightError, [r.couponId for r in report.reconciled]) == ("the tail: test", [3])
    assert (store.releases_before, store.installed[0][1]) == ([None], {7: 100})


def test_a_coupons_run_hands_the_repairs_every_holder_and_the_release_bound_and_reports_them():
    changes = ReconcileChanges(3, installed=False, added=2, released=1, deferred=4, stray=5, reserved=6)
    store, locks = Store(has=True, changes=changes), Locks()
    holders = Holders(InFlight({3: {8: 200, 9: 300}}, {3: {8: "kafka-8", 9: "kafka-9"}}), NOW_MS - SKEW_MS, NOW_MS)

    done = reconciler(store, Catalog(open_sale({7: 100})), locks=locks).reconcile_coupon(3, holders)

    assert done is not None
    assert (done.couponId, done.installed, done.inFlight) == (3, False, 2)
    assert (done.added, done.released, done.deferred, done.stray, done.reserved) == (2, 1, 4, 5, 6)
    assert done.durationMs >= 0
    assert store.installed[0][1] == {7: 100, 8: 200, 9: 300}
    assert store.request_ids == [{7: "db-7", 8: "kafka-8", 9: "kafka-9"}]  # who holds each copy
    assert (store.releases_before, locks.taken) == ([NOW_MS - SKEW_MS], [("state", 3)])
    assert locks.asked == [(STATE_LOCK_LEASE_S, STATE_LOCK_WAIT_S)]


def test_a_coupons_run_reports_its_duration_in_milliseconds(monkeypatch):
    ticks = iter([10.0, 10.00123456])
    monkeypatch.setattr(reconcile_module, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    holders = Holders(InFlight({}), NOW_MS - SKEW_MS, NOW_MS)
    done = reconciler(Store(has=True), Catalog(open_sale())).reconcile_coupon(3, holders)
    assert done is not None
    assert done.durationMs == 1.235


def test_a_state_lost_mid_run_waits_for_the_produces_and_one_not_lost_does_not():
    holders = Holders(InFlight({}), NOW_MS - SKEW_MS, to_millis(datetime.now(UTC)))
    lost = Store(has=False, wait_ms=1_500)
    with pytest.raises(StateLostError, match=r"\(1500 ms\)"):
        reconciler(lost, Catalog(open_sale())).reconcile_coupon(3, holders)
    assert (lost.installed, lost.waits_asked) == ([], [(3, PRODUCE_BOUND_MS)])
    for store in (Store(has=False, wait_ms=0), Store(has=True, wait_ms=1_500)):
        assert reconciler(store, Catalog(open_sale())).reconcile_coupon(3, holders) is not None
    now = datetime.now(UTC)
    closed = Store(has=False, wait_ms=1_500)  # not open: nothing in flight to wait for
    assert reconciler(closed, Catalog(sale(now - 2 * HOUR, now - HOUR))).reconcile_coupon(3, holders) is not None
    assert closed.waits_asked == []


def test_a_run_reports_each_coupon_a_failure_and_a_coupon_gone_and_goes_on(caplog):
    class Failing(Catalog):
        def issued_users(self, coupon_id: int) -> IssuedUsers | None:
            if coupon_id == 4:
                raise RuntimeError("the database: test")
            return None if coupon_id == 5 else super().issued_users(coupon_id)

    store = Store(has=True)
    with caplog.at_level(logging.ERROR, logger="coupon_core.domain.reconcile"):
        report = reconciler(store, Failing(open_sale())).reconcile([4, 5, 3])

    assert [r.couponId for r in report.reconciled] == [3]
    assert report.failed == [{"couponId": 4, "error": "RuntimeError: the database: test"},
                             {"couponId": 5, "error": "the coupon no longer exists"}]  # fmt: skip
    assert report.inFlightError is None
    (record,) = caplog.records
    assert (record.message, record.couponId) == ("coupon not reconciled", 4)  # type: ignore[attr-defined]


def test_a_report_as_json():
    reconciled = CouponReconciled(3, True, 1, 2, 3, 4, 5, 6, 7.5)
    report = ReconcileReport([reconciled], [{"couponId": 4, "error": "x"}], "the tail")
    assert report.as_dict() == {
        "reconciled": [{"couponId": 3, "installed": True, "inFlight": 1, "added": 2, "released": 3, "deferred": 4,
                        "stray": 5, "reserved": 6, "durationMs": 7.5}],
        "failed": [{"couponId": 4, "error": "x"}],
        "inFlightError": "the tail",
    }  # fmt: skip


def test_a_state_installed_for_a_run_is_the_coupons_state_with_its_retention():
    store = Store(has=True)
    snapshot = open_sale()
    reconciler(store, Catalog(snapshot)).reconcile_coupon(3, Holders(InFlight({}), None, NOW_MS))
    ((state, _),) = store.installed
    assert state == snapshot.coupon.state(RETENTION_MS)
    assert isinstance(state, CouponState)
