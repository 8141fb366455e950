"""Coupon reservations in Redis: the Lua scripts, the reservation store and the coupon locks.

The Redis half of the contracts in docs/design.md, and the adapter of the domain's ports on it:
``IssueStore`` implements the intake's ports (``coupon_core.domain.issuing``), ``ReservationStore``
the others' ``Reservations`` and ``RedisCouponLocks`` the locks (``coupon_core.domain.ports``),
``ReconcileStore`` the reconcile's (``coupon_core.domain.reconcile``).
The values it exchanges (``IssueOutcome``, ``CouponState``, ...) and its errors are the
domain's (``coupon_core.domain``, ``coupon_core.errors``); redis-py's errors never leave it
(``client.redis_unavailable``). Each module is imported on its own, so that the intake reaches
no further than the reservation path.

    scripts/*.lua   the Lua scripts (reserve, release, install, reconcile, ...), one round trip each
    client.py       the functions' Redis client (redis-py's errors mapped: ``redis_unavailable``),
                    and a script loaded from the package and registered on it
    issue_store.py  the intake's store: reserve, release, wait for replicas, the registry's lookup;
                    the one table of each of those scripts' codes to the domain's values
    store.py        a coupon's state as the others use it: read, release, update, install it
    reconcile.py    the reconcile's repairs: strays released, holders and request ids put back
    holders.py      the holders' filter: who took a copy of a coupon, for the intake's memory of
                    its sold-out refusals (a Bloom filter the scripts keep beside the set)
    availability.py a sale as a shop's page reads it: its state and count, in one read-only script
    registry.py     the registry of coupons, as its writers keep it: every coupon id and when its
                    state expires, so that the intake tells a missing state from an id that
                    names nothing
    lock.py         per-coupon locks: owner token, lease, safe release, a wait that does not spin
    limit.py        the processing limit: database writes per second, in one Redis bucket
    keys.py         the key names the intake's scripts touch (the others' beside their one user)
"""
