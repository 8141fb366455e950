"""The values the intake exchanges with its reservation store (``lua_redis.issue_store.IssueStore``):
what a reserve answered (an ``IssueOutcome``, the one outcome of an issue request from the script
to the HTTP answer), what a missing state came to, what a release did. A coupon's state in Redis
and what a reconcile changed are ``coupons.py``'s."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class IssueOutcome(StrEnum):
    """An issue request's outcome, the one type from ``reserve.lua``'s codes (mapped to it in one
    table, ``lua_redis.issue_store.RESERVE_CODES``) to the HTTP answer and the metric of each: a table
    keyed on it that misses a member fails at import (``functions/http_api/answers.py``)."""

    SUCCESS = "SUCCESS"
    DUPLICATE = "DUPLICATE"
    SOLD_OUT = "SOLD_OUT"
    NOT_OPEN = "NOT_OPEN"
    ENDED = "ENDED"
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"
    UNAVAILABLE = "UNAVAILABLE"  # nothing is reserved: retry
    UNCONFIRMED = "UNCONFIRMED"  # reserved, and the record may be in Kafka: ask the status route
    KEY_REUSED = "KEY_REUSED"  # the Idempotency-Key was used for another request of the coupon
    CLOSED = "CLOSED"  # an operator closed the coupon
    STATE_MISSING = "STATE_MISSING"  # reserve's: no state in Redis; the service has it built and never answers it


STATE_BUILD_TIMEOUT_S = 8  # a state build's bound: the intake waits this long for its builder,
# within its own 10 s, and the build reads Kafka for at most half of it


class MissingState(StrEnum):
    """What a coupon's state that reserve found missing comes to, from the registry of coupons
    to the builder's build: the one type of that path, answered by the intake
    (``issuing.IssueService``): COUPON_NOT_FOUND and ENDED as those outcomes, BUILDING as 503."""

    BUILD = "BUILD"  # the registry: its state lives, or the id cannot be ruled out: this caller has it built
    READY = "READY"  # the builder: the state is built, reserve again
    BUILDING = "BUILDING"  # being built by another caller, or waiting out a loss: nothing reserved, retry
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"
    ENDED = "ENDED"  # its state has expired


class HoldersFilter(Protocol):
    """Who may hold a copy of a sold-out coupon, read in the container (``lua_redis.holders``)."""

    def may_hold(self, user_id: int, idempotency_key: str) -> bool:
        """False only if the user holds no copy and the key (``""``: none) took none; a false
        True is allowed (the request then asks Redis), a false False never."""
        ...


@dataclass(frozen=True)
class Reservation:
    """The answer of one reserve (the intake's ``issuing.IssueReservations`` port).

    ``reserved_at`` is the reservation time in epoch ms (the server's clock) for SUCCESS, and
    the time of the existing reservation for DUPLICATE; ``None`` otherwise.

    ``stands_ms`` > 0: how long the answer holds as the state stands (until the window's next
    edge), for every caller (NOT_OPEN, ENDED, CLOSED, and SOLD_OUT for the callers ``holders``
    clears) or for this caller, its user and its key (SUCCESS, DUPLICATE, KEY_REUSED). 0: not
    to be kept. The intake's memory keeps such an answer for at most a second
    (``issuing.AnswerMemory``).

    ``decided_at``: when the store decided, in epoch ms on its clock (Redis' ``TIME``), the
    moment the measure of arrival order takes for a decision (docs/design.md, Arrival order).
    """

    outcome: IssueOutcome
    reserved_at: int | None = None
    stands_ms: int = 0
    holders: HoldersFilter | None = None
    decided_at: int | None = None


class ReleaseOutcome(StrEnum):
    """What a fenced release did (``release.lua``'s codes, mapped by the store)."""

    RELEASED = "RELEASED"
    NOT_HELD = "NOT_HELD"
    STALE = "STALE"  # the user holds a newer reservation, left alone
