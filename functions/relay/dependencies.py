"""The relay function's collaborators, built once per Lambda container."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from coupon_core.adapters.kafka.event_publisher import EventPublisher
from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.adapters.postgres.outbox import SqlOutbox
from coupon_core.settings import RelaySettings


@dataclass(frozen=True)
class Wiring:
    settings: RelaySettings
    outbox: SqlOutbox
    publisher: EventPublisher


@functools.cache
def wiring() -> Wiring:
    settings = RelaySettings.from_env()
    return Wiring(
        settings,
        SqlOutbox(make_engine(settings.database, pool_size=1)),
        EventPublisher(settings.kafka, timeout_ms=settings.relay.publish_timeout_ms),
    )
