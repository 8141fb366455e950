"""Exact conversions between epoch milliseconds (Redis, Kafka) and aware datetimes (PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_millis(moment: datetime) -> int:
    """Epoch milliseconds of an aware datetime, truncated (integer arithmetic, no float rounding)."""
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def from_millis(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)
