"""Helpers shared by the tests against the real services."""

from __future__ import annotations

import time

import redis

from coupon_core.domain.coupons import CouponState
from local.testkit.stores import WholeStore

HOUR_MS = 3_600_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def open_coupon(
    coupon_id: int = 1, total: int = 10, *, starts_in_ms: int = -HOUR_MS, lasts_ms: int = 2 * HOUR_MS
) -> CouponState:
    """A coupon whose window opens ``starts_in_ms`` from now (negative: already open)."""
    starts_at = now_ms() + starts_in_ms
    ends_at = starts_at + lasts_ms
    return CouponState(coupon_id, total, starts_at, ends_at, expires_at=ends_at + 24 * HOUR_MS)


def install(store: WholeStore, **kwargs: int) -> None:
    """An open coupon's state in Redis, no one holding a copy (``kwargs``: ``open_coupon``'s)."""
    store.reconcile(open_coupon(**kwargs), {}, release_before=None)


def command_calls(client: redis.Redis) -> dict[str, int]:
    """Calls per command since the last CONFIG RESETSTAT, leaving out INFO and CONFIG themselves."""
    stats = client.info("commandstats")
    calls = {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}
    return {name: count for name, count in calls.items() if not name.startswith(("info", "config"))}
