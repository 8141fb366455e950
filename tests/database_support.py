"""A migrated database, emptied between tests."""

from __future__ import annotations

from sqlalchemy import Engine, text

from local.testkit.tables import TABLES


def empty_tables(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
