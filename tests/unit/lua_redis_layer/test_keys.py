"""Key names (``keys.py`` and the modules that name their own): every key of one coupon hashes to
one cluster slot."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from coupon_core.domain.records import MAX_BIGINT
from lua_redis.keys import meta_key, requests_key, reserved_key
from lua_redis.lock import issue_lock_name, state_lock_name
from lua_redis.store import rebuild_key, staging_key


def hash_tag(key: str) -> str:
    match = re.search(r"\{([^}]*)\}", key)
    assert match, key
    return match.group(1)


@given(st.integers(min_value=1, max_value=MAX_BIGINT))
def test_all_keys_of_a_coupon_share_its_hash_tag(coupon_id):
    names = [
        reserved_key(coupon_id),
        meta_key(coupon_id),
        requests_key(coupon_id),
        staging_key(coupon_id, "t"),
        rebuild_key(coupon_id),
        "lock:" + state_lock_name(coupon_id),
        "lock-signal:" + issue_lock_name(coupon_id),
    ]
    assert {hash_tag(name) for name in names} == {str(coupon_id)}


def test_key_names_follow_the_design():
    assert reserved_key(42) == "coupon:{42}:reserved"
    assert meta_key(42) == "coupon:{42}:meta"
    assert "lock:" + state_lock_name(42) == "lock:coupon-state:{42}"
