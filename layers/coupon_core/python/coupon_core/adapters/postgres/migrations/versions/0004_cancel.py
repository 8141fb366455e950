"""Cancel: whether a coupon may be taken again by a user who canceled it, and when and how a
copy was canceled.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "coupons",
        sa.Column("reissue_after_cancel", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )
    op.add_column("coupon_issues", sa.Column("canceled_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("coupon_issues", sa.Column("cancel_key", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("coupon_issues", "cancel_key")
    op.drop_column("coupon_issues", "canceled_at")
    op.drop_column("coupons", "reissue_after_cancel")
