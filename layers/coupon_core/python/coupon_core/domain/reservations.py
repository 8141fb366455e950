"""The values the domain exchanges with its reservation store (the ``Reservations`` port, which
``lua_redis.store.ReservationStore`` implements on Redis): what a reserve answered (an
``IssueOutcome``, the one outcome of an issue request from the script to the HTTP answer), a
coupon's state, what a release did, what a reconcile changed."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from coupon_core.domain.records import validate_id, validate_millis
from coupon_core.errors import InvalidInputError


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
    """The answer of one reserve (the ``Reservations`` port).

    ``reserved_at`` is the reservation time in epoch ms (the server's clock) for SUCCESS, and
    the time of the existing reservation for DUPLICATE; ``None`` otherwise.

    ``stands_ms`` > 0: how long the answer holds as the state stands (until the window's next
    edge), for every caller (NOT_OPEN, ENDED, CLOSED, and SOLD_OUT for the callers ``holders``
    clears) or for this caller, its user and its key (SUCCESS, DUPLICATE, KEY_REUSED). 0: not
    to be kept. The intake's memory keeps such an answer for at most a second
    (``issuing.AnswerMemory``).
    """

    outcome: IssueOutcome
    reserved_at: int | None = None
    stands_ms: int = 0
    holders: HoldersFilter | None = None


class ReleaseOutcome(StrEnum):
    """What a fenced release did (``release.lua``'s codes, mapped by the store)."""

    RELEASED = "RELEASED"
    NOT_HELD = "NOT_HELD"
    STALE = "STALE"  # the user holds a newer reservation, left alone


@dataclass(frozen=True)
class CouponState:
    """What Redis must know of a coupon to answer reserve: its quantity, its issue window, and
    whether an operator closed it.

    ``expires_at`` (epoch ms) is when the coupon's keys expire: the end of the window plus a
    retention the caller chooses, long enough for late dead letters and reconciles.
    """

    coupon_id: int
    total: int
    starts_at: int
    ends_at: int
    expires_at: int
    closed: bool = False

    def __post_init__(self) -> None:
        validate_id("couponId", self.coupon_id)
        validate_id("totalQuantity", self.total)
        validate_millis("startsAt", self.starts_at)
        validate_millis("endsAt", self.ends_at)
        validate_millis("expiresAt", self.expires_at)
        if self.ends_at <= self.starts_at:
            raise InvalidInputError("endsAt must be after startsAt")
        if self.expires_at < self.ends_at:
            raise InvalidInputError("expiresAt must not be before endsAt")

    def is_open(self, now_ms: float) -> bool:
        """Whether the issue window is open at ``now_ms``, as ``reserve.lua`` decides it."""
        return self.starts_at <= now_ms < self.ends_at


@dataclass(frozen=True)
class ReconcileChanges:
    """What one reconcile changed in Redis.

    ``installed`` is true when the state was missing and was rebuilt from the holders;
    ``added`` counts holders put back; ``deferred`` holders not added back because the set was
    full (a later run adds them once dead letters have released their places); ``stray``
    members that hold no copy (released now if old enough, else left for a later run);
    ``reserved`` is the final count.
    """

    coupon_id: int
    installed: bool
    added: int
    released: int
    deferred: int
    stray: int
    reserved: int
