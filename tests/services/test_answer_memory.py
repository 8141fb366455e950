"""The intake container's memory of answers where it needs the real services, its clock
injected: a window that opens on Redis' clock within the second, a state lost under a remembered
answer, and the memory as the intake wires it (on by default; holders and keyed retries hear from
memory only what this container heard from Redis, at one round trip for the filter's misses).

That every change an operator or a client makes is answered within the second, and never sooner
than Redis itself would, is ``test_memory_differential.py``'s (random sales against a model, on
the real store); the memory's decisions are the unit tier's (tests/unit/domain/test_answer_memory.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest

from functions.intake import dependencies as intake_dependencies
from lua_redis.store import rebuild_key
from tests.clock import Clock
from tests.services.intake_support import create_coupon, issue, produces_under_way_have_ended
from tests.services.support import command_calls
from tests.services.test_operations import until_settled

ALMOST = 0.999  # seconds: still within what the memory may keep


@pytest.fixture
def clock(pipeline) -> Clock:
    """The intake container's memory runs on this clock; time passes only when the test says."""
    clock = Clock(time.monotonic())
    memory = intake_dependencies.wiring().service.memory
    assert memory is not None  # on by default
    memory.clock = clock
    return clock


def status(coupon_id: int, user_id: int, key: str | None = None) -> str:
    return str(issue(coupon_id, user_id, idempotency_key=key).body["status"])


def sold_out(pipeline) -> int:
    """A coupon of one copy, user 1's and persisted; user 2 has heard SOLD_OUT (the container
    remembers it)."""
    coupon_id = create_coupon(1)
    assert status(coupon_id, 1) == "SUCCESS"
    pipeline.run_worker()
    assert status(coupon_id, 2) == "SOLD_OUT"
    return coupon_id


def test_a_window_that_opens_is_never_answered_not_open_from_memory(pipeline, clock):
    """NOT_OPEN is kept until the window opens, if that is sooner than the second: asked at most
    0.6 s before the opening, it is gone 0.7 s later, on the memory's clock as on Redis'. A pause
    of the machine only makes the ask later; one that makes it miss the window tries a new coupon."""
    for _ in range(3):
        coupon_id = create_coupon(5, starts_in=timedelta(seconds=2))
        created = time.monotonic()  # the window opens at most 2 s from here
        time.sleep(max(0.0, created + 1.4 - time.monotonic()))
        if status(coupon_id, 1) == "NOT_OPEN":
            break
    else:
        pytest.fail("no ask reached Redis before its window opened")
    clock.now += 0.7  # less than the second: only the window's edge ends the memory
    time.sleep(max(0.0, created + 2.1 - time.monotonic()))
    assert status(coupon_id, 1) == "SUCCESS"


def test_a_lost_state_is_found_within_the_second_not_hidden_by_the_memory(pipeline, clock, redis_client):
    coupon_id = sold_out(pipeline)
    redis_client.flushall()
    clock.now += ALMOST
    assert status(coupon_id, 3) == "SOLD_OUT"  # remembered
    clock.now += 1 - ALMOST
    found = issue(coupon_id, 3)
    assert found.body["status"] in ("UNAVAILABLE", "SOLD_OUT")  # rebuilding, or rebuilt at once
    assert redis_client.exists(rebuild_key(coupon_id)) or found.body["status"] == "SOLD_OUT"
    produces_under_way_have_ended(redis_client, coupon_id)  # none left if it was rebuilt at once

    def settled(user: int) -> Callable[[], str]:
        def answer() -> str:
            clock.now += 1  # a client's retry comes later than the memory's second
            return status(coupon_id, user)

        return answer

    assert until_settled(settled(3)) == "SOLD_OUT"
    assert until_settled(settled(1)) == "DUPLICATE"


def test_while_sold_out_is_remembered_holders_hear_duplicate_and_keyed_retries_their_success(
    pipeline, clock, redis_client
):
    """From memory while this container remembers their success; from Redis once it forgot it
    (as a holder whose success another container answered does at once)."""
    coupon_id = create_coupon(2)
    first = issue(coupon_id, 1, idempotency_key="one")
    assert status(coupon_id, 2) == "SUCCESS"
    assert status(coupon_id, 3) == "SOLD_OUT"
    redis_client.config_resetstat()

    strangers = [status(coupon_id, user) for user in range(4, 24)]
    holder = status(coupon_id, 2)
    retried = issue(coupon_id, 1, idempotency_key="one")
    reused = status(coupon_id, 9, key="one")
    remembered_calls = command_calls(redis_client).get("evalsha")
    clock.now += 1
    holder_later = status(coupon_id, 2)
    retried_later = issue(coupon_id, 1, idempotency_key="one")

    assert strangers == ["SOLD_OUT"] * 20
    assert holder == holder_later == "DUPLICATE"
    assert (retried.status_code, retried.body) == (retried_later.status_code, retried_later.body)
    assert (retried.status_code, retried.body) == (first.status_code, first.body)
    assert reused == "KEY_REUSED"
    assert remembered_calls == 1  # the reused key: the filter holds it
    assert command_calls(redis_client).get("evalsha") == 3  # and, the second over, the holder and the retry
