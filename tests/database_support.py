"""A migrated database, emptied between tests."""

from __future__ import annotations

from sqlalchemy import Engine, text

TABLES = ("outbox", "coupon_issue_failures", "coupon_issues", "coupons")


def empty_tables(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))


def row_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as connection:
        return {table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() for table in TABLES}
