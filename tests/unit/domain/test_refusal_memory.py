"""The intake's memory of refusals, on an injected clock: what it answers, for how long, and to whom."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from coupon_core.domain.issuing import MEMORY_MS, IssueService, RefusalMemory
from coupon_core.domain.reservations import IssueOutcome, Reservation
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


def service(answers: list[Reservation], clock: Clock, **memory: int) -> tuple[IssueService, fakes.Reservations]:
    store = fakes.Reservations(answers)
    return IssueService(store, fakes.Publisher(), fakes.Builder(), memory=RefusalMemory(clock=clock, **memory)), store


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
    issuing = IssueService(store, fakes.Publisher(), fakes.Builder(), memory=RefusalMemory(clock=clock))
    issuing.issue(3, 1)
    clock.now += 0.6

    assert issuing.memory is not None
    assert issuing.memory.refusal(3, 2, "", clock.now) is None


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
    issuing = IssueService(store, fakes.Publisher(), fakes.Builder())

    assert [issuing.issue(3, 1).remembered, issuing.issue(3, 2).remembered] == [False, False]
    assert len(store.reserves) == 2


@pytest.mark.parametrize("ms", [0, -1, MEMORY_MS + 1])
def test_a_memory_longer_than_the_contracts_second_or_empty_is_refused(ms):
    with pytest.raises(ValueError, match="1 to 1000 ms"):
        RefusalMemory(ms)
