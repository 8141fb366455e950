"""Random sales answered by several intake containers with the memory of answers, and without it,
every answer compared with what the intake without the memory answers (the contract).

Hypothesis drives a sale on the real Valkey through ``IssueService``, the real store and the real
registry of coupons (the intake's domain; the HTTP mapping and Kafka add nothing to the memory):
requests of a few users from three containers, with no key, a key of their own, or another's key
(KEY_REUSED), and keyed retries; requests for an id that names no coupon; time passing on the
containers' injected clock; top-ups and a cancel's copy going back to stock, releases, closes
and reopens, the window moved (open, not yet open, ended), the state and the registry lost and
rebuilt, and the holders' filter evicted alone.

The reference is a model of ``reserve.lua``'s contract, held to the intake without the memory
by the same machine run with ``memory=False``: there every answer must be the model's now. With
the memory, an answer Redis gave must be the model's now too, and one the memory gave must be
the model's answer at some moment of the last second: the stated staleness (docs/design.md),
and no other difference; a SUCCESS it gave must be, with its request id and time, the one the
user held at that moment.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
import redis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from coupon_core.domain.coupons import CouponState
from coupon_core.domain.issuing import IDEMPOTENCY_NAMESPACE, MEMORY_MS, AnswerMemory, IssueService
from coupon_core.domain.records import IssueRecord
from coupon_core.domain.reservations import IssueOutcome, MissingState
from local.testkit.stores import WholeStore
from lua_redis.client import connect
from lua_redis.keys import holders_key
from lua_redis.registry import RedisCouponRegistry
from tests.clock import Clock
from tests.services.support import HOUR_MS, now_ms

COUPON = 1
CONTAINERS = 3
USERS = st.integers(min_value=1, max_value=6)
CONTAINER = st.integers(min_value=0, max_value=CONTAINERS - 1)
WINDOWS = {  # the window as offsets from now: far from its edges, so that only a move changes it
    "open": (-HOUR_MS, HOUR_MS),
    "not open": (HOUR_MS, 2 * HOUR_MS),
    "ended": (-2 * HOUR_MS, -HOUR_MS),
}
SECOND = MEMORY_MS / 1000


@dataclass
class Sale:
    """The contract's state of the coupon, and the answer reserve gives to a request on it."""

    total: int
    window: str = "open"
    closed: bool = False
    holders: dict[int, tuple[str, int]] = field(default_factory=dict)  # user -> (request id, reserved at)
    keys: dict[str, int] = field(default_factory=dict)  # Idempotency-Key -> the user it was first used for

    def answer(self, user: int, key: str) -> IssueOutcome:
        if self.closed:
            return IssueOutcome.CLOSED
        if self.window != "open":
            return IssueOutcome.NOT_OPEN if self.window == "not open" else IssueOutcome.ENDED
        if key and self.keys.get(key, user) != user:
            return IssueOutcome.KEY_REUSED
        if user in self.holders:
            keyed_request = str(uuid.uuid5(IDEMPOTENCY_NAMESPACE, f"{COUPON}:{user}:{key}")) if key else None
            return IssueOutcome.SUCCESS if self.holders[user][0] == keyed_request else IssueOutcome.DUPLICATE
        return IssueOutcome.SOLD_OUT if len(self.holders) >= self.total else IssueOutcome.SUCCESS

    def state(self) -> CouponState:
        now = now_ms()
        starts, ends = WINDOWS[self.window]
        return CouponState(COUPON, self.total, now + starts, now + ends, now + 24 * HOUR_MS, self.closed)


class RebuildFromTheSale:
    """The builder function: a lost state is built again from what the sale says (the database),
    and the registry, if Redis lost it, holds the sale's one coupon again."""

    def __init__(self, store: WholeStore, registry: RedisCouponRegistry, sale: Sale) -> None:
        self.store, self.registry, self.sale = store, registry, sale

    def build(self, coupon_id: int) -> MissingState:
        expiries = {COUPON: self.sale.state().expires_at}
        if (token := self.registry.begin_load()) is not None:
            self.registry.finish_load(token, expiries)
        if coupon_id != COUPON:
            return MissingState.COUPON_NOT_FOUND
        holders = {user: at for user, (_, at) in self.sale.holders.items()}
        request_ids = {user: request_id for user, (request_id, _) in self.sale.holders.items()}
        self.store.reconcile(self.sale.state(), holders, release_before=None, request_ids=request_ids)
        self.registry.register(expiries)
        return MissingState.READY


class Published:
    def publish(self, record: IssueRecord) -> None:
        """Kafka is not what is compared: a record is taken as acknowledged."""


class Sales(RuleBasedStateMachine):
    connections: ClassVar[list[redis.Redis]]  # the test's own and each container's, open for every example
    memory: ClassVar[bool]

    def __init__(self) -> None:
        super().__init__()
        self.redis, *clients = self.connections
        self.redis.flushall()
        self.admin = WholeStore(self.redis)
        self.clock = Clock()
        self.sale = Sale(total=1)
        self.history: list[tuple[float, Sale]] = []  # (since when, the sale as it stood)
        self.keys: list[tuple[int, str]] = []
        self.containers: list[IssueService] = []
        for client in clients:
            store, registry = WholeStore(client), RedisCouponRegistry(client)
            memory = AnswerMemory(clock=self.clock) if self.memory else None
            builder = RebuildFromTheSale(store, registry, self.sale)
            self.containers.append(
                IssueService(store, Published().publish, builder.build, lookup=store.lookup, memory=memory)
            )
        self.remembered = 0

    def _changed(self) -> None:
        self.history.append((self.clock.now, copy.deepcopy(self.sale)))

    def _write(self) -> None:
        self.admin.update_state(self.sale.state())  # False while the state is lost: the rebuild has it
        self._changed()

    @initialize(total=st.integers(min_value=1, max_value=3))
    def open_the_sale(self, total: int) -> None:
        self.sale.total = total
        self.admin.reconcile(self.sale.state(), {}, release_before=None)
        RebuildFromTheSale(self.admin, RedisCouponRegistry(self.redis), self.sale).build(0)  # the registry
        self._changed()

    @rule(
        clicks=st.lists(st.tuples(CONTAINER, USERS, st.sampled_from(["", "own", "another's"])), min_size=1, max_size=8)
    )
    def requests(self, clicks: list[tuple[int, int, str]]) -> None:
        """A burst of clicks, each from a container, with no key, a new key, or another user's."""
        for container, user, kind in clicks:
            key = ""
            if kind == "own":
                key = f"key-{user}-{len(self.keys)}"
                self.keys.append((user, key))
            elif kind == "another's":
                key = next((k for u, k in reversed(self.keys) if u != user), "")
            self._ask(container, user, key)

    @rule(container=CONTAINER, data=st.data())
    def retry_a_keyed_request(self, container: int, data: st.DataObject) -> None:
        if self.keys:
            user, key = data.draw(st.sampled_from(self.keys))
            self._ask(container, user, key)

    @rule(container=CONTAINER, user=USERS, unknown=st.integers(min_value=COUPON + 1, max_value=COUPON + 3))
    def a_request_for_no_coupon(self, container: int, user: int, unknown: int) -> None:
        result = self.containers[container].issue(unknown, user)
        self.remembered += result.remembered
        assert result.outcome is IssueOutcome.COUPON_NOT_FOUND

    def _ask(self, container: int, user: int, key: str) -> None:
        result = self.containers[container].issue(COUPON, user, key or None)
        if result.remembered:
            self.remembered += 1
            since = self.clock.now - SECOND
            stood = [sale for at, sale in self.history if at > since]
            stood += [sale for at, sale in self.history if at <= since][-1:]
            answers = {sale.answer(user, key) for sale in stood}
            assert result.outcome in answers, f"from memory {result.outcome}, the last second said {answers}"
            if result.outcome is IssueOutcome.SUCCESS:
                assert result.record is not None
                held = (str(result.record.request_id), result.record.reserved_at)
                assert any(sale.holders.get(user) == held for sale in stood), f"{held} was not user {user}'s"
            return
        expected = self.sale.answer(user, key)
        assert result.outcome is expected, f"user {user} key {key!r}: {result.outcome}, the contract says {expected}"
        if result.outcome is IssueOutcome.SUCCESS and user not in self.sale.holders:
            assert result.record is not None
            self.sale.holders[user] = (str(result.record.request_id), result.record.reserved_at)
            if key:
                self.sale.keys.setdefault(key, user)
            self._changed()

    @rule(seconds=st.sampled_from([0.25, 0.5, SECOND - 0.001, SECOND, 1.5]))
    def time_passes(self, seconds: float) -> None:
        self.clock.now += seconds

    @rule()
    def a_copy_goes_back_to_stock(self) -> None:
        """A top-up, or a cancel's copy (its holder keeps the reservation: the total grows)."""
        self.sale.total += 1
        self._write()

    @rule(user=USERS)
    def a_copy_is_released(self, user: int) -> None:
        """A record that failed: the DLQ handler releases its reservation (its key stays known)."""
        if user in self.sale.holders:
            self.admin.release(COUPON, user, self.sale.holders.pop(user)[1])
            self._changed()

    @rule(closed=st.booleans())
    def close_or_reopen(self, closed: bool) -> None:
        self.sale.closed = closed
        self._write()

    @rule(window=st.sampled_from(list(WINDOWS)))
    def the_window_moves(self, window: str) -> None:
        self.sale.window = window
        self._write()

    @rule()
    def redis_loses_the_state(self) -> None:
        """Rebuilt by the next request from the holders; which user each key was for is forgotten,
        and the registry of coupons is lost with the rest (the next build loads it again)."""
        self.redis.flushall()
        self.sale.keys.clear()
        self._changed()

    @rule()
    def the_filter_is_evicted(self) -> None:
        self.redis.delete(holders_key(COUPON))

    @invariant()
    def the_memory_answers_only_with_it(self) -> None:
        assert self.memory or self.remembered == 0


@pytest.mark.parametrize("memory", [False, True], ids=["without the memory", "with the memory"])
def test_the_memory_answers_what_the_intake_without_it_answers_up_to_a_second_late(redis_url, memory):
    Sales.connections, Sales.memory = [connect(redis_url) for _ in range(1 + CONTAINERS)], memory
    try:
        run_state_machine_as_test(
            Sales,
            settings=settings(
                max_examples=60,
                stateful_step_count=40,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )
    finally:
        for client in Sales.connections:
            client.close()
