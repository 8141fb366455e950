"""reserve and release on a real Valkey, one call at a time."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
import redis

from coupon_core.domain.records import MAX_BIGINT
from coupon_core.domain.reservations import IssueOutcome, ReleaseOutcome
from coupon_core.errors import InvalidInputError, StateUnavailableError
from local.testkit.redis_monitor import client_commands
from local.testkit.stores import WholeStore
from lua_redis.client import connect
from lua_redis.keys import meta_key, requests_key, reserved_key
from tests.services.support import HOUR_MS, command_calls, install, now_ms, open_coupon


def test_reserve_without_state_asks_for_initialisation_and_writes_nothing(store, redis_client):
    assert store.reserve(1, 7).outcome is IssueOutcome.STATE_MISSING
    assert redis_client.keys("*") == []


def test_reserve_succeeds_once_per_user_then_sells_out(store):
    install(store, total=2)
    before = now_ms()

    first = store.reserve(1, 10)
    again = store.reserve(1, 10)
    second = store.reserve(1, 11)
    late = store.reserve(1, 12)

    assert first.outcome is IssueOutcome.SUCCESS
    assert before - 5 <= first.reserved_at <= now_ms() + 5
    assert again.outcome is IssueOutcome.DUPLICATE
    assert again.reserved_at == first.reserved_at
    assert second.outcome is IssueOutcome.SUCCESS
    assert late.outcome is IssueOutcome.SOLD_OUT
    assert late.reserved_at is None
    assert store.reserved_count(1) == 2
    assert store.reservation_time(1, 12) is None


def test_duplicate_wins_over_sold_out(store):
    install(store, total=1)
    store.reserve(1, 10)
    assert store.reserve(1, 10).outcome is IssueOutcome.DUPLICATE


def test_coupons_are_independent(store):
    install(store, coupon_id=1, total=1)
    install(store, coupon_id=2, total=1)
    assert store.reserve(1, 10).outcome is IssueOutcome.SUCCESS
    assert store.reserve(2, 10).outcome is IssueOutcome.SUCCESS


def test_reserve_before_the_window_is_not_open_and_writes_nothing(store, redis_client):
    install(store, starts_in_ms=HOUR_MS)
    assert store.reserve(1, 10).outcome is IssueOutcome.NOT_OPEN
    assert store.reserved_count(1) == 0


def test_reserve_after_the_window_has_ended_and_writes_nothing(store, redis_client):
    install(store, starts_in_ms=-2 * HOUR_MS, lasts_ms=HOUR_MS)
    assert store.reserve(1, 10).outcome is IssueOutcome.ENDED
    assert store.reserved_count(1) == 0


def test_reservations_expire_with_the_coupon_state(store, redis_client):
    coupon = open_coupon(total=5)
    store.reconcile(coupon, {}, release_before=None)
    store.reserve(1, 10)
    assert redis_client.pexpiretime(reserved_key(1)) == coupon.expires_at
    assert redis_client.pexpiretime(meta_key(1)) == coupon.expires_at


def test_release_is_fenced_by_the_reservation_time_and_idempotent(store):
    install(store, total=1)
    held = store.reserve(1, 10)

    assert store.release(1, 10, held.reserved_at - 1) is ReleaseOutcome.STALE
    assert store.reservation_time(1, 10) == held.reserved_at
    assert store.release(1, 10, held.reserved_at) is ReleaseOutcome.RELEASED
    assert store.release(1, 10, held.reserved_at) is ReleaseOutcome.NOT_HELD
    assert store.reserve(1, 11).outcome is IssueOutcome.SUCCESS


def test_a_stale_dead_letter_does_not_free_a_newer_reservation(store):
    install(store, total=5)
    old = store.reserve(1, 10)
    store.release(1, 10, old.reserved_at)
    while (new := store.reserve(1, 10)).reserved_at == old.reserved_at:  # same millisecond
        store.release(1, 10, new.reserved_at)

    assert store.release(1, 10, old.reserved_at) is ReleaseOutcome.STALE
    assert store.reservation_time(1, 10) == new.reserved_at


def test_reserve_survives_script_flush(store, redis_client):
    install(store, total=5)
    assert store.reserve(1, 10).outcome is IssueOutcome.SUCCESS
    redis_client.script_flush()
    assert store.reserve(1, 11).outcome is IssueOutcome.SUCCESS
    redis_client.script_flush()
    assert store.release(1, 11, store.reservation_time(1, 11)) is ReleaseOutcome.RELEASED


def test_reserve_is_exactly_one_redis_command(store, redis_client):
    install(store, total=100)
    store.reserve(1, 1)  # the script is loaded by now
    redis_client.config_resetstat()
    outcomes: list[IssueOutcome] = []

    sent = client_commands(redis_client, lambda: outcomes.extend(store.reserve(1, u).outcome for u in (2, 3, 3, 4)))

    assert outcomes == [
        IssueOutcome.SUCCESS,
        IssueOutcome.SUCCESS,
        IssueOutcome.DUPLICATE,
        IssueOutcome.SUCCESS,
    ]
    assert sent == ["EVALSHA"] * 4
    calls = command_calls(redis_client)
    assert calls["evalsha"] == 4
    assert "script|load" not in calls
    assert "eval" not in calls


BAD_IDS = ["7", 7.0, 0, -1, MAX_BIGINT + 1, 2**64, True, None]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_a_release_refuses_bad_ids_before_redis(store, redis_client, bad):
    install(store, total=5)
    redis_client.config_resetstat()

    with pytest.raises(InvalidInputError, match="userId"):
        store.release(1, bad, 1)

    assert command_calls(redis_client) == {}


def test_bad_reservation_times_are_refused_before_redis(store, redis_client):
    redis_client.config_resetstat()
    for bad in ("1", 1.5, -1, MAX_BIGINT + 1):
        with pytest.raises(InvalidInputError, match="reservedAt"):
            store.release(1, 1, bad)
    assert command_calls(redis_client) == {}


def test_largest_ids_are_accepted(store):
    install(store, coupon_id=MAX_BIGINT, total=1)
    assert store.reserve(MAX_BIGINT, MAX_BIGINT).outcome is IssueOutcome.SUCCESS
    assert store.reservation_time(MAX_BIGINT, MAX_BIGINT) is not None


def test_unreachable_redis_raises_state_unavailable():
    closed = "redis://127.0.0.1:1/0"
    store = WholeStore(connect(closed, socket_timeout=0.5))
    with pytest.raises(StateUnavailableError) as caught:
        store.reserve(1, 1)
    assert isinstance(caught.value.__cause__, redis.ConnectionError)
    with pytest.raises(StateUnavailableError):
        store.release(1, 1, 1)


def test_the_same_request_sent_again_gets_its_own_success_another_request_is_duplicate(store, redis_client):
    install(store, total=1)
    request = uuid.uuid4()

    first = store.reserve(1, 10, request)
    again = store.reserve(1, 10, request)
    other = store.reserve(1, 10, uuid.uuid4())

    assert (first.outcome, again.outcome, other.outcome) == (IssueOutcome.SUCCESS,) * 2 + (IssueOutcome.DUPLICATE,)
    assert first.reserved_at == again.reserved_at == other.reserved_at
    assert store.reserved_count(1) == 1
    # read in one transaction, at one instant of the server's clock (a busy machine's two round
    # trips could be milliseconds apart)
    requests_ttl, reserved_ttl = (
        redis_client.pipeline(transaction=True).pttl(requests_key(1)).pttl(reserved_key(1)).execute()
    )
    assert 0 < requests_ttl <= reserved_ttl + 5


def test_a_release_forgets_the_request_so_that_its_copy_is_anyones_again(store, redis_client):
    install(store, total=1)
    request = uuid.uuid4()
    held = store.reserve(1, 10, request)

    assert store.release(1, 10, held.reserved_at) is ReleaseOutcome.RELEASED

    assert redis_client.hgetall(requests_key(1)) == {"0": "sentinel"}
    assert store.reserve(1, 11).outcome is IssueOutcome.SUCCESS


def test_the_server_clock_is_the_one_reservations_are_stamped_with(store):
    install(store)
    before = store.server_time_ms()
    reserved_at = store.reserve(1, 10).reserved_at
    assert before <= reserved_at <= store.server_time_ms()


@pytest.mark.parametrize("lost", [reserved_key(1), meta_key(1), requests_key(1)])
def test_the_loss_of_any_one_key_is_seen_by_the_next_reserve(store, redis_client, lost):
    """Eviction, a flush or a failover that drops one key: reserve asks for the state to be
    rebuilt instead of answering from what is left (an empty set would sell every copy again)."""
    install(store, total=5)
    assert store.reserve(1, 10).outcome is IssueOutcome.SUCCESS
    redis_client.delete(lost)

    assert not store.has_state(1)
    assert store.reserve(1, 10).outcome is IssueOutcome.STATE_MISSING
    assert store.reserve(1, 11).outcome is IssueOutcome.STATE_MISSING


def test_a_client_never_reads_a_late_reply_as_the_next_commands(redis_url, store):
    """A command that times out closes its connection, so its reply, arriving later, is not the
    answer to the next reserve."""
    install(store, total=1)
    client = connect(redis_url)  # the default socket timeout, 2 s
    with pytest.raises(redis.TimeoutError):
        client.blpop(["nothing-comes"], timeout=5)  # the server answers nil after 5 s
    assert WholeStore(client).reserve(1, 7).outcome is IssueOutcome.SUCCESS
    assert WholeStore(client).reserve(1, 8).outcome is IssueOutcome.SOLD_OUT
    client.close()


def test_a_client_reconnects_after_the_server_closed_its_connection(redis_url, redis_client, store):
    install(store, total=2)
    client = connect(redis_url)
    name = f"closed-{uuid.uuid4().hex[:8]}"
    client.client_setname(name)
    killed = 0
    for listed in redis_client.client_list():
        if listed["name"] == name:
            killed += redis_client.client_kill_filter(_id=listed["id"])
    assert killed == 1
    assert WholeStore(client).reserve(1, 7).outcome is IssueOutcome.SUCCESS  # retried once, on a new connection
    client.close()


def test_a_client_of_an_unreachable_server_raises_the_domains_error():
    with pytest.raises(StateUnavailableError, match="Redis unavailable"):
        WholeStore(connect("redis://127.0.0.1:1/0", socket_timeout=0.2)).reserve(1, 7)


def _server_ms(client: redis.Redis) -> int:
    seconds, micros = client.time()
    return seconds * 1000 + micros // 1000


@pytest.mark.parametrize(
    ("outcome", "setup"),
    [
        (IssueOutcome.SUCCESS, install),
        (IssueOutcome.DUPLICATE, lambda store: (install(store), store.reserve(1, 10))),
        (IssueOutcome.SOLD_OUT, lambda store: (install(store, total=1), store.reserve(1, 11))),
        (IssueOutcome.NOT_OPEN, lambda store: install(store, starts_in_ms=HOUR_MS)),
        (IssueOutcome.ENDED, lambda store: install(store, starts_in_ms=-2 * HOUR_MS, lasts_ms=HOUR_MS)),
        (IssueOutcome.KEY_REUSED, lambda store: (install(store), store.reserve(1, 11, idempotency_key="k"))),
        (IssueOutcome.CLOSED, lambda store: store.reconcile(
            dataclasses.replace(open_coupon(), closed=True), {}, release_before=None)),
        (IssueOutcome.STATE_MISSING, lambda store: None),
    ],
)  # fmt: skip
def test_every_answer_of_reserve_carries_the_time_redis_decided_it(store, redis_client, outcome, setup):
    """The measure of arrival order times a decision by Redis' clock, whatever the answer."""
    setup(store)
    before = _server_ms(redis_client)
    reservation = store.reserve(1, 10, idempotency_key="k")
    after = _server_ms(redis_client)

    assert reservation.outcome is outcome
    assert reservation.decided_at is not None
    assert before <= reservation.decided_at <= after
