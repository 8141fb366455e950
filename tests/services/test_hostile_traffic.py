"""The traffic a flash sale really gets, through the intake on the real servers, counted: how
often a request invokes the builder (the function that holds the database), served by Lambda's
Invoke API on the loopback, and how many commands the intake sends Redis (as the server's
MONITOR sees them). One container, as Lambda runs it: one request at a time.

Once the fleet knows which coupons exist (the registry of coupons is complete), an id that names
nothing, again and again or a new one each time, and a coupon long ended, never reach the
builder; a holder's clicks after its first are answered from the container's memory; and a
live coupon whose state is lost is still rebuilt on its first request while a script floods the
intake with made-up ids (docs/design.md, What a public request can cost)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import redis

from functions.intake import dependencies as intake_dependencies
from local.testkit.lambda_service import LambdaService
from local.testkit.redis_monitor import client_commands
from lua_redis.keys import reserved_key
from tests.services.intake_support import after_a_second, create_coupon, issue, produces_under_way_have_ended
from tests.services.pipeline_support import SCHEDULE_EVENT, rebuild
from tests.services.test_rebuild import issue_once_rebuilt

REQUESTS = 300


class Counted:
    """The builder's invocations, and the commands clients sent Redis (not those scripts ran:
    round trips), as MONITOR saw them, while ``action`` runs, and the seconds it took (a
    remembered answer lasts one). Nothing but the intake talks to Redis meanwhile, unless the
    builder was invoked: each test says which it was."""

    def __init__(self, lambda_service: LambdaService, redis_client: redis.Redis, action: Callable[[], Any]) -> None:
        invoked, results, started = len(lambda_service.invocations), [], time.monotonic()
        self.round_trips = len(client_commands(redis_client, lambda: results.append(action())))
        self.seconds = time.monotonic() - started
        self.result = results[0]
        self.invocations = lambda_service.invocations[invoked:]  # (function, event) each

    def per_second(self, trips: int) -> int:
        """``trips`` for each second the action took, whole or begun: the most a memory that is
        refreshed once a second asks for (a busy machine's 300 requests can take more than one)."""
        return trips * (1 + int(self.seconds))


@pytest.fixture
def known(pipeline) -> int:
    """A coupon on sale, the registry loaded by a scheduled run, and the intake warm: its
    connections open and its scripts loaded. The coupon's id."""
    coupon_id = create_coupon(10)
    rebuild(SCHEDULE_EVENT)
    assert issue(coupon_id, 1).body["status"] == "SUCCESS"
    assert issue(coupon_id + 3_000_000, 1).body["status"] == "COUPON_NOT_FOUND"  # the registry's script
    return coupon_id


def statuses(replies: list[Any]) -> set[tuple[int, str]]:
    return {(reply.status_code, reply.body["status"]) for reply in replies}


def test_one_unknown_id_asked_again_and_again_costs_no_invoke_and_nearly_no_round_trip(
    known, lambda_service, redis_client
):
    unknown = known + 1_000_000
    counted = Counted(lambda_service, redis_client, lambda: [issue(unknown, user) for user in range(1, REQUESTS + 1)])

    assert statuses(counted.result) == {(404, "COUPON_NOT_FOUND")}
    assert counted.invocations == []
    assert 2 <= counted.round_trips <= counted.per_second(2)  # reserve and the registry, once a second


def test_a_new_unknown_id_each_time_costs_no_invoke(known, lambda_service, redis_client):
    ids = range(known + 1_000_000, known + 1_000_000 + REQUESTS)
    counted = Counted(lambda_service, redis_client, lambda: [issue(unknown, 1) for unknown in ids])

    assert statuses(counted.result) == {(404, "COUPON_NOT_FOUND")}
    assert counted.invocations == []
    assert counted.round_trips == 2 * REQUESTS  # reserve and the registry: nothing to remember them by


def test_a_coupon_ended_last_week_and_never_asked_costs_no_invoke(known, lambda_service, redis_client):
    ended = create_coupon(10, starts_in=timedelta(days=-9), lasts=timedelta(days=1))  # its state expired with it
    counted = Counted(lambda_service, redis_client, lambda: [issue(ended, user) for user in range(1, REQUESTS + 1)])

    assert statuses(counted.result) == {(409, "ENDED")}
    assert counted.invocations == []
    assert 2 <= counted.round_trips <= counted.per_second(2)  # reserve and the registry, once a second


def test_a_holders_clicks_after_the_first_are_answered_from_memory(known, lambda_service, redis_client):
    coupon_id = create_coupon(1)
    first = issue(coupon_id, 7, idempotency_key="its-click")
    assert first.status_code == 202

    counted = Counted(
        lambda_service,
        redis_client,
        lambda: (
            [issue(coupon_id, 7) for _ in range(REQUESTS)],
            [issue(coupon_id, 7, idempotency_key="its-click") for _ in range(REQUESTS)],
        ),
    )

    clicks, retries = counted.result
    assert statuses(clicks) == {(409, "DUPLICATE")}
    assert {(reply.status_code, tuple(reply.body.items())) for reply in retries} == {
        (202, tuple(first.body.items()))
    }  # its own SUCCESS, the same request id and time
    assert counted.round_trips / (2 * REQUESTS) <= 0.05
    assert counted.invocations == []


def test_a_lost_state_is_rebuilt_on_its_first_request_while_a_flood_of_unknown_ids_arrives(
    known, lambda_service, redis_client
):
    """Another container answers made-up ids as fast as it can; the live coupon's lost state is
    asked of the builder by the first request after the loss, and rebuilt once the produces
    under way have ended; the flood asks the builder nothing."""
    flooding = intake_dependencies.wiring.__wrapped__()  # a second container, its own connections
    stop, flood_answers = threading.Event(), set()

    def flood() -> None:
        made_up = known + 2_000_000
        while not stop.is_set():
            made_up += 1
            flood_answers.add(flooding.service.issue(made_up, 1).outcome.value)

    flooder = threading.Thread(target=flood, daemon=True)
    flooder.start()
    try:
        redis_client.delete(reserved_key(known))  # the coupon's state is lost mid-sale
        after_a_second()

        def lost_then_asked_again() -> tuple[Any, bool, Any]:
            first = issue(known, 2)  # starts the wait for produces under way
            return first, produces_under_way_have_ended(redis_client, known), issue_once_rebuilt(known, 1)

        counted = Counted(lambda_service, redis_client, lost_then_asked_again)
    finally:
        stop.set()
        flooder.join()
        flooding.publisher.close()
        flooding.client.close()

    first, waited, holder = counted.result
    assert (first.status_code, first.body["status"]) == (503, "UNAVAILABLE")  # the wait for produces under way
    assert waited
    assert (holder.status_code, holder.body["status"]) == (409, "DUPLICATE")  # rebuilt with its holder
    assert len(counted.invocations) >= 1
    assert counted.invocations == [("builder", {"stateMissing": known})] * len(counted.invocations)
    assert flood_answers == {"COUPON_NOT_FOUND"}
