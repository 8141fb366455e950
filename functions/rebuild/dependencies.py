"""The rebuild function's collaborators, built once per Lambda container."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from coupon_core.adapters.elasticache import redis_client
from coupon_core.adapters.kafka.in_flight import KafkaInFlightReader
from coupon_core.adapters.postgres.catalog import SqlCouponCatalog
from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.domain.reconcile import STATE_LOCK_WAIT_S, Reconciler
from coupon_core.settings.rebuild import RebuildSettings
from lua_redis import CouponLocks, ReservationStore


@dataclass(frozen=True)
class Wiring:
    settings: RebuildSettings
    reconciler: Reconciler


@functools.cache
def wiring() -> Wiring:
    """Read the settings (failing with the variable's name if one is wrong) and wire the reconciler."""
    settings = RebuildSettings.from_env()
    client = redis_client(settings.redis, socket_timeout=STATE_LOCK_WAIT_S + 5)  # BLPOP waits on this socket
    in_flight = KafkaInFlightReader(
        settings.kafka,
        group=settings.consumer_group.group,
        max_records=settings.read_back.max_records,
        timeout_s=settings.read_back.timeout_s,
    )
    reconciler = Reconciler(
        ReservationStore(client),
        CouponLocks(client),
        SqlCouponCatalog(make_engine(settings.database)),
        in_flight,
        retention_ms=settings.retention.state_ms,
        skew_ms=settings.reconcile.skew_ms,
        produce_bound_ms=settings.reconcile.produce_bound_ms,
    )
    return Wiring(settings, reconciler)
