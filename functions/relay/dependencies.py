"""The relay function's collaborators, built once per Lambda container."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from coupon_core.adapters.kafka.event_publisher import EventPublisher
from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.adapters.postgres.lifecycle import SqlIssueLifecycle
from coupon_core.adapters.postgres.outbox_relay import SqlOutbox
from coupon_core.settings.relay import RelaySettings


@dataclass(frozen=True)
class Wiring:
    settings: RelaySettings
    outbox: SqlOutbox
    lifecycle: SqlIssueLifecycle
    publisher: EventPublisher


@functools.cache
def wiring() -> Wiring:
    settings = RelaySettings.from_env()
    engine = make_engine(settings.database, pool_size=1)
    return Wiring(
        settings,
        SqlOutbox(engine),
        SqlIssueLifecycle(engine),
        EventPublisher(settings.kafka, timeout_ms=settings.relay.publish_timeout_ms),
    )
