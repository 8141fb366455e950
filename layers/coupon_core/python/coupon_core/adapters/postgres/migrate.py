"""Upgrade the database to the newest schema: ``python -m coupon_core.adapters.postgres.migrate`` (``make migrate``).

The Alembic configuration is built in code, with the migrations shipped inside this package, so
the same call runs from a checkout, from a test and from the deploy-time migration function,
none of which has an ``alembic.ini``.
"""

from __future__ import annotations

import os
import sys

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine

from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.errors import ConfigError
from coupon_core.settings.backend import DatabaseSettings


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", "coupon_core.adapters.postgres:migrations")
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Upgrade the database behind ``engine`` to ``revision``, in one transaction."""
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), revision)


def main() -> int:
    try:
        engine = make_engine(DatabaseSettings.from_env(os.environ), pool_size=1)
    except ConfigError as exc:
        print(f"migrate: {exc}", file=sys.stderr)
        return 2
    upgrade(engine)
    print(f"migrate: {engine.url.render_as_string(hide_password=True)} is at the newest schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
