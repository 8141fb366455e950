"""What a shop's page may know of a sale before and while it clicks: the sale's state, its
window, the copies left and the server's time, read from Redis and never from the database.

A page polls it (the coupons function's ``GET /coupons/{couponId}/availability``, behind an edge
cache), so a read costs at most one Redis round trip per container per coupon per
:data:`AVAILABILITY_MS`: :class:`AvailabilityService` keeps each coupon's last read that long,
and answers from it on the server's clock carried forward on the container's own (so a page's
countdown reads the server's time, and a sale that opens between two reads reads open). The
copies left are Redis' count at the read (``as_of``), never the database's, which lags it: a
count at most that old, never more copies than Redis held then.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from coupon_core.errors import StateUnavailableError

AVAILABILITY_MS = 1000  # a read answers for at most this long; the edge caches an answer as long
KEPT_COUPONS = 1024  # coupons a container keeps a read of at once, the oldest read forgotten first
KEPT_UNREAD = 4096  # ids without a sale kept at once, apart: ids a script makes up push out only each other


class SaleState(StrEnum):
    """A sale as a page shows it, with ``reserve.lua``'s precedence: closed, not open and ended
    before sold out."""

    NOT_OPEN = "NOT_OPEN"
    OPEN = "OPEN"
    SOLD_OUT = "SOLD_OUT"
    ENDED = "ENDED"
    CLOSED = "CLOSED"


class NoSale(StrEnum):
    """Why a coupon has no sale to read: no such coupon, a state expired long after its window
    (ENDED), or a state missing that only the claim route builds (UNAVAILABLE: read again later;
    the registry still loading is the same)."""

    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"
    ENDED = "ENDED"
    UNAVAILABLE = "UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class Sale:
    """A coupon's sale as Redis held it at ``read_at`` (epoch ms, Redis' clock)."""

    read_at: int
    total: int
    starts_at: int
    ends_at: int
    closed: bool
    taken: int

    @property
    def left(self) -> int:
        """Copies not reserved at the read (none below zero: an operator may lower the total)."""
        return max(0, self.total - self.taken)

    def state_at(self, now: int) -> SaleState:
        if self.closed:
            return SaleState.CLOSED
        if now < self.starts_at:
            return SaleState.NOT_OPEN
        if now >= self.ends_at:
            return SaleState.ENDED
        return SaleState.SOLD_OUT if self.left == 0 else SaleState.OPEN


@dataclass(frozen=True, slots=True)
class Unread:
    """A coupon without a sale to read, and Redis' time when that was found."""

    why: NoSale
    read_at: int


class SaleReader(Protocol):
    """Reads a coupon's sale from Redis (``lua_redis.availability.RedisSaleReader``) in one round
    trip, or two for a coupon without a state (the registry of coupons says why); raises
    ``StateUnavailableError`` when Redis cannot be reached."""

    def read(self, coupon_id: int) -> Sale | Unread: ...


@dataclass(frozen=True, slots=True)
class Availability:
    """The answer to a page: the sale's ``state`` at ``server_time`` (epoch ms, Redis' clock),
    and the sale as read (``None`` for a coupon whose state expired long ago: ENDED)."""

    coupon_id: int
    state: SaleState
    server_time: int
    sale: Sale | None


@dataclass(frozen=True, slots=True)
class _Read:
    found: Sale | Unread
    at: float  # on the service's clock


class AvailabilityService:
    """Answers availability reads, each coupon from one Redis read per ``ms`` at most (on
    ``clock``, monotonic seconds; tests move it), ``coupons`` reads of sales kept at once and
    ``unread`` of ids without one, apart.

    A read is timed when it returns: Redis' clock is carried forward from then, so the server's
    time an answer gives is behind Redis' by at most the read's own round trip, never ahead (a
    page that counts down on it opens late, never early)."""

    def __init__(
        self,
        reader: SaleReader,
        *,
        ms: int = AVAILABILITY_MS,
        clock: Callable[[], float] = time.monotonic,
        coupons: int = KEPT_COUPONS,
        unread: int = KEPT_UNREAD,
    ) -> None:
        if not 0 <= ms <= AVAILABILITY_MS:
            raise ValueError(f"a read answers for 0 to {AVAILABILITY_MS} ms, not {ms}")
        self._reader = reader
        self._seconds = ms / 1000
        self._clock = clock
        self._bounds = coupons, unread
        self._reads: dict[int, _Read] = {}
        self._unread: dict[int, _Read] = {}

    def availability(self, coupon_id: int, *, fresh: bool = False) -> Availability | None:
        """The coupon's availability now; ``None`` if no such coupon exists. Raises
        ``StateUnavailableError`` when Redis cannot say (unreachable, or the state is being rebuilt).
        ``fresh``: read Redis whatever is kept (for the edge, which keeps the answer a second itself)."""
        now = self._clock()
        kept = self._reads.get(coupon_id) or self._unread.get(coupon_id)
        if fresh or kept is None or now - kept.at >= self._seconds:
            found = self._reader.read(coupon_id)
            now = self._clock()
            kept = _Read(found, now)
            self._reads.pop(coupon_id, None)
            self._unread.pop(coupon_id, None)
            table, bound = (
                (self._reads, self._bounds[0]) if isinstance(found, Sale) else (self._unread, self._bounds[1])
            )
            if len(table) >= bound:
                del table[next(iter(table))]
            table[coupon_id] = kept
        found = kept.found
        server_time = found.read_at + round((now - kept.at) * 1000)
        if isinstance(found, Sale):
            return Availability(coupon_id, found.state_at(server_time), server_time, found)
        if found.why is NoSale.COUPON_NOT_FOUND:
            return None
        if found.why is NoSale.ENDED:
            return Availability(coupon_id, SaleState.ENDED, server_time, None)
        raise StateUnavailableError(f"the state of coupon {coupon_id} is being built: read again shortly")
