"""An issued coupon's life after the issue: validity, use and expiry.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

OLD_STATUSES = "status IN ('ISSUED', 'USED', 'CANCELED')"
NEW_STATUSES = "status IN ('ISSUED', 'USED', 'CANCELED', 'EXPIRED')"


def upgrade() -> None:
    op.add_column("coupons", sa.Column("valid_until", sa.DateTime(timezone=True), nullable=True))
    op.add_column("coupons", sa.Column("valid_days", sa.Integer(), nullable=True))
    op.create_check_constraint("ck_coupons_valid_days", "coupons", "valid_days IS NULL OR valid_days > 0")
    for name in ("expires_at", "used_at", "expired_at"):
        op.add_column("coupon_issues", sa.Column(name, sa.DateTime(timezone=True), nullable=True))
    op.add_column("coupon_issues", sa.Column("use_key", sa.Text(), nullable=True))
    op.drop_constraint("ck_coupon_issues_status", "coupon_issues", type_="check")
    op.create_check_constraint("ck_coupon_issues_status", "coupon_issues", NEW_STATUSES)
    op.create_index("ix_coupon_issues_due", "coupon_issues", ["expires_at"], postgresql_where="status = 'ISSUED'")


def downgrade() -> None:
    op.drop_index("ix_coupon_issues_due", table_name="coupon_issues", postgresql_where="status = 'ISSUED'")
    op.drop_constraint("ck_coupon_issues_status", "coupon_issues", type_="check")
    op.create_check_constraint("ck_coupon_issues_status", "coupon_issues", OLD_STATUSES)
    for name in ("use_key", "expired_at", "used_at", "expires_at"):
        op.drop_column("coupon_issues", name)
    op.drop_constraint("ck_coupons_valid_days", "coupons", type_="check")
    op.drop_column("coupons", "valid_days")
    op.drop_column("coupons", "valid_until")
