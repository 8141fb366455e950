"""Session-wide fixtures: each embedded service is started once, and only if a test needs it.

A service named in the environment (REDIS_URL, DATABASE_URL, KAFKA_BOOTSTRAP_SERVERS) is used
as it is instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling

from coupon_core.adapters.postgres.engine import engine_for_url
from coupon_core.adapters.postgres.migrate import upgrade
from local.stack.services import STARTERS

# What the deployed functions get from CDK; Powertools reads these at import time.
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "coupon-tests")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "CouponSystemTests")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")


def _service_url(env_var: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    external = os.environ.get(env_var)
    if external:
        yield external
        return
    service = STARTERS[env_var](tmp_path_factory.mktemp(env_var.lower()))
    os.environ.update(service.client_environment)  # the stack's CA, KAFKA_TLS: what its clients need
    try:
        yield service.url
    finally:
        service.stop()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _service_url("REDIS_URL", tmp_path_factory)


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _service_url("DATABASE_URL", tmp_path_factory)


@pytest.fixture(scope="session")
def kafka_bootstrap_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _service_url("KAFKA_BOOTSTRAP_SERVERS", tmp_path_factory)


@pytest.fixture(scope="session")
def migrated_engine(database_url: str) -> Iterator[Engine]:
    """The test database at the newest schema, migrated once per session."""
    engine = engine_for_url(database_url, pool_size=5)
    upgrade(engine)
    yield engine
    engine.dispose()


class OneWorkerPerTier(LoadScopeScheduling):
    """``make test``'s ``pytest -n``: each test goes to whichever worker is free, but the tiers
    whose session fixture is one costly thing run whole on one worker each, so a run starts one
    LocalStack (the integration tier; two would take the same ports) and synthesizes each stack
    once (the infra tier). xdist's own ``--dist loadgroup`` reads a marker into ``Item._nodeid``,
    which pytest 9 no longer reads; the scope is what xdist's own schedulers override
    (tests/unit/test_suite_scheduler.py fails if xdist's pinned version renames it).
    """

    @staticmethod
    def _split_scope(nodeid: str) -> str:
        tier = nodeid.split("/")[1] if nodeid.startswith("tests/") else ""
        return tier if tier in ("integration", "infra") else nodeid


@pytest.hookimpl(optionalhook=True)  # xdist's hook: unknown to a run with -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> OneWorkerPerTier | None:
    return OneWorkerPerTier(config, log) if config.getoption("dist") == "load" else None
