"""Redis key names.

Every key of a coupon carries the coupon id in a hash tag (``{42}``), so all of them live in
one cluster slot and a Lua script may touch them together under ElastiCache cluster mode.
"""

from __future__ import annotations


def _tag(coupon_id: int) -> str:
    return f"coupon:{{{coupon_id}}}"


def reserved_key(coupon_id: int) -> str:
    """Sorted set of reservations: member = user id, score = reservation time (ms)."""
    return f"{_tag(coupon_id)}:reserved"


def meta_key(coupon_id: int) -> str:
    """Hash with total, startsAt, endsAt and expiresAt (epoch ms)."""
    return f"{_tag(coupon_id)}:meta"


def requests_key(coupon_id: int) -> str:
    """Hash: user id -> the request id holding that user's reservation (reserve is idempotent per request)."""
    return f"{_tag(coupon_id)}:requests"


def idempotency_key(coupon_id: int) -> str:
    """Hash: a client's Idempotency-Key -> the user it was first used for (keys are per coupon)."""
    return f"{_tag(coupon_id)}:idempotency"


def holders_key(coupon_id: int) -> str:
    """The holders' filter: a Bloom filter of the users who took a copy and their keys (``lua_redis.holders``)."""
    return f"{_tag(coupon_id)}:holders"


def replicated_key(coupon_id: int) -> str:
    """What the intake writes before a ``WAIT``, so that the WAIT covers its reservation (``confirm.lua``)."""
    return f"{_tag(coupon_id)}:replicated"


def rebuild_key(coupon_id: int) -> str:
    """The server time from which a lost state may be rebuilt (``store.py``, ``rebuild_wait_ms``)."""
    return f"{_tag(coupon_id)}:rebuild"


def staging_key(coupon_id: int, token: str) -> str:
    """Temporary set a state is built in before it is swapped in."""
    return f"{_tag(coupon_id)}:staging:{token}"


def staging_holders_key(coupon_id: int, token: str) -> str:
    """Temporary filter of the same holders, swapped in with the set."""
    return f"{staging_key(coupon_id, token)}:holders"


def registry_key() -> str:
    """The registry of coupons: a hash of every coupon id to when its state expires (``lua_redis.registry``)."""
    return "coupons:{registry}"


def build_claim_key(coupon_id: int) -> str:
    """The claim on building a coupon's missing state, in the registry's slot (``issue_store.py``)."""
    return f"coupons:{{registry}}:build:{coupon_id}"


def write_limit_key() -> str:
    """The token bucket of database writes (``limit.RedisWriteLimit``): one for the environment."""
    return "limit:db-writes"


def state_lock_name(coupon_id: int) -> str:
    """Lock held while a coupon's state is built or reconciled (key ``lock:coupon-state:{id}``)."""
    return f"coupon-state:{{{coupon_id}}}"


def issue_lock_name(coupon_id: int) -> str:
    """Lock held by the worker while it persists a coupon's records (key ``lock:coupon-issue:{id}``)."""
    return f"coupon-issue:{{{coupon_id}}}"
