"""What a coupon's document (``GET /coupons/{id}``) says about its sale: its state, the stock it
can still sell, the copies in flight. ``list``, ``show`` and ``watch`` all say it the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

Coupon = dict[str, Any]

NOT_OPEN, OPEN, SOLD_OUT, CLOSED, ENDED = "NOT OPEN", "OPEN", "SOLD OUT", "CLOSED", "ENDED"


def in_flight(coupon: Coupon) -> int:
    """Reserved in Redis, not yet persisted in PostgreSQL (a canceled copy whose user may not take
    it again stays reserved, and counts here too)."""
    return max(int(coupon["reserved"]) - int(coupon["issued"]), 0)


def stock_left(coupon: Coupon) -> int:
    """What the sale can still sell: the database's remaining copies less those in flight."""
    return max(int(coupon["remainingQuantity"]) - in_flight(coupon), 0)


def state(coupon: Coupon, now: datetime) -> str:
    """What a request for the coupon would be answered at ``now``, as a word: CLOSED (by its
    operators) first, then the window (NOT OPEN, ENDED), then the stock (SOLD OUT), else OPEN."""
    if coupon["closed"]:
        return CLOSED
    if now >= datetime.fromisoformat(coupon["issueEndsAt"]):
        return ENDED
    if now < datetime.fromisoformat(coupon["issueStartsAt"]):
        return NOT_OPEN
    if stock_left(coupon) == 0:
        return SOLD_OUT
    return OPEN


def moment(text: str | None) -> str:
    """An API time, short and in UTC (``2026-12-24 12:00Z``; seconds when it has them): what a
    table has room for."""
    if not text:
        return ""
    at = datetime.fromisoformat(text).astimezone(UTC)
    return at.strftime("%Y-%m-%d %H:%M:%SZ" if at.second else "%Y-%m-%d %H:%MZ")
