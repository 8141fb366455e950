"""The relay's side of the outbox table: the oldest unpublished events claimed, published and
marked, one relay at a time; and how far behind it is. The changes' side is ``outbox.py``."""

from __future__ import annotations

from sqlalchemy import Engine, func, select, update

from coupon_core.adapters.postgres.engine import DRIVER_ERRORS
from coupon_core.adapters.postgres.models import OutboxEvent
from coupon_core.backend_errors import DatabaseUnavailableError
from coupon_core.domain.outbox_relay import CouponEvent, Publish
from coupon_core.errors import Reraise

# pg_try_advisory_xact_lock key of the relay: one relay at a time, whatever the Lambda concurrency
RELAY_LOCK = 0x636F75706F6E  # "coupon"

_database_down = Reraise(DatabaseUnavailableError, "outbox unavailable", DRIVER_ERRORS)


class SqlOutbox:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @_database_down
    def relay_batch(self, limit: int, publish: Publish) -> int | None:
        """In one transaction: take the relay's lock (or return None), read the oldest ``limit``
        unpublished events, ``publish`` them, and mark them published. An exception from
        ``publish`` rolls everything back: nothing is marked, the next run sends them again."""
        with self._engine.begin() as connection:
            if not connection.scalar(select(func.pg_try_advisory_xact_lock(RELAY_LOCK))):
                return None
            rows = connection.execute(
                select(
                    OutboxEvent.id,
                    OutboxEvent.event_id,
                    OutboxEvent.event_type,
                    OutboxEvent.created_at,
                    OutboxEvent.coupon_id,
                    OutboxEvent.payload,
                )
                .where(OutboxEvent.published_at.is_(None))
                .order_by(OutboxEvent.id)
                .limit(limit)
            ).all()
            if not rows:
                return 0
            publish([CouponEvent(r.event_id, r.event_type, r.created_at, r.coupon_id, r.payload) for r in rows])
            connection.execute(
                update(OutboxEvent).where(OutboxEvent.id.in_([r.id for r in rows])).values(published_at=func.now())
            )
            return len(rows)

    @_database_down
    def lag_seconds(self) -> float:
        with self._engine.connect() as connection:
            oldest = connection.scalar(
                select(func.extract("epoch", func.now() - func.min(OutboxEvent.created_at))).where(
                    OutboxEvent.published_at.is_(None)
                )
            )
        return float(oldest or 0)
