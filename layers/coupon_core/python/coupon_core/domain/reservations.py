"""What the domain keeps in its reservation store (the ``Reservations`` port, which
``lua_redis.ReservationStore`` implements on Redis): a coupon's state, what a release did, what a
reconcile changed. The answer of a reserve is the issuing's own (``issuing.Reservation``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from coupon_core.domain.ids import validate_id, validate_millis
from coupon_core.errors import InvalidInputError


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
