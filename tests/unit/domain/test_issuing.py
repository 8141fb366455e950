"""Issuing through its ports: what is published, what is released, and what the caller is told."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from coupon_core.domain.coupons import Coupon, IssuedUsers
from coupon_core.domain.issuing import IDEMPOTENCY_NAMESPACE, IssueService
from coupon_core.domain.reconcile import Reconciler
from coupon_core.domain.records import to_millis
from coupon_core.domain.reservations import IssueOutcome, MissingState, Reservation
from coupon_core.errors import NotPublishedError, PublishUnconfirmedError, StateUnavailableError, UnavailableError
from tests.unit.domain import fakes

RESERVED_AT = 1_764_590_400_123
HOUR = timedelta(hours=1)
LIVE = 4_102_444_800_000  # a registry entry's expiry far ahead (2100)


def coupon(starts: datetime, ends: datetime) -> Coupon:
    return Coupon(3, "test", 10, 10, starts, ends, issued=0)


def service(
    store: fakes.Reservations,
    publisher: fakes.Publisher | None = None,
    catalog: fakes.Catalog | None = None,
    locks: fakes.Locks | None = None,
    in_flight: fakes.InFlightReader | None = None,
) -> IssueService:
    catalog = catalog or fakes.Catalog()
    reader = in_flight or fakes.InFlightReader()
    registry = fakes.Registry(entries={3: LIVE})  # coupon 3 was created: its state may be built
    builder = Reconciler(
        store,
        locks or fakes.Locks(),
        catalog,
        reader,
        registry,
        retention_ms=3_600_000,
        skew_ms=5_000,
        produce_bound_ms=2_000,
    )
    return IssueService(store, (publisher or fakes.Publisher()).publish, builder.build, lookup=registry.lookup)


def test_a_success_publishes_the_reservation_with_its_time():
    store, publisher = fakes.Reservations([Reservation(IssueOutcome.SUCCESS, RESERVED_AT)]), fakes.Publisher()

    result = service(store, publisher).issue(3, 7)

    assert result.outcome is IssueOutcome.SUCCESS
    assert publisher.published == [result.record]
    assert result.record is not None
    assert (result.record.coupon_id, result.record.user_id, result.record.reserved_at) == (3, 7, RESERVED_AT)
    assert store.releases == []


@pytest.mark.parametrize(
    "refusal", [IssueOutcome.DUPLICATE, IssueOutcome.SOLD_OUT, IssueOutcome.NOT_OPEN, IssueOutcome.ENDED]
)
def test_a_refusal_publishes_nothing(refusal):
    store, publisher = fakes.Reservations([Reservation(refusal)]), fakes.Publisher()
    assert service(store, publisher).issue(3, 7).outcome.value == refusal.value
    assert publisher.published == []


def test_a_record_that_never_left_the_producer_releases_the_reservation_fenced_by_its_time():
    store = fakes.Reservations([Reservation(IssueOutcome.SUCCESS, RESERVED_AT)])

    result = service(store, fakes.Publisher(fails=NotPublishedError)).issue(3, 7)

    assert (result.outcome, result.release_failed) == (IssueOutcome.UNAVAILABLE, False)
    assert "did not acknowledge" in result.detail
    assert store.releases == [(3, 7, RESERVED_AT)]


def test_a_failed_publish_whose_release_fails_too_is_unavailable_and_flagged_for_reconcile():
    store = fakes.Reservations(
        [Reservation(IssueOutcome.SUCCESS, RESERVED_AT)], release_answer=StateUnavailableError("Redis gone")
    )

    result = service(store, fakes.Publisher(fails=NotPublishedError)).issue(3, 7)

    assert (result.outcome, result.release_failed) == (IssueOutcome.UNAVAILABLE, True)
    assert store.releases == [(3, 7, RESERVED_AT)]


def test_a_record_that_may_be_in_kafka_is_unconfirmed_and_keeps_its_reservation():
    store = fakes.Reservations([Reservation(IssueOutcome.SUCCESS, RESERVED_AT)])

    result = service(store, fakes.Publisher(fails=PublishUnconfirmedError)).issue(3, 7)

    assert (result.outcome, result.detail) == (IssueOutcome.UNCONFIRMED, "Kafka did not acknowledge the record: test")
    assert result.record is not None
    assert store.releases == []  # the worker issues it if it is in Kafka; reconcile releases it if not


def test_a_cold_coupon_is_built_under_its_state_lock_then_reserved_again():
    now = datetime.now(UTC)
    store = fakes.Reservations(
        [Reservation(IssueOutcome.STATE_MISSING), Reservation(IssueOutcome.SUCCESS, RESERVED_AT)]
    )
    catalog, locks = fakes.Catalog(IssuedUsers(coupon(now - HOUR, now + HOUR), {})), fakes.Locks()

    result = service(store, catalog=catalog, locks=locks).issue(3, 7)

    assert result.outcome is IssueOutcome.SUCCESS
    assert locks.taken == [("state", 3)]
    assert [state.coupon_id for state, _ in store.installed] == [3]
    assert store.reserves == [(3, 7), (3, 7)]


def test_a_lost_state_is_built_from_the_records_in_flight_read_before_the_database():
    """After a flush: user 1 is issued, user 2's record still waits in Kafka; both hold a copy."""
    now = datetime.now(UTC)
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING), Reservation(IssueOutcome.DUPLICATE, 222)])
    catalog = fakes.Catalog(IssuedUsers(coupon(now - HOUR, now + HOUR), {1: 111}))
    reader = fakes.InFlightReader({3: {2: 222}, 4: {9: 999}}, log=catalog.reads)

    result = service(store, catalog=catalog, in_flight=reader).issue(3, 2)

    assert result.outcome is IssueOutcome.DUPLICATE
    assert [holders for _, holders in store.installed] == [{1: 111, 2: 222}]
    assert catalog.reads == ["find", "in_flight", "issued_users"]


def test_a_state_lost_mid_sale_waits_out_the_produces_under_way_before_its_rebuild():
    now = datetime.now(UTC)
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)], wait_ms=1_500)
    reader = fakes.InFlightReader()
    catalog = fakes.Catalog(IssuedUsers(coupon(now - HOUR, now + HOUR), {1: 111}))

    result = service(store, catalog=catalog, in_flight=reader).issue(3, 7)

    assert result.outcome is IssueOutcome.UNAVAILABLE  # nothing reserved: the client retries
    assert store.installed == []
    assert catalog.reads == ["find"]  # the records in flight are read only once the wait is over


def test_a_cold_coupon_before_its_window_is_built_at_once():
    now = datetime.now(UTC)
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING), Reservation(IssueOutcome.NOT_OPEN)])
    store.wait_ms = 1_500
    catalog = fakes.Catalog(IssuedUsers(coupon(now + HOUR, now + 2 * HOUR), {}))
    assert service(store, catalog=catalog).issue(3, 7).outcome is IssueOutcome.NOT_OPEN
    assert len(store.installed) == 1


def test_an_unknown_cold_coupon_is_not_found_and_nothing_is_installed():
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)])
    assert service(store, catalog=fakes.Catalog(None)).issue(3, 7).outcome is IssueOutcome.COUPON_NOT_FOUND
    assert store.installed == []


def test_a_coupon_whose_keys_would_already_have_expired_is_ended_from_the_database():
    long_ago = datetime.now(UTC) - 100 * HOUR
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)])
    catalog = fakes.Catalog(IssuedUsers(coupon(long_ago - HOUR, long_ago), {}))
    assert service(store, catalog=catalog).issue(3, 7).outcome is IssueOutcome.ENDED
    assert store.installed == []


def test_a_state_lock_held_elsewhere_is_unavailable_and_reads_nothing():
    store, catalog = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)]), fakes.Catalog()
    result = service(store, catalog=catalog, locks=fakes.Locks(held={3})).issue(3, 7)
    assert result.outcome is IssueOutcome.UNAVAILABLE
    assert catalog.reads == []


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (MissingState.COUPON_NOT_FOUND, IssueOutcome.COUPON_NOT_FOUND),
        (MissingState.ENDED, IssueOutcome.ENDED),
        (MissingState.BUILDING, IssueOutcome.UNAVAILABLE),
    ],
)
def test_a_coupon_without_a_state_the_registry_answers_for_asks_no_builder(answer, outcome):
    """An id that names nothing, a coupon long ended, a build another caller has asked for."""
    store, builder = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)]), fakes.Builder()
    registry = fakes.Registry(answer)

    result = IssueService(store, fakes.Publisher().publish, builder.build, lookup=registry.lookup).issue(3, 7)

    assert result.outcome is outcome
    assert (registry.lookups, builder.asked, store.reserves) == ([3], [], [(3, 7)])


def test_the_registry_is_asked_only_for_a_coupon_without_a_state():
    store, registry = fakes.Reservations([Reservation(IssueOutcome.SOLD_OUT)]), fakes.Registry()
    IssueService(store, fakes.Publisher().publish, fakes.Builder().build, lookup=registry.lookup).issue(3, 7)
    assert registry.lookups == []


def test_a_build_completes_a_registry_that_lost_its_coupons_and_registers_the_coupon():
    """After a loss of Redis the registry rules out no id: the first build puts every coupon of
    the database back, each with its state's expiry (the end of its window and the retention)."""
    now = datetime.now(UTC)
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING), Reservation(IssueOutcome.SUCCESS, 1)])
    live = coupon(now - HOUR, now + HOUR)
    registry = fakes.Registry(complete=False)
    catalog = fakes.Catalog(IssuedUsers(live, {}))
    reconciler = Reconciler(
        store, fakes.Locks(), catalog, fakes.InFlightReader(), registry,
        retention_ms=3_600_000, skew_ms=5_000, produce_bound_ms=2_000,
    )  # fmt: skip

    result = IssueService(store, fakes.Publisher().publish, reconciler.build, lookup=registry.lookup).issue(3, 7)

    assert result.outcome is IssueOutcome.SUCCESS
    assert (registry.complete, registry.loads) == (True, 1)
    assert registry.entries == {3: to_millis(live.issue_ends_at) + 3_600_000}
    assert catalog.reads[0] == "window_ends"


class _Unreachable:
    """A state builder that cannot be reached (the rebuild function throttled, or down)."""

    def build(self, coupon_id: int) -> MissingState:
        raise UnavailableError("rebuild function unreachable: TooManyRequestsException")


def test_a_missing_state_whose_builder_is_unreachable_is_unavailable_and_reserves_nothing():
    store, publisher = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)]), fakes.Publisher()
    result = IssueService(
        store, publisher.publish, _Unreachable().build, lookup=fakes.Registry(entries={3: LIVE}).lookup
    ).issue(3, 7)
    assert (result.outcome, result.detail) == (
        IssueOutcome.UNAVAILABLE,
        "rebuild function unreachable: TooManyRequestsException",
    )
    assert (store.reserves, publisher.published, store.releases) == ([(3, 7)], [], [])


def test_a_state_that_vanishes_right_after_its_initialisation_is_unavailable():
    now = datetime.now(UTC)
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)] * 2)
    catalog = fakes.Catalog(IssuedUsers(coupon(now - HOUR, now + HOUR), {}))
    result = service(store, catalog=catalog).issue(3, 7)
    assert result.outcome is IssueOutcome.UNAVAILABLE
    assert "vanished" in result.detail


USER = 918_273_645  # a user id that would stand out in a log line


@pytest.mark.parametrize(
    ("publisher", "release_answer"),
    [
        (fakes.Publisher(fails=PublishUnconfirmedError), None),  # logs a warning
        (fakes.Publisher(fails=NotPublishedError), StateUnavailableError("Redis gone")),  # logs the exception
    ],
)
def test_the_logs_name_the_request_never_the_user(caplog, publisher, release_answer):
    store = fakes.Reservations([Reservation(IssueOutcome.SUCCESS, RESERVED_AT)], release_answer=release_answer)

    with caplog.at_level(logging.INFO, logger="coupon_core"):
        service(store, publisher).issue(3, USER)

    assert caplog.records
    for record in caplog.records:
        fields = {**vars(record), "message": record.getMessage()}
        assert fields["requestId"]
        assert str(USER) not in json.dumps(fields, default=str)


def test_every_answer_of_reserve_but_a_missing_state_is_an_issue_outcome_of_the_same_name():
    """The service passes reserve's answer on by its name: a new answer of reserve.lua must be
    named here too, or the first request that meets it fails loudly."""
    answers = {outcome.value for outcome in IssueOutcome} - {IssueOutcome.STATE_MISSING.value}
    assert answers <= {outcome.value for outcome in IssueOutcome}


def test_a_success_answered_again_repeats_its_reservations_time_and_a_new_one_repeats_nothing():
    """What the measure of arrival order reads: a keyed request's id (its attempts share it), and
    for a SUCCESS that Redis answers again (the reservation older than the answer), the time the
    copy was taken."""
    store = fakes.Reservations(
        [
            Reservation(IssueOutcome.SUCCESS, RESERVED_AT, decided_at=RESERVED_AT),
            Reservation(IssueOutcome.SUCCESS, RESERVED_AT, decided_at=RESERVED_AT + 1_500),
        ]
    )
    issuing = service(store)

    first, again = issuing.issue(3, 7, "click-1"), issuing.issue(3, 7, "click-1")

    assert (first.replays, again.replays) == (None, RESERVED_AT)
    assert first.request_id == again.request_id == first.record.request_id  # type: ignore[union-attr]
    assert (again.decided_at, again.record.reserved_at) == (RESERVED_AT + 1_500, RESERVED_AT)  # type: ignore[union-attr]


def test_a_refusal_carries_its_requests_id_and_redis_time():
    store = fakes.Reservations([Reservation(IssueOutcome.SOLD_OUT, decided_at=RESERVED_AT)] * 2)
    issuing = service(store)

    keyed, keyless = issuing.issue(3, 7, "click-1"), issuing.issue(3, 8)

    assert (keyed.decided_at, keyed.replays) == (RESERVED_AT, None)
    assert keyless.request_id is not None
    assert keyed.request_id != keyless.request_id


@pytest.mark.parametrize("fails", [NotPublishedError, PublishUnconfirmedError])
def test_a_resend_whose_produce_fails_keeps_the_reservation_its_first_produce_may_have_queued(fails):
    """The first attempt's record was acknowledged and its answer lost; the resend (the same key:
    Redis answers the reservation again) fails to produce. The first record may be in Kafka, so
    the copy is not given back: UNCONFIRMED, and the client asks the status route."""
    store = fakes.Reservations([Reservation(IssueOutcome.SUCCESS, RESERVED_AT, decided_at=RESERVED_AT + 2_000)])

    result = service(store, fakes.Publisher(fails)).issue(3, 7, "click-1")

    assert (result.outcome, result.replays, store.releases) == (IssueOutcome.UNCONFIRMED, RESERVED_AT, [])
    assert result.detail == "Kafka did not acknowledge the record: test"
    assert result.record is not None


class _Outages:
    """The intake's collaborators, each failing as its contract says when ``down`` names it:
    Redis' calls with ``StateUnavailableError``, the build with ``UnavailableError``, the
    publish with either ``PublishError``; a reserve that finds no state first when ``missing``."""

    def __init__(self, down: str, *, missing: bool) -> None:
        self.down, self.missing = down, missing

    def _fail(self, name: str, error: type[Exception] = StateUnavailableError) -> None:
        if self.down == name:
            raise error(f"{name} is down")

    def reserve(
        self, coupon_id: int, user_id: int, request_id: object = None, *, idempotency_key: str = ""
    ) -> Reservation:
        self._fail("reserve")
        if self.missing:
            self.missing = False
            return Reservation(IssueOutcome.STATE_MISSING)
        return Reservation(IssueOutcome.SUCCESS, RESERVED_AT, decided_at=RESERVED_AT)

    def release(self, coupon_id: int, user_id: int, reserved_at: int) -> object:
        self._fail("release")
        return None

    def wait_for_replicas(self, coupon_id: int, user_id: int, reserved_at: int, replicas: int, timeout_ms: int) -> int:
        self._fail("wait_for_replicas")
        return replicas

    def lookup(self, coupon_id: int, claim_ms: int) -> MissingState:
        self._fail("lookup")
        return MissingState.BUILD

    def build(self, coupon_id: int) -> MissingState:
        self._fail("build", UnavailableError)
        return MissingState.READY

    def publish(self, record: object) -> None:
        self._fail("publish", NotPublishedError)
        self._fail("publish unconfirmed", PublishUnconfirmedError)
        self._fail("release", NotPublishedError)  # a release is asked only after a failed produce


@pytest.mark.parametrize(
    ("down", "outcome"),
    [
        ("reserve", IssueOutcome.UNAVAILABLE),
        ("lookup", IssueOutcome.UNAVAILABLE),
        ("build", IssueOutcome.UNAVAILABLE),
        ("wait_for_replicas", IssueOutcome.UNAVAILABLE),
        ("publish", IssueOutcome.UNAVAILABLE),
        ("publish unconfirmed", IssueOutcome.UNCONFIRMED),
        ("release", IssueOutcome.UNAVAILABLE),
    ],
)
def test_no_outage_of_a_collaborator_escapes_the_service(down, outcome):
    """The intake's handler catches no outage: the service answers each one its collaborators
    raise by their contracts, on a path that meets every collaborator (a missing state built,
    a replica waited for, a produce that fails and its release)."""
    outages = _Outages(down, missing=True)
    issuing = IssueService(outages, outages.publish, outages.build, lookup=outages.lookup, wait_replicas=1)

    result = issuing.issue(3, 7)

    assert result.outcome is outcome
    assert result.release_failed is (down == "release")


@dataclass
class _Recorder(fakes.Reservations):
    """The reservations, with every reserve's arguments and every wait for replicas, which
    ``replicas`` of them answer have the reservation."""

    asked: list[tuple[int, int, uuid.UUID | None, str]] = field(default_factory=list)
    replicas: int = 0
    waits: list[tuple[int, int, int, int, int]] = field(default_factory=list)

    def reserve(
        self, coupon_id: int, user_id: int, request_id: uuid.UUID | None = None, *, idempotency_key: str = ""
    ) -> Reservation:
        self.asked.append((coupon_id, user_id, request_id, idempotency_key))
        return super().reserve(coupon_id, user_id, request_id, idempotency_key=idempotency_key)

    def wait_for_replicas(self, coupon_id: int, user_id: int, reserved_at: int, replicas: int, timeout_ms: int) -> int:
        self.waits.append((coupon_id, user_id, reserved_at, replicas, timeout_ms))
        return self.replicas


def test_a_request_reserves_under_its_one_id_and_key_before_and_after_a_build():
    """A retried reserve is the same request: the one built for, and a keyed request's id is
    derived from the coupon, the user and the key."""
    store = _Recorder([Reservation(IssueOutcome.STATE_MISSING), Reservation(IssueOutcome.SUCCESS, RESERVED_AT)])
    issuing = IssueService(
        store, fakes.Publisher().publish, fakes.Builder().build, lookup=fakes.Registry(entries={3: LIVE}).lookup
    )

    result = issuing.issue(3, 7, "click-1")

    keyed = uuid.uuid5(IDEMPOTENCY_NAMESPACE, "3:7:click-1")
    assert (result.outcome, result.request_id) == (IssueOutcome.SUCCESS, keyed)
    assert store.asked == [(3, 7, keyed, "click-1")] * 2


def test_a_reserve_redis_could_not_answer_is_unavailable_and_names_its_request():
    outages = _Outages("reserve", missing=False)
    issuing = IssueService(outages, outages.publish, outages.build, lookup=outages.lookup)  # type: ignore[arg-type]

    keyed, keyless = issuing.issue(3, 7, "click-1"), issuing.issue(3, 7)

    assert (keyed.outcome, keyed.detail) == (IssueOutcome.UNAVAILABLE, "reserve is down")
    assert keyed.request_id == uuid.uuid5(IDEMPOTENCY_NAMESPACE, "3:7:click-1")
    assert keyless.request_id is not None


def test_a_reservation_the_replicas_have_in_time_is_published():
    store = _Recorder([Reservation(IssueOutcome.SUCCESS, RESERVED_AT)], replicas=2)
    publisher = fakes.Publisher()
    issuing = IssueService(
        store, publisher.publish, fakes.Builder().build, lookup=fakes.Registry().lookup,
        wait_replicas=2, wait_timeout_ms=50,
    )  # fmt: skip

    result = issuing.issue(3, 7)

    assert (result.outcome, publisher.published) == (IssueOutcome.SUCCESS, [result.record])
    assert store.waits == [(3, 7, RESERVED_AT, 2, 50)]


def test_a_reservation_the_replicas_lack_is_released_unpublished_and_a_resends_is_kept():
    """Too few replicas: an asynchronous failover could lose the copy, so it is given back; but a
    resend's reservation may already be in Kafka from its first produce, so it is kept."""
    reservations = [
        Reservation(IssueOutcome.SUCCESS, RESERVED_AT, decided_at=RESERVED_AT),
        Reservation(IssueOutcome.SUCCESS, RESERVED_AT, decided_at=RESERVED_AT + 2_000),  # a resend
    ]
    store, publisher = _Recorder(reservations, replicas=1), fakes.Publisher()
    issuing = IssueService(
        store, publisher.publish, fakes.Builder().build, lookup=fakes.Registry().lookup,
        wait_replicas=2, wait_timeout_ms=50,
    )  # fmt: skip

    first, resend = issuing.issue(3, 7, "click-1"), issuing.issue(3, 7, "click-1")

    detail = "the reservation did not reach 2 Redis replicas in 50 ms"
    assert (first.outcome, first.detail, first.release_failed) == (IssueOutcome.UNAVAILABLE, detail, False)
    assert (resend.outcome, resend.detail, resend.replays) == (IssueOutcome.UNCONFIRMED, detail, RESERVED_AT)
    assert resend.record is not None
    assert (store.releases, publisher.published) == ([(3, 7, RESERVED_AT)], [])


def test_an_unconfirmed_publish_warns_with_the_coupon_and_the_request(caplog):
    store = fakes.Reservations([Reservation(IssueOutcome.SUCCESS, RESERVED_AT)])

    with caplog.at_level(logging.INFO, logger="coupon_core"):
        result = service(store, fakes.Publisher(fails=PublishUnconfirmedError)).issue(3, 7)

    (record,) = caplog.records
    assert (record.levelno, record.couponId, record.requestId) == (logging.WARNING, 3, str(result.request_id))  # type: ignore[attr-defined]
    assert record.message == "publish unconfirmed: the reservation is left to the worker or to reconcile"


def test_a_release_that_fails_after_a_failed_publish_is_logged_with_the_coupon_and_the_request(caplog):
    store = fakes.Reservations(
        [Reservation(IssueOutcome.SUCCESS, RESERVED_AT)], release_answer=StateUnavailableError("Redis gone")
    )

    with caplog.at_level(logging.INFO, logger="coupon_core"):
        result = service(store, fakes.Publisher(fails=NotPublishedError)).issue(3, 7)

    (record,) = caplog.records
    assert (record.levelno, record.couponId, record.requestId) == (logging.ERROR, 3, str(result.request_id))  # type: ignore[attr-defined]
    assert record.message == "could not release a reservation after a failed publish; reconcile will"
    assert record.exc_info is not None
