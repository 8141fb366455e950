"""Coupons as the domain sees them: plain values, read from the catalog port (the operators'
inputs and pages are ``operations.py``'s)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from coupon_core.domain.ids import validate_id, validate_millis
from coupon_core.domain.records import to_millis
from coupon_core.errors import InvalidInputError


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


@dataclass(frozen=True)
class Validity:
    """How long an issued copy may be used: until ``until``, or ``days`` after its issue,
    whichever comes first; neither: for ever."""

    until: datetime | None = None
    days: int | None = None


@dataclass(frozen=True)
class Coupon:
    coupon_id: int
    name: str
    total_quantity: int
    remaining_quantity: int
    issue_starts_at: datetime
    issue_ends_at: datetime
    issued: int  # copies held: issued, used or expired (not canceled)
    validity: Validity = Validity()
    reissue_after_cancel: bool = False
    blocked: int = 0  # canceled copies whose users keep their reservation (no second take)
    closed: bool = False  # by an operator: requests answer CLOSED

    @property
    def redis_total(self) -> int:
        """Redis counts every reservation against the total, a blocked canceled one too: its copy
        went back to stock, so the total there is one higher for each."""
        return self.total_quantity + self.blocked

    def state(self, retention_ms: int) -> CouponState:
        """The Redis view of the coupon; its keys live ``retention_ms`` past the window's end."""
        ends_at = to_millis(self.issue_ends_at)
        return CouponState(
            coupon_id=self.coupon_id,
            total=self.redis_total,
            starts_at=to_millis(self.issue_starts_at),
            ends_at=ends_at,
            expires_at=ends_at + retention_ms,
            closed=self.closed,
        )


@dataclass(frozen=True)
class IssuedUsers:
    """A coupon and the users who hold a reservation by the database (issued, used, expired, and
    canceled where the coupon does not allow a second take), with their reservation times (ms)
    and the request ids that hold them; and, read in the same snapshot, every request the
    database has settled (``settled_requests``: issued in any state, canceled included, or with
    a recorded failure). A record of a settled request may still be read in flight (after the
    worker group's committed offsets, or by a reconcile that read the tail before the worker
    wrote it), yet the database's word on it is final."""

    coupon: Coupon
    reserved_at: dict[int, int]
    request_ids: dict[int, str] = field(default_factory=dict)
    settled_requests: frozenset[str] = frozenset()


@dataclass(frozen=True)
class UserRecord:
    """What the database knows of one user and one coupon: whether it was issued and where its
    life stands (``ISSUED``, ``USED``, ``CANCELED`` or ``EXPIRED``; an ISSUED copy past its
    expiry reads EXPIRED before the sweep marks it), and whether a request of the user failed."""

    issued: bool
    failed: bool
    life: str | None = None
