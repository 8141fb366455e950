"""A sale as a page reads it: one read a second per coupon, the server's clock carried forward,
reserve.lua's precedence, and what a coupon without a state answers."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from coupon_core.domain.availability import (
    AVAILABILITY_MS,
    AvailabilityService,
    NoSale,
    Sale,
    SaleState,
    Unread,
)
from coupon_core.errors import StateUnavailableError

T0 = 1_900_000_000_000  # Redis' time of the first read (epoch ms)


@dataclass
class Clock:
    seconds: float = 100.0

    def __call__(self) -> float:
        return self.seconds


@dataclass
class Reader:
    """Redis as the service reads it: ``found`` per coupon, each read counted, Redis' clock
    following the service's (``clock``)."""

    clock: Clock
    found: dict[int, Sale | Unread | NoSale] = field(default_factory=dict)
    reads: list[int] = field(default_factory=list)

    def read(self, coupon_id: int) -> Sale | Unread:
        self.reads.append(coupon_id)
        now = T0 + round((self.clock.seconds - 100.0) * 1000)
        kept = self.found[coupon_id]
        if isinstance(kept, NoSale):
            return Unread(kept, now)
        return Sale(now, kept.total, kept.starts_at, kept.ends_at, kept.closed, kept.taken)


def sale(total: int = 10, taken: int = 0, *, starts: int = -1000, ends: int = 60_000, closed: bool = False) -> Sale:
    """A sale whose window is ``starts`` and ``ends`` ms from T0 (``read_at`` is the reader's)."""
    return Sale(0, total, T0 + starts, T0 + ends, closed, taken)


def service(**found: Sale | NoSale) -> tuple[AvailabilityService, Reader, Clock]:
    clock = Clock()
    reader = Reader(clock, {int(name.removeprefix("c")): value for name, value in found.items()})
    return AvailabilityService(reader, clock=clock), reader, clock


def test_a_coupon_is_read_once_a_second_however_often_it_is_asked():
    answers, reader, clock = service(c1=sale(), c2=sale())
    for _ in range(50):
        answers.availability(1)
        answers.availability(2)
        clock.seconds += 0.019  # 50 asks in 0.95 s
    assert reader.reads == [1, 2]
    clock.seconds = 100.0 + AVAILABILITY_MS / 1000
    answers.availability(1)
    assert reader.reads == [1, 2, 1]


def test_a_fresh_ask_reads_whatever_is_kept_and_what_it_read_is_kept_for_the_others():
    """The edge's ask: read now, however recent the kept read; the pages after it get that read."""
    answers, reader, clock = service(c1=sale(taken=1))
    answers.availability(1)
    clock.seconds += 0.4
    reader.found[1] = sale(taken=3)
    fresh = answers.availability(1, fresh=True)
    clock.seconds += 0.4
    kept = answers.availability(1)
    assert reader.reads == [1, 1]
    assert fresh is not None
    assert fresh.sale is not None
    assert fresh.sale.left == 7
    assert fresh.server_time == fresh.sale.read_at  # read for it: no age
    assert kept is not None
    assert kept.sale == fresh.sale


def test_the_server_time_is_carried_forward_and_the_copies_left_are_the_reads():
    answers, reader, clock = service(c1=sale(total=10, taken=3))
    first = answers.availability(1)
    reader.found[1] = sale(total=10, taken=9)  # Redis moved on; the read stands for a second
    clock.seconds += 0.75
    later = answers.availability(1)
    assert first is not None
    assert later is not None
    assert (first.server_time, later.server_time) == (T0, T0 + 750)
    assert later.sale is not None
    assert (later.sale.left, later.sale.read_at) == (7, T0)


def test_a_sale_that_opens_between_two_reads_reads_open_at_its_opening():
    answers, _, clock = service(c1=sale(starts=500))
    before = answers.availability(1)
    clock.seconds += 0.499
    still = answers.availability(1)
    clock.seconds += 0.001
    opened = answers.availability(1)
    assert [a.state for a in (before, still, opened) if a] == [SaleState.NOT_OPEN, SaleState.NOT_OPEN, SaleState.OPEN]


def test_a_sale_that_ends_between_two_reads_reads_ended_at_its_end():
    answers, _, clock = service(c1=sale(ends=300, taken=10))
    assert (answer := answers.availability(1)) is not None
    assert answer.state is SaleState.SOLD_OUT
    clock.seconds += 0.3
    assert (answer := answers.availability(1)) is not None
    assert answer.state is SaleState.ENDED


@pytest.mark.parametrize(
    ("kept", "state"),
    [
        (sale(taken=9), SaleState.OPEN),
        (sale(taken=10), SaleState.SOLD_OUT),
        (sale(taken=12), SaleState.SOLD_OUT),  # an operator lowered the total below the reservations
        (sale(starts=1), SaleState.NOT_OPEN),
        (sale(starts=0), SaleState.OPEN),  # open from its first millisecond
        (sale(ends=0), SaleState.ENDED),  # ended at its last
        (sale(taken=10, ends=0), SaleState.ENDED),  # ended before sold out
        (sale(taken=10, starts=1), SaleState.NOT_OPEN),  # not open before sold out
        (sale(closed=True, starts=1), SaleState.CLOSED),  # closed before everything
        (sale(closed=True, ends=0), SaleState.CLOSED),
    ],
)
def test_the_state_keeps_reserves_precedence(kept, state):
    answers, _, _ = service(c1=kept)
    answer = answers.availability(1)
    assert answer is not None
    assert answer.state is state


def test_copies_left_are_never_below_zero():
    assert sale(total=10, taken=12).left == 0
    assert sale(total=10, taken=10).left == 0
    assert sale(total=10, taken=4).left == 6


def test_a_coupon_without_a_state_answers_from_the_registry_and_is_kept_too():
    answers, reader, clock = service(c1=NoSale.COUPON_NOT_FOUND, c2=NoSale.ENDED, c3=NoSale.UNAVAILABLE)
    assert answers.availability(1) is None
    ended = answers.availability(2)
    assert ended is not None
    assert (ended.state, ended.sale, ended.server_time) == (SaleState.ENDED, None, T0)
    with pytest.raises(StateUnavailableError):
        answers.availability(3)
    clock.seconds += 0.5
    assert answers.availability(1) is None
    with pytest.raises(StateUnavailableError):
        answers.availability(3)
    assert reader.reads == [1, 2, 3]


def test_the_oldest_read_is_forgotten_first_once_the_bound_is_kept():
    clock = Clock()
    reader = Reader(clock, {coupon: sale() for coupon in (1, 2, 3)})
    answers = AvailabilityService(reader, clock=clock, coupons=2)
    for coupon in (1, 2, 3, 2, 1):
        answers.availability(coupon)
    assert reader.reads == [1, 2, 3, 1]  # 3 pushed 1 out; 2 was still kept


def test_without_a_period_every_ask_reads():
    clock = Clock()
    reader = Reader(clock, {1: sale()})
    answers = AvailabilityService(reader, ms=0, clock=clock)
    answers.availability(1)
    answers.availability(1)
    assert reader.reads == [1, 1]


@pytest.mark.parametrize("ms", [-1, AVAILABILITY_MS + 1])
def test_a_period_beyond_the_contract_is_refused(ms):
    with pytest.raises(ValueError, match="0 to 1000 ms"):
        AvailabilityService(Reader(Clock()), ms=ms)


@dataclass
class SlowReader(Reader):
    """A read that takes ``latency`` seconds, Redis running the script halfway through it."""

    latency: float = 0.08

    def read(self, coupon_id: int) -> Sale | Unread:
        self.clock.seconds += self.latency / 2
        found = super().read(coupon_id)
        self.clock.seconds += self.latency / 2
        return found


def test_a_slow_read_never_puts_the_server_time_ahead_of_redis():
    clock = Clock()
    answers = AvailabilityService(SlowReader(clock, {1: sale(starts=500)}), clock=clock)
    for _ in range(12):
        answer = answers.availability(1)
        redis_now = T0 + round((clock.seconds - 100.0) * 1000)
        assert answer is not None
        assert redis_now - 80 <= answer.server_time <= redis_now
        assert (answer.state is SaleState.OPEN) <= (redis_now >= T0 + 500)  # never open before Redis is
        clock.seconds += 0.1


def test_ids_without_a_sale_push_out_only_each_other():
    clock = Clock()
    reader = Reader(clock, {1: sale(), **dict.fromkeys(range(100, 110), NoSale.COUPON_NOT_FOUND)})
    answers = AvailabilityService(reader, clock=clock, coupons=2, unread=2)
    answers.availability(1)
    for made_up in range(100, 110):
        assert answers.availability(made_up) is None
    answers.availability(1)
    assert reader.reads == [1, *range(100, 110)]  # the sale's read kept through ten made-up ids
