"""The intake function's collaborators, built once per Lambda container on first use."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import redis

from coupon_core.catalog import CouponCatalog
from coupon_core.issuing import IssueService, StateInitialiser
from coupon_core.publisher import IssuePublisher
from coupon_core.settings import IntakeSettings
from lua_redis import ReservationStore, connect


@dataclass(frozen=True)
class Intake:
    settings: IntakeSettings
    client: redis.Redis
    store: ReservationStore
    publisher: IssuePublisher
    service: IssueService

    def catalog(self) -> CouponCatalog:
        return _catalog(self.settings)


@functools.cache
def _catalog(settings: IntakeSettings) -> CouponCatalog:
    # SQLAlchemy is imported here, on the first request that needs the database, not at cold start.
    from coupon_core.db.catalog import SqlCouponCatalog  # noqa: PLC0415
    from coupon_core.db.engine import make_engine  # noqa: PLC0415

    return SqlCouponCatalog(make_engine(settings.database))


@functools.cache
def intake() -> Intake:
    """Read the settings (failing with the variable's name if one is wrong) and wire the service."""
    settings = IntakeSettings.from_env()
    client = connect(settings.redis.url)
    store = ReservationStore(client)
    publisher = IssuePublisher(settings.kafka, timeout_ms=settings.produce_timeout_ms)
    initialiser = StateInitialiser(store, client, lambda: _catalog(settings), retention_ms=settings.state_retention_ms)
    return Intake(settings, client, store, publisher, IssueService(store, publisher, initialiser))


def reset() -> None:
    """Forget the wired collaborators (tests change the environment between cases)."""
    if intake.cache_info().currsize:
        intake().publisher.close()
        intake().client.close()
    intake.cache_clear()
    _catalog.cache_clear()
