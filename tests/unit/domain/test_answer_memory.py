"""The intake's memory of answers, on an injected clock: what it answers, for how long, and to whom."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest

from coupon_core.domain.issuing import MEMORY_MS, AnswerMemory, IssueService
from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import IssueOutcome, MissingState, Reservation
from coupon_core.errors import NotPublishedError, PublishUnconfirmedError
from tests.clock import Clock
from tests.unit.domain import fakes

RESERVED_AT = 1_764_590_400_123
LONG = 3_600_000  # ms until the window's next edge: longer than the memory


@dataclass
class Filter:
    """Holds exactly these users and keys (a Bloom filter may hold more, never fewer)."""

    users: set[int] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)

    def may_hold(self, user_id: int, idempotency_key: str) -> bool:
        return user_id in self.users or idempotency_key in self.keys


def service(
    answers: list[Reservation], clock: Clock, *, publisher: fakes.Publisher | None = None, **memory: int
) -> tuple[IssueService, fakes.Reservations]:
    store = fakes.Reservations(answers)
    issuing = IssueService(
        store,
        (publisher or fakes.Publisher()).publish,
        fakes.Builder().build,
        lookup=fakes.Registry().lookup,
        memory=AnswerMemory(clock=clock, **memory),
    )
    return issuing, store


@pytest.mark.parametrize("outcome", [IssueOutcome.NOT_OPEN, IssueOutcome.ENDED, IssueOutcome.CLOSED])
def test_a_standing_refusal_is_answered_from_memory_for_a_second_then_asked_again(outcome):
    clock = Clock()
    issuing, store = service(
        [Reservation(outcome, stands_ms=LONG), Reservation(IssueOutcome.SUCCESS, RESERVED_AT)], clock
    )

    learned = issuing.issue(3, 1)
    clock.now += 0.999
    remembered = issuing.issue(3, 2, "a-key")
    clock.now += 0.001
    asked = issuing.issue(3, 2)

    assert (learned.outcome, learned.learned, learned.remembered) == (outcome, True, False)
    assert (remembered.outcome, remembered.remembered) == (outcome, True)
    assert asked.outcome is IssueOutcome.SUCCESS
    assert store.reserves == [(3, 1), (3, 2)]


def test_not_open_is_remembered_no_later_than_the_window_opens():
    clock = Clock()
    answers = [Reservation(IssueOutcome.NOT_OPEN, stands_ms=300), Reservation(IssueOutcome.SUCCESS, RESERVED_AT)]
    issuing, store = service(answers, clock)

    issuing.issue(3, 1)
    clock.now += 0.299
    assert issuing.issue(3, 2).remembered
    clock.now += 0.001
    assert issuing.issue(3, 2).outcome is IssueOutcome.SUCCESS
    assert len(store.reserves) == 2


def test_the_second_counts_from_when_the_reserve_was_sent():
    """An answer that took long to come back is kept a second from the asking, not the answer."""
    clock = Clock()
    store = fakes.Reservations([Reservation(IssueOutcome.CLOSED, stands_ms=LONG)])
    slow = store.reserve

    def reserve(*args, **kwargs):
        clock.now += 0.4
        return slow(*args, **kwargs)

    store.reserve = reserve  # type: ignore[method-assign]
    issuing = IssueService(
        store,
        fakes.Publisher().publish,
        fakes.Builder().build,
        lookup=fakes.Registry().lookup,
        memory=AnswerMemory(clock=clock),
    )
    issuing.issue(3, 1)
    clock.now += 0.6

    assert issuing.memory is not None
    assert issuing.memory.recall(3, 2, "", clock.now) is None


def test_sold_out_is_remembered_only_for_the_callers_the_filter_clears():
    clock = Clock()
    filter_ = Filter(users={7}, keys={"used-key"})
    answers = [
        Reservation(IssueOutcome.SOLD_OUT, stands_ms=LONG, holders=filter_),
        Reservation(IssueOutcome.DUPLICATE, RESERVED_AT),
        Reservation(IssueOutcome.KEY_REUSED),
    ]
    issuing, store = service(answers, clock)

    issuing.issue(3, 1)
    stranger = issuing.issue(3, 2)
    stranger_with_a_new_key = issuing.issue(3, 2, "new-key")
    holder = issuing.issue(3, 7)
    reused_key = issuing.issue(3, 2, "used-key")

    assert (stranger.outcome, stranger.remembered) == (IssueOutcome.SOLD_OUT, True)
    assert stranger_with_a_new_key.remembered
    assert (holder.outcome, holder.remembered) == (IssueOutcome.DUPLICATE, False)
    assert (reused_key.outcome, reused_key.remembered) == (IssueOutcome.KEY_REUSED, False)
    assert store.reserves == [(3, 1), (3, 7), (3, 2)]


def test_a_refusal_that_is_the_callers_alone_is_not_remembered():
    clock = Clock()
    answers = [Reservation(IssueOutcome.SOLD_OUT), Reservation(IssueOutcome.SOLD_OUT)]
    issuing, store = service(answers, clock)

    assert not issuing.issue(3, 1).learned
    assert not issuing.issue(3, 2).remembered
    assert len(store.reserves) == 2


def test_a_success_through_redis_forgets_the_coupons_refusal():
    """A copy came back (a cancel, a top-up): the coupon's refusal no longer stands."""
    clock = Clock()
    answers = [
        Reservation(IssueOutcome.SOLD_OUT, stands_ms=LONG, holders=Filter(users={7})),
        Reservation(IssueOutcome.SUCCESS, RESERVED_AT),  # user 7: a keyed retry of its own success
        Reservation(IssueOutcome.SUCCESS, RESERVED_AT + 1),
    ]
    issuing, store = service(answers, clock)

    issuing.issue(3, 1)
    issuing.issue(3, 7, "its-key")

    assert issuing.issue(3, 2).outcome is IssueOutcome.SUCCESS
    assert len(store.reserves) == 3


def test_each_coupon_has_its_own_memory_and_the_oldest_is_forgotten_past_the_bound():
    clock = Clock()
    answers = [Reservation(IssueOutcome.CLOSED, stands_ms=LONG) for _ in range(3)] + [
        Reservation(IssueOutcome.NOT_OPEN)
    ]
    issuing, store = service(answers, clock, coupons=2)

    for coupon_id in (1, 2, 3):
        issuing.issue(coupon_id, 1)

    assert [issuing.issue(coupon_id, 2).remembered for coupon_id in (2, 3)] == [True, True]
    assert issuing.issue(1, 2).outcome is IssueOutcome.NOT_OPEN  # forgotten: asked
    assert len(store.reserves) == 4


def test_without_a_memory_every_request_asks_redis():
    store = fakes.Reservations([Reservation(IssueOutcome.CLOSED, stands_ms=LONG)] * 2)
    issuing = IssueService(store, fakes.Publisher().publish, fakes.Builder().build, lookup=fakes.Registry().lookup)

    assert [issuing.issue(3, 1).remembered, issuing.issue(3, 2).remembered] == [False, False]
    assert len(store.reserves) == 2


@pytest.mark.parametrize("ms", [0, -1, MEMORY_MS + 1])
def test_a_memory_longer_than_the_contracts_second_or_empty_is_refused(ms):
    with pytest.raises(ValueError, match="1 to 1000 ms"):
        AnswerMemory(ms)


@pytest.mark.parametrize("ms", [1, 250, MEMORY_MS])
def test_a_memory_keeps_an_answer_for_its_ms_to_the_end(ms):
    memory = AnswerMemory(ms, clock=Clock())
    assert memory.learn(3, 1, "", Reservation(IssueOutcome.CLOSED, stands_ms=LONG), asked_at=0.0)
    assert memory.recall(3, 2, "", (ms - 0.5) / 1000) is not None
    assert memory.recall(3, 2, "", ms / 1000) is None


def test_an_answer_is_kept_to_the_end_of_its_stand_when_that_comes_first():
    memory = AnswerMemory(clock=Clock())
    memory.learn(3, 7, "", Reservation(IssueOutcome.DUPLICATE, 1, stands_ms=500), asked_at=0.0)
    assert memory.recall(3, 7, "", 0.4999) is not None
    assert memory.recall(3, 7, "", 0.5) is None


def test_a_success_through_redis_is_not_kept_before_kafka_acknowledges_it():
    memory = AnswerMemory(clock=Clock())
    assert not memory.learn(3, 7, "k", Reservation(IssueOutcome.SUCCESS, RESERVED_AT, stands_ms=LONG), 0.0)
    assert memory.recall(3, 7, "k", 0.0) is None


def test_the_oldest_callers_answer_is_forgotten_past_the_callers_bound():
    """Whether the caller's answer was Redis' refusal or an acknowledged SUCCESS."""
    memory = AnswerMemory(clock=Clock(), callers=2)
    for user in (1, 2, 3):
        memory.learn(3, user, "", Reservation(IssueOutcome.DUPLICATE, 1, stands_ms=LONG), asked_at=0.0)
    assert [memory.recall(3, user, "", 0.0) is not None for user in (1, 2, 3)] == [False, True, True]

    acknowledged = AnswerMemory(clock=Clock(), callers=2)
    for user in (1, 2, 3):
        record = IssueRecord(3, user, uuid.uuid4(), RESERVED_AT)
        acknowledged.acknowledged(record, "", LONG, asked_at=0.0)
    assert [acknowledged.recall(3, user, "", 0.0) is not None for user in (1, 2, 3)] == [False, True, True]


def test_an_answer_learned_again_is_kept_in_place_and_forgets_no_other():
    memory = AnswerMemory(clock=Clock(), coupons=2)
    for coupon_id in (1, 2, 2):
        memory.learn(coupon_id, 1, "", Reservation(IssueOutcome.CLOSED, stands_ms=LONG), asked_at=0.0)
    assert [memory.recall(coupon_id, 1, "", 0.0) is not None for coupon_id in (1, 2)] == [True, True]


def test_a_holders_clicks_after_its_acknowledged_success_are_duplicate_from_memory_for_a_second():
    clock, publisher = Clock(), fakes.Publisher()
    answers = [Reservation(IssueOutcome.SUCCESS, RESERVED_AT, stands_ms=LONG), Reservation(IssueOutcome.DUPLICATE, 1)]
    issuing, store = service(answers, clock, publisher=publisher)

    assert issuing.issue(3, 7).outcome is IssueOutcome.SUCCESS
    clicks = [issuing.issue(3, 7) for _ in range(100)]
    clock.now += 1
    asked = issuing.issue(3, 7)

    assert {(c.outcome, c.remembered) for c in clicks} == {(IssueOutcome.DUPLICATE, True)}
    assert (asked.outcome, asked.remembered) == (IssueOutcome.DUPLICATE, False)
    assert (len(store.reserves), len(publisher.published)) == (2, 1)


def test_a_keyed_retry_of_an_acknowledged_success_hears_that_success_and_nothing_is_published_again():
    clock, publisher = Clock(), fakes.Publisher()
    answers = [Reservation(IssueOutcome.SUCCESS, RESERVED_AT, stands_ms=LONG), Reservation(IssueOutcome.DUPLICATE, 1)]
    issuing, store = service(answers, clock, publisher=publisher)

    first = issuing.issue(3, 7, "its-key")
    retry = issuing.issue(3, 7, "its-key")
    another_key = issuing.issue(3, 7, "another-key")

    assert (retry.outcome, retry.remembered, retry.record) == (IssueOutcome.SUCCESS, True, first.record)
    assert (another_key.outcome, another_key.remembered) == (IssueOutcome.DUPLICATE, False)  # asked: may be KEY_REUSED
    assert (len(store.reserves), publisher.published) == (2, [first.record])


@pytest.mark.parametrize("fails", [NotPublishedError, PublishUnconfirmedError])
def test_a_success_kafka_did_not_acknowledge_is_not_remembered(fails):
    clock = Clock()
    answers = [Reservation(IssueOutcome.SUCCESS, RESERVED_AT, stands_ms=LONG), Reservation(IssueOutcome.DUPLICATE, 1)]
    issuing, store = service(answers, clock, publisher=fakes.Publisher(fails=fails))

    issuing.issue(3, 7, "its-key")

    assert not issuing.issue(3, 7, "its-key").remembered
    assert len(store.reserves) == 2


@pytest.mark.parametrize("outcome", [IssueOutcome.DUPLICATE, IssueOutcome.KEY_REUSED])
def test_a_callers_own_refusal_is_remembered_for_that_user_and_key_alone(outcome):
    clock = Clock()
    answers = [Reservation(outcome, stands_ms=LONG), Reservation(IssueOutcome.SUCCESS, RESERVED_AT, stands_ms=LONG)]
    issuing, store = service(answers, clock)

    issuing.issue(3, 7, "k")
    again = issuing.issue(3, 7, "k")
    other_user = issuing.issue(3, 8, "k")

    assert (again.outcome, again.remembered) == (outcome, True)
    assert (other_user.outcome, other_user.remembered) == (IssueOutcome.SUCCESS, False)
    assert store.reserves == [(3, 7), (3, 8)]


def test_a_callers_own_answer_is_kept_no_later_than_the_window_ends():
    clock = Clock()
    answers = [Reservation(IssueOutcome.DUPLICATE, 1, stands_ms=200), Reservation(IssueOutcome.ENDED, stands_ms=LONG)]
    issuing, store = service(answers, clock)

    issuing.issue(3, 7)
    clock.now += 0.199
    assert issuing.issue(3, 7).remembered
    clock.now += 0.002
    assert issuing.issue(3, 7).outcome is IssueOutcome.ENDED
    assert len(store.reserves) == 2


def test_closed_is_answered_before_a_callers_own_answer_and_that_before_sold_out():
    """``reserve.lua``'s order: a closed coupon answers CLOSED to a holder too; a sold-out one
    answers a holder the memory knows DUPLICATE, though the filter would say nothing of it."""
    clock = Clock()
    answers = [
        Reservation(IssueOutcome.SUCCESS, RESERVED_AT, stands_ms=LONG),
        Reservation(IssueOutcome.SOLD_OUT, stands_ms=LONG, holders=Filter(users={7}, keys={"k"})),
        Reservation(IssueOutcome.CLOSED, stands_ms=LONG),
    ]
    issuing, store = service(answers, clock)

    issuing.issue(3, 7)  # holds a copy
    issuing.issue(3, 1)  # sold out
    holder_when_sold_out = issuing.issue(3, 7)
    issuing.issue(3, 2, "k")  # a key the filter does not clear: asked, closed
    holder_when_closed = issuing.issue(3, 7)

    assert (holder_when_sold_out.outcome, holder_when_sold_out.remembered) == (IssueOutcome.DUPLICATE, True)
    assert (holder_when_closed.outcome, holder_when_closed.remembered) == (IssueOutcome.CLOSED, True)
    assert len(store.reserves) == 3


@pytest.mark.parametrize("outcome", [IssueOutcome.COUPON_NOT_FOUND, IssueOutcome.ENDED])
def test_what_the_registry_says_of_a_coupon_without_a_state_is_remembered_for_a_second(outcome):
    clock = Clock()
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)] * 2)
    registry = fakes.Registry(MissingState(outcome.value))
    issuing = IssueService(
        store,
        fakes.Publisher().publish,
        fakes.Builder().build,
        lookup=registry.lookup,
        memory=AnswerMemory(clock=clock),
    )

    answers = [issuing.issue(3, user) for user in range(1, 301)]
    clock.now += 1
    issuing.issue(3, 1)

    assert {a.outcome for a in answers} == {outcome}
    assert answers[0].learned is True
    assert sum(a.remembered for a in answers) == 299
    assert (len(store.reserves), registry.lookups) == (2, [3, 3])


def test_coupons_without_a_state_are_kept_apart_and_push_out_no_sales_refusal():
    """A script asking for more made-up ids than the memory keeps forgets only made-up ids."""
    clock = Clock()
    store = fakes.Reservations([Reservation(IssueOutcome.SOLD_OUT, stands_ms=LONG, holders=Filter())])
    store.answers += [Reservation(IssueOutcome.STATE_MISSING)] * 20
    issuing = IssueService(
        store,
        fakes.Publisher().publish,
        fakes.Builder().build,
        lookup=fakes.Registry(MissingState.COUPON_NOT_FOUND).lookup,
        memory=AnswerMemory(clock=clock, coupons=2, absent=4),
    )

    issuing.issue(3, 1)
    for made_up in range(100, 120):
        issuing.issue(made_up, 1)

    assert issuing.issue(3, 2).remembered
    assert [issuing.issue(made_up, 1).remembered for made_up in (116, 119)] == [True, True]


def test_a_build_another_caller_asked_for_is_unavailable_and_not_remembered():
    clock = Clock()
    store = fakes.Reservations([Reservation(IssueOutcome.STATE_MISSING)] * 2)
    registry = fakes.Registry(MissingState.BUILDING)
    issuing = IssueService(
        store,
        fakes.Publisher().publish,
        fakes.Builder().build,
        lookup=registry.lookup,
        memory=AnswerMemory(clock=clock),
    )

    results = [issuing.issue(3, 1), issuing.issue(3, 1)]

    assert [(r.outcome, r.remembered) for r in results] == [(IssueOutcome.UNAVAILABLE, False)] * 2
    assert "being built" in results[0].detail
    assert len(registry.lookups) == 2


def test_an_answer_from_memory_repeats_redis_decision_and_names_its_request():
    """The measure of arrival order takes a remembered answer as decided when Redis decided it:
    a loser told SOLD_OUT from memory was not kept waiting for a copy put back since."""
    clock = Clock()
    filter_ = Filter()
    answers = [
        Reservation(IssueOutcome.SOLD_OUT, stands_ms=LONG, holders=filter_, decided_at=RESERVED_AT),
        Reservation(IssueOutcome.SUCCESS, RESERVED_AT + 10, stands_ms=LONG, decided_at=RESERVED_AT + 10),
    ]
    issuing, _ = service(answers, clock)

    asked = issuing.issue(3, 1, "k-1")
    clock.now += 0.5
    remembered = issuing.issue(3, 2, "k-2")

    assert (asked.replays, asked.decided_at) == (None, RESERVED_AT)
    assert (remembered.remembered, remembered.replays, remembered.decided_at) == (True, RESERVED_AT, None)
    assert remembered.request_id is not None
    assert remembered.request_id != asked.request_id
    assert issuing.issue(3, 2, "k-2").request_id == remembered.request_id  # the click's attempts share it


def test_an_acknowledged_success_from_memory_repeats_its_reservation():
    clock = Clock()
    answers = [Reservation(IssueOutcome.SUCCESS, RESERVED_AT, stands_ms=LONG, decided_at=RESERVED_AT)]
    issuing, _ = service(answers, clock)

    first = issuing.issue(3, 7, "its-key")
    retry, other_click = issuing.issue(3, 7, "its-key"), issuing.issue(3, 7)

    assert (retry.remembered, retry.replays, retry.request_id) == (True, RESERVED_AT, first.request_id)
    assert (other_click.outcome, other_click.replays, other_click.request_id) == (
        IssueOutcome.DUPLICATE,
        RESERVED_AT,
        None,
    )
