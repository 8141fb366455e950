"""Invariants I1 to I4 (docs/design.md), checked against PostgreSQL and Redis, and I5 through
whichever way a caller reaches the API and reads the state.

Used by the demo's report and by the integration tests, once the pipeline has drained and a
reconcile has run; I5 also by chaos and the rehearsal's audit from outside. With cancels and
top-ups: a canceled copy went back to stock (someone else may hold it now), a top-up grew the
total; what never changes is that the copies held (issued, used or expired, not canceled) and
the reservations that count against them never exceed the total, and Redis ends as the
database says.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import redis
from sqlalchemy import Engine, text

from coupon_client.api_client import ApiClient
from coupon_client.retry import Claim, Kind
from local.testkit.bad_requests import BadRequest, bad_requests
from local.testkit.tables import row_counts
from lua_redis.keys import reserved_key


@dataclass(frozen=True)
class Observed:
    total: int
    remaining: int
    issued_users: set[int]  # holding a copy: issued, used or expired
    issued_requests: set[str]  # every persisted request, canceled ones too
    failed_requests: set[str]  # recorded failures whose reservation was released
    reserved_users: set[int]
    canceled_users: set[int]
    reissue_after_cancel: bool

    @property
    def blocking_users(self) -> set[int]:
        """Canceled users whose reservation stays to keep them from a second take."""
        return set() if self.reissue_after_cancel else self.canceled_users


def held_counts(engine: Engine, client: redis.Redis, coupon_id: int) -> tuple[int, int]:
    """(reservations in Redis, users holding an issue in PostgreSQL): what converges after a sale."""
    observed = observe(engine, client, coupon_id)
    return len(observed.reserved_users), len(observed.issued_users)


def observe(engine: Engine, client: redis.Redis, coupon_id: int) -> Observed:
    with engine.connect() as connection:
        issues = connection.execute(
            text("SELECT user_id, request_id, status FROM coupon_issues WHERE coupon_id = :c"), {"c": coupon_id}
        ).all()
        failures = connection.execute(
            text("SELECT request_id FROM coupon_issue_failures WHERE coupon_id = :c AND released"), {"c": coupon_id}
        ).all()
        total, remaining, reissue = connection.execute(
            text("SELECT total_quantity, remaining_quantity, reissue_after_cancel FROM coupons WHERE id = :c"),
            {"c": coupon_id},
        ).one()
    return Observed(
        total=total,
        remaining=remaining,
        issued_users={row.user_id for row in issues if row.status != "CANCELED"},
        canceled_users={row.user_id for row in issues if row.status == "CANCELED"},
        reissue_after_cancel=reissue,
        issued_requests={str(row.request_id) for row in issues},
        failed_requests={str(row.request_id) for row in failures},
        reserved_users={int(str(user)) for user in client.zrange(reserved_key(coupon_id), 1, "+inf", byscore=True)},
    )


def successes_of(claims: Iterable[tuple[int, Claim]]) -> dict[str, int]:
    """The request id of each SUCCESS among ``(user, claim)`` pairs, with its user: what :func:`check` takes."""
    return {claim.reply.body["requestId"]: user for user, claim in claims if claim.kind is Kind.SUCCESS}


def _settled_once(observed: Observed, request_id: str) -> bool:
    """Exactly one of: issued by this very request, or recorded as failed (and released).

    Nothing else settles a SUCCESS: not another request of the same user (a publish that may have
    reached Kafka answers UNCONFIRMED and keeps its reservation, so the user's retry is DUPLICATE,
    never a second SUCCESS whose record would be absorbed).
    """
    return (request_id in observed.issued_requests) + (request_id in observed.failed_requests) == 1


def check(observed: Observed, successes: dict[str, int]) -> dict[str, bool]:
    """Each invariant with whether it held; ``successes`` maps each SUCCESS request id to its user."""
    settled = [_settled_once(observed, rid) for rid in successes]
    counted = observed.reserved_users - observed.blocking_users  # reservations that hold a copy
    canceled = len(observed.canceled_users)
    return {
        f"I1 no oversell: {len(observed.issued_users)} held, {len(counted)} reserved, {len(successes)} SUCCESS "
        f"answers ({canceled} canceled and sold again at most), total {observed.total}": (
            max(len(observed.issued_users), len(counted)) <= observed.total
            and len(successes) <= observed.total + canceled
        ),
        "I2 one per user: no user has two SUCCESS answers": len(set(successes.values())) == len(successes),
        f"I3 nothing lost: each of {len(successes)} SUCCESS answers is exactly one of an issue or a "
        "released, recorded failure": all(settled),
        "I4 convergence: Redis reservations equal the holders (and the canceled users they block), "
        "remaining = total - held": (
            observed.reserved_users == observed.issued_users | observed.blocking_users
            and observed.remaining == observed.total - len(observed.issued_users)
        ),
    }


def stored_state(engine: Engine, client: redis.Redis, coupon_id: int) -> tuple[object, ...]:
    """What a request can change, as I5 compares it: the rows of every table that requests write,
    and the coupon's reservations in Redis with their times."""
    return row_counts(engine), client.zrange(reserved_key(coupon_id), 1, "+inf", byscore=True, withscores=True)


def bad_input_changes_nothing(
    send: Callable[[BadRequest], tuple[int, Any]], state: Callable[[], object], coupon_id: int, *, settle_s: float
) -> bool:
    """I5: each of :func:`~local.testkit.bad_requests.bad_requests` (about ``coupon_id``), sent by
    ``send`` (its status code and body back), is answered 4xx with a JSON error, and ``state``
    reads the same before and ``settle_s`` after them (what a bad request set off would have
    landed by then: the pipeline's asynchronous half)."""
    before = state()
    answers = [send(request) for request in bad_requests(coupon_id)]
    refused = all(400 <= status < 500 and isinstance(body, dict) for status, body in answers)
    time.sleep(settle_s)
    return refused and state() == before


def sent_through(api: ApiClient) -> Callable[[BadRequest], tuple[int, Any]]:
    """How :func:`bad_input_changes_nothing` sends a bad request through a deployed API's URL."""

    def send(bad: BadRequest) -> tuple[int, Any]:
        answer = api.request(bad.method, bad.path, bad.body, raw=None if bad.raw is None else bad.raw.encode())
        return answer.status_code, answer.body

    return send
