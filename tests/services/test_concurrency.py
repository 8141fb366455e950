"""Reserve under real concurrency: 4 processes x 8 threads against one Valkey."""

from __future__ import annotations

from local.testkit.flash_sale import LoadPlan, lua_reserver, run_load
from local.testkit.stores import WholeStore
from tests.services.support import open_coupon


def test_double_clicks_never_book_a_user_twice_and_the_users_get_exactly_the_quantity(store, redis_url):
    """10 000 users race for 1 000 copies, each clicking twice at once. reserve.lua answers a
    holder DUPLICATE before it looks at the stock, and no copy comes back here: each winner's other
    click is DUPLICATE, both clicks of everyone else SOLD_OUT. The counts are then exact: not one
    copy more than the total under contention (I1), and no user holds two (I2)."""
    store.reconcile(open_coupon(total=1_000), {}, release_before=None)

    result = run_load(lua_reserver, redis_url, LoadPlan(coupon_id=1, users=10_000, clicks=2, processes=4, threads=8))

    assert result.requests == 20_000
    assert result.outcomes == {"SUCCESS": 1_000, "DUPLICATE": 1_000, "SOLD_OUT": 18_000}
    assert max(result.successes.values()) == 1
    assert store.reserved_count(1) == 1_000


def test_with_stock_for_everyone_each_double_click_is_one_success_and_one_duplicate(redis_client, redis_url):
    store = WholeStore(redis_client)
    store.reconcile(open_coupon(total=20_000), {}, release_before=None)

    result = run_load(lua_reserver, redis_url, LoadPlan(coupon_id=1, users=10_000, clicks=2, processes=4, threads=8))

    assert result.outcomes == {"SUCCESS": 10_000, "DUPLICATE": 10_000}
    assert len(result.successes) == 10_000
    assert max(result.successes.values()) == 1
    assert store.reserved_count(1) == 10_000
