"""The tables requests write, and how many rows each holds: what "changes nothing" compares."""

from __future__ import annotations

from sqlalchemy import Engine, text

TABLES = ("outbox", "coupon_issue_failures", "coupon_issues", "coupons")


def row_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as connection:
        return {table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() for table in TABLES}
