"""The intake container's memory of answers on the real services, its clock injected: every change
an operator or a client makes is answered within the contract's second, and never sooner than
Redis itself would answer it; a holder and a keyed retry hear from memory only what this
container heard from Redis, and a holder it does not know asks Redis."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from functions.intake import dependencies as intake_dependencies
from lua_redis.store import rebuild_key
from tests.clock import Clock
from tests.services.intake_support import call, create_coupon, issue, produces_under_way_have_ended
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


def sold_out(pipeline, *, worker: bool = False) -> int:
    """A coupon of one copy, user 1's; user 2 has heard SOLD_OUT (the container remembers it)."""
    coupon_id = create_coupon(1)
    assert status(coupon_id, 1) == "SUCCESS"
    if worker:
        pipeline.run_worker()
    assert status(coupon_id, 2) == "SOLD_OUT"
    return coupon_id


def one_second_later(clock: Clock, coupon_id: int, user_id: int, remembered: str, then: str) -> None:
    """Until the second is over the container may answer what it remembers; then, what Redis says."""
    clock.now += ALMOST
    assert status(coupon_id, user_id) == remembered
    clock.now += 1 - ALMOST
    assert status(coupon_id, user_id) == then


def top_up(coupon_id: int) -> None:
    assert call("POST", f"/coupons/{coupon_id}/top-up", {"copies": 1}).status_code == 200


def test_a_top_up_is_sold_within_the_second(pipeline, clock):
    coupon_id = sold_out(pipeline)
    top_up(coupon_id)
    one_second_later(clock, coupon_id, 3, remembered="SOLD_OUT", then="SUCCESS")


def test_a_canceled_copy_is_sold_again_within_the_second(pipeline, clock):
    coupon_id = sold_out(pipeline, worker=True)
    canceled = call("POST", f"/coupons/{coupon_id}/issues/1/cancel")
    assert (canceled.status_code, canceled.body["status"]) == (200, "CANCELED")
    one_second_later(clock, coupon_id, 2, remembered="SOLD_OUT", then="SUCCESS")


def test_a_close_is_answered_within_the_second_and_at_once_to_a_holder(pipeline, clock):
    coupon_id = sold_out(pipeline)
    assert call("POST", f"/coupons/{coupon_id}/close").status_code == 200
    one_second_later(clock, coupon_id, 3, remembered="SOLD_OUT", then="CLOSED")


def test_a_request_the_memory_cannot_answer_asks_redis_and_the_container_keeps_what_it_hears(pipeline, clock):
    coupon_id = sold_out(pipeline)
    assert call("POST", f"/coupons/{coupon_id}/close").status_code == 200
    clock.now += ALMOST
    assert status(coupon_id, 3) == "SOLD_OUT"  # remembered
    assert status(coupon_id, 1) == "DUPLICATE"  # the holder's own answer, remembered since its success
    assert status(coupon_id, 1, key="fresh") == "CLOSED"  # a key the memory does not know asks Redis
    assert status(coupon_id, 3) == "CLOSED"  # and the container keeps that, fresher


def test_a_reopen_is_answered_within_the_second(pipeline, clock):
    coupon_id = create_coupon(5)
    assert call("POST", f"/coupons/{coupon_id}/close").status_code == 200
    assert status(coupon_id, 1) == "CLOSED"
    assert call("POST", f"/coupons/{coupon_id}/reopen").status_code == 200
    one_second_later(clock, coupon_id, 1, remembered="CLOSED", then="SUCCESS")


@pytest.mark.parametrize(("starts_in", "refused"), [(timedelta(hours=1), "NOT_OPEN"), (timedelta(hours=-3), "ENDED")])
def test_a_moved_window_is_answered_within_the_second(pipeline, clock, starts_in, refused):
    coupon_id = create_coupon(5, starts_in=starts_in)
    assert status(coupon_id, 1) == refused
    now = datetime.now(UTC)
    window = {
        "issueStartsAt": (now - timedelta(minutes=1)).isoformat(),
        "issueEndsAt": (now + timedelta(hours=1)).isoformat(),
    }
    assert call("PATCH", f"/coupons/{coupon_id}", window).status_code == 200
    one_second_later(clock, coupon_id, 1, remembered=refused, then="SUCCESS")


def test_a_window_that_opens_is_never_answered_not_open_from_memory(pipeline, clock):
    """NOT_OPEN is kept until the window opens, if that is sooner than the second: asked 0.6 s
    before the opening, it is gone 0.7 s later, on the memory's clock as on Redis'."""
    asked_before = time.monotonic()
    coupon_id = create_coupon(5, starts_in=timedelta(seconds=2))  # opens 2 s after asked_before, or later
    time.sleep(max(0.0, asked_before + 1.4 - time.monotonic()))
    assert status(coupon_id, 1) == "NOT_OPEN"
    clock.now += 0.7  # less than the second: only the window's edge ends the memory
    time.sleep(max(0.0, asked_before + 2.1 - time.monotonic()))
    assert status(coupon_id, 1) == "SUCCESS"


def test_a_lost_state_is_found_within_the_second_not_hidden_by_the_memory(pipeline, clock, redis_client):
    coupon_id = sold_out(pipeline, worker=True)
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
