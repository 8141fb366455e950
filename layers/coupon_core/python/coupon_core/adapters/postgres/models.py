"""The tables of docs/design.md (Database). Alembic migrations create them; these models query them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    Text,
    UniqueConstraint,
    Uuid,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ISSUE_STATUSES = ("ISSUED", "USED", "CANCELED", "EXPIRED")


class Base(DeclarativeBase):
    pass


class Coupon(Base):
    __tablename__ = "coupons"
    __table_args__ = (
        CheckConstraint("remaining_quantity BETWEEN 0 AND total_quantity", name="ck_coupons_remaining"),
        CheckConstraint("total_quantity > 0", name="ck_coupons_total_positive"),
        CheckConstraint("issue_ends_at > issue_starts_at", name="ck_coupons_window"),
        CheckConstraint("valid_days IS NULL OR valid_days > 0", name="ck_coupons_valid_days"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    total_quantity: Mapped[int] = mapped_column(Integer)
    remaining_quantity: Mapped[int] = mapped_column(Integer)
    issue_starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    issue_ends_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # an issued copy expires at valid_until, or valid_days after its issue, whichever comes first
    valid_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    valid_days: Mapped[int | None] = mapped_column(Integer)
    # may a user who canceled take the coupon again? (no: the reservation stays, blocking them)
    reissue_after_cancel: Mapped[bool] = mapped_column(Boolean, server_default="false")
    closed: Mapped[bool] = mapped_column(Boolean, server_default="false")  # the operators' kill switch
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class CouponIssue(Base):
    __tablename__ = "coupon_issues"
    __table_args__ = (
        UniqueConstraint("coupon_id", "user_id", name="uq_coupon_issues_coupon_user"),
        CheckConstraint(f"status IN {ISSUE_STATUSES}", name="ck_coupon_issues_status"),
        Index("ix_coupon_issues_due", "expires_at", postgresql_where="status = 'ISSUED'"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    coupon_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("coupons.id"))
    user_id: Mapped[int] = mapped_column(BigInteger)
    request_id: Mapped[uuid.UUID] = mapped_column(Uuid, unique=True)
    status: Mapped[str] = mapped_column(Text, server_default="ISSUED")
    reserved_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    issued_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    use_key: Mapped[str | None] = mapped_column(Text)  # the Idempotency-Key of the use, if it had one
    expired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    canceled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    cancel_key: Mapped[str | None] = mapped_column(Text)  # the Idempotency-Key of the cancel, if it had one


class CouponIssueFailure(Base):
    """A SUCCESS answer that could not be persisted: recorded, and its reservation released."""

    __tablename__ = "coupon_issue_failures"
    __table_args__ = (Index("ix_coupon_issue_failures_coupon_user", "coupon_id", "user_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    coupon_id: Mapped[int] = mapped_column(BigInteger)  # no foreign key: the coupon may be unknown
    user_id: Mapped[int] = mapped_column(BigInteger)
    request_id: Mapped[uuid.UUID] = mapped_column(Uuid, unique=True)
    reason: Mapped[str] = mapped_column(Text)
    source: Mapped[dict[str, Any]] = mapped_column(JSONB)
    released: Mapped[bool] = mapped_column(Boolean)
    failed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class OutboxEvent(Base):
    """Events written in the transaction of the change they describe, published by the relay
    (``functions/relay``) in ``id`` order; ``published_at`` is set once Kafka has them."""

    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_unpublished", "id", postgresql_where="published_at IS NULL"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    event_id: Mapped[uuid.UUID] = mapped_column(Uuid, unique=True, server_default=func.gen_random_uuid())
    coupon_id: Mapped[int] = mapped_column(BigInteger)
    aggregate_id: Mapped[str] = mapped_column(Text)
    event_type: Mapped[str] = mapped_column(Text)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    published_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
