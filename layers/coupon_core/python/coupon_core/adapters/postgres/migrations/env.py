"""Alembic environment: runs on the connection handed over by ``coupon_core.adapters.postgres.migrate``."""

from __future__ import annotations

from alembic import context

from coupon_core.adapters.postgres.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through coupon_core.adapters.postgres.migrate, which provides the connection")

context.configure(connection=connection, target_metadata=Base.metadata, compare_type=True)
with context.begin_transaction():
    context.run_migrations()
