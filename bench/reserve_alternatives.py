"""What the Lua reserve is measured against: the ways one might do it without a script.

Each factory builds a reserver for one process (see ``local.testkit.flash_sale``). They check the same
things as ``reserve.lua`` (window, duplicate, quantity) on the same keys, so the only
difference is how the check and the write are tied together.
"""

from __future__ import annotations

import time

import redis

from local.testkit.flash_sale import Reserver
from lua_redis.client import connect
from lua_redis.keys import issue_lock_name, meta_key, reserved_key
from lua_redis.lock import held_lock


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _decide(client: redis.Redis, coupon_id: int, user_id: int) -> tuple[str | None, int]:
    """Read the state with separate commands; return an outcome, or None if the user may take one."""
    total, starts_at, ends_at = (
        str(value) for value in client.hmget(meta_key(coupon_id), "total", "startsAt", "endsAt")
    )
    now = _now_ms()
    if now < int(starts_at):
        return "NOT_OPEN", now
    if now >= int(ends_at):
        return "ENDED", now
    if client.zscore(reserved_key(coupon_id), user_id) is not None:
        return "DUPLICATE", now
    if client.zcount(reserved_key(coupon_id), 1, "+inf") >= int(total):
        return "SOLD_OUT", now
    return None, now


def _check_then_write(client: redis.Redis, coupon_id: int, user_id: int) -> str:
    outcome, now = _decide(client, coupon_id, user_id)
    if outcome:
        return outcome
    client.zadd(reserved_key(coupon_id), {str(user_id): now})
    return "SUCCESS"


def naive_reserver(redis_url: str) -> Reserver:
    """Check, then write, in separate round trips: fast, and it oversells."""
    client = connect(redis_url)
    return lambda coupon_id, user_id: _check_then_write(client, coupon_id, user_id)


def watch_reserver(redis_url: str) -> Reserver:
    """Optimistic: WATCH the keys, check, MULTI/EXEC the write, start again on a conflict."""
    client = connect(redis_url)

    def reserve(coupon_id: int, user_id: int) -> str:
        while True:
            with client.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(reserved_key(coupon_id), meta_key(coupon_id))
                    outcome, now = _decide(pipe, coupon_id, user_id)
                    if outcome:
                        return outcome
                    pipe.multi()
                    pipe.zadd(reserved_key(coupon_id), {str(user_id): now})
                    pipe.execute()
                    return "SUCCESS"
                except redis.WatchError:
                    continue

    return reserve


def locked_reserver(redis_url: str) -> Reserver:
    """Pessimistic: the coupon's lock around the naive check-then-write, for every request."""
    client = connect(redis_url, socket_timeout=30)

    def reserve(coupon_id: int, user_id: int) -> str:
        with held_lock(client, issue_lock_name(coupon_id), lease_s=10, wait_s=10):
            return _check_then_write(client, coupon_id, user_id)

    return reserve


def incr_reserver(redis_url: str) -> Reserver:
    """Not a reserve at all: one INCR, the cheapest write Redis has, as the floor."""
    client = connect(redis_url)

    def reserve(coupon_id: int, user_id: int) -> str:
        client.execute_command("INCR", f"bench:incr:{{{coupon_id}}}")  # redis-py's incr() sends INCRBY
        return "INCR"

    return reserve
