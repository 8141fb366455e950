"""The Redis key names the intake's scripts touch; a key only one other module uses is named there
(the rebuild gate and the staging keys in ``store.py``, the locks in ``lock.py``, the processing
limit in ``limit.py``).

Every key of a coupon carries the coupon id in a hash tag (``{42}``), so all of them live in
one cluster slot and a Lua script may touch them together under ElastiCache cluster mode.
"""

from __future__ import annotations


def coupon_tag(coupon_id: int) -> str:
    """The prefix of every key of a coupon: ``coupon:{42}``, its hash tag the coupon id."""
    return f"coupon:{{{coupon_id}}}"


def reserved_key(coupon_id: int) -> str:
    """Sorted set of reservations: member = user id, score = reservation time (ms)."""
    return f"{coupon_tag(coupon_id)}:reserved"


def meta_key(coupon_id: int) -> str:
    """Hash with total, startsAt, endsAt and expiresAt (epoch ms)."""
    return f"{coupon_tag(coupon_id)}:meta"


def requests_key(coupon_id: int) -> str:
    """Hash: user id -> the request id holding that user's reservation (reserve is idempotent per request)."""
    return f"{coupon_tag(coupon_id)}:requests"


def idempotency_key(coupon_id: int) -> str:
    """Hash: a client's Idempotency-Key -> the user it was first used for (keys are per coupon)."""
    return f"{coupon_tag(coupon_id)}:idempotency"


def holders_key(coupon_id: int) -> str:
    """The holders' filter: a Bloom filter of the users who took a copy and their keys (``lua_redis.holders``)."""
    return f"{coupon_tag(coupon_id)}:holders"


def replicated_key(coupon_id: int) -> str:
    """What the intake writes before a ``WAIT``, so that the WAIT covers its reservation (``confirm.lua``)."""
    return f"{coupon_tag(coupon_id)}:replicated"


REGISTRY_KEY = "coupons:{registry}"  # a hash of every coupon id to when its state expires (``lua_redis.registry``)


def build_claim_key(coupon_id: int) -> str:
    """The claim on building a coupon's missing state, in the registry's slot (``issue_store.py``)."""
    return f"coupons:{{registry}}:build:{coupon_id}"
