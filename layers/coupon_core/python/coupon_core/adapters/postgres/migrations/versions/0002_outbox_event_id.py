"""The outbox's events get an id (for consumers to drop repeats) and their coupon (the Kafka key).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "outbox", sa.Column("event_id", sa.Uuid(), server_default=sa.text("gen_random_uuid()"), nullable=False)
    )
    op.create_unique_constraint("uq_outbox_event_id", "outbox", ["event_id"])
    op.add_column("outbox", sa.Column("coupon_id", sa.BigInteger(), nullable=True))
    op.execute("UPDATE outbox SET coupon_id = (payload->>'couponId')::bigint")
    op.alter_column("outbox", "coupon_id", nullable=False)
    op.drop_index("ix_outbox_unpublished", table_name="outbox", postgresql_where="published_at IS NULL")
    op.create_index("ix_outbox_unpublished", "outbox", ["id"], unique=False, postgresql_where="published_at IS NULL")


def downgrade() -> None:
    op.drop_index("ix_outbox_unpublished", table_name="outbox", postgresql_where="published_at IS NULL")
    op.create_index(
        "ix_outbox_unpublished", "outbox", ["created_at"], unique=False, postgresql_where="published_at IS NULL"
    )
    op.drop_column("outbox", "coupon_id")
    op.drop_constraint("uq_outbox_event_id", "outbox", type_="unique")
    op.drop_column("outbox", "event_id")
