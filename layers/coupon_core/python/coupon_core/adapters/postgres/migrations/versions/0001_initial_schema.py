"""Initial schema: coupons, coupon_issues, coupon_issue_failures, outbox (docs/design.md, Database).

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "coupon_issue_failures",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("coupon_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("request_id", sa.Uuid(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("source", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("released", sa.Boolean(), nullable=False),
        sa.Column("failed_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("request_id"),
    )
    op.create_index(
        "ix_coupon_issue_failures_coupon_user", "coupon_issue_failures", ["coupon_id", "user_id"], unique=False
    )
    op.create_table(
        "coupons",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("total_quantity", sa.Integer(), nullable=False),
        sa.Column("remaining_quantity", sa.Integer(), nullable=False),
        sa.Column("issue_starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("issue_ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("issue_ends_at > issue_starts_at", name="ck_coupons_window"),
        sa.CheckConstraint("remaining_quantity BETWEEN 0 AND total_quantity", name="ck_coupons_remaining"),
        sa.CheckConstraint("total_quantity > 0", name="ck_coupons_total_positive"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("aggregate_id", sa.Text(), nullable=False),
        sa.Column("event_type", sa.Text(), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_outbox_unpublished", "outbox", ["created_at"], unique=False, postgresql_where="published_at IS NULL"
    )
    op.create_table(
        "coupon_issues",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("coupon_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("request_id", sa.Uuid(), nullable=False),
        sa.Column("status", sa.Text(), server_default="ISSUED", nullable=False),
        sa.Column("reserved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("issued_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("status IN ('ISSUED', 'USED', 'CANCELED')", name="ck_coupon_issues_status"),
        sa.ForeignKeyConstraint(
            ["coupon_id"],
            ["coupons.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("coupon_id", "user_id", name="uq_coupon_issues_coupon_user"),
        sa.UniqueConstraint("request_id"),
    )


def downgrade() -> None:
    op.drop_table("coupon_issues")
    op.drop_index("ix_outbox_unpublished", table_name="outbox", postgresql_where="published_at IS NULL")
    op.drop_table("outbox")
    op.drop_table("coupons")
    op.drop_index("ix_coupon_issue_failures_coupon_user", table_name="coupon_issue_failures")
    op.drop_table("coupon_issue_failures")
