"""The rebuild's and the builder's collaborators, built once per Lambda container."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from coupon_core.adapters.kafka.in_flight import KafkaInFlightReader
from coupon_core.adapters.postgres.catalog import SqlCouponCatalog
from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.domain.ports import STATE_LOCK_WAIT_S
from coupon_core.domain.reconcile import Reconciler
from coupon_core.domain.reservations import STATE_BUILD_TIMEOUT_S
from coupon_core.settings.rebuild import RebuildSettings
from lua_redis.client import redis_client
from lua_redis.lock import RedisCouponLocks
from lua_redis.reconcile import ReconcileStore
from lua_redis.registry import RedisCouponRegistry


@dataclass(frozen=True)
class Wiring:
    settings: RebuildSettings
    reconciler: Reconciler


@functools.cache
def wiring() -> Wiring:
    """Read the settings (failing with the variable's name if one is wrong) and wire the reconciler."""
    settings = RebuildSettings.from_env()
    client = redis_client(settings.redis, socket_timeout=STATE_LOCK_WAIT_S + 5)  # BLPOP waits on this socket

    def in_flight(timeout_s: float) -> KafkaInFlightReader:
        read_back = settings.read_back
        group = settings.consumer_group.group
        return KafkaInFlightReader(settings.kafka, group=group, max_records=read_back.max_records, timeout_s=timeout_s)

    store, locks, catalog = (
        ReconcileStore(client),
        RedisCouponLocks(client),
        SqlCouponCatalog(make_engine(settings.database)),
    )
    retention_ms, produce_bound_ms = settings.retention.state_ms, settings.reconcile.produce_bound_ms
    # An intake waits for a state build at most STATE_BUILD_TIMEOUT_S: its read of the records in
    # flight gets half of that, the lock's wait and two database reads the rest.
    reconciler = Reconciler(
        store,
        locks,
        catalog,
        in_flight(settings.read_back.timeout_s),
        RedisCouponRegistry(client),
        retention_ms=retention_ms,
        skew_ms=settings.reconcile.skew_ms,
        produce_bound_ms=produce_bound_ms,
        in_flight_for_a_request=in_flight(min(settings.read_back.timeout_s, STATE_BUILD_TIMEOUT_S / 2)),
    )
    return Wiring(settings, reconciler)
