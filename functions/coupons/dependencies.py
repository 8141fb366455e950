"""The coupons function's collaborators, built once per Lambda container and handed to routes
with Powertools' ``Depends``.

Each provider is a plain function a route names in ``Annotated[T, Depends(provider)]``; tests
replace one through the resolver's own ``dependency_overrides``. The wiring is cached per
container (``functools.cache``), so the Redis client and the database engine live across
invocations; :func:`reset` forgets it (tests change the environment between cases).
"""

import functools
import hmac
from dataclasses import dataclass
from typing import Annotated

import boto3
import redis
from aws_lambda_powertools.event_handler import Depends, Request
from sqlalchemy import Engine

from coupon_core.adapters.lambda_reconcile import RebuildInvoker
from coupon_core.adapters.postgres.admin_catalog import SqlAdminCatalog
from coupon_core.adapters.postgres.engine import make_engine
from coupon_core.adapters.postgres.lifecycle import SqlIssueLifecycle
from coupon_core.domain.availability import AvailabilityService
from coupon_core.domain.lifecycle import LifecycleService
from coupon_core.domain.operations import AdminCatalog, CouponAdmin, OnDemandReconcile
from coupon_core.domain.ports import Reservations
from coupon_core.domain.state_sync import StateSync
from coupon_core.errors import UnavailableError
from coupon_core.settings.coupons import CouponsSettings
from functions.http_api import request
from functions.http_api.request import EDGE_HEADER, Caller, caller_of, header_values
from lua_redis.availability import RedisSaleReader
from lua_redis.client import redis_client
from lua_redis.lock import RedisCouponLocks
from lua_redis.registry import RedisCouponRegistry
from lua_redis.store import ReservationStore


@dataclass(frozen=True)
class Wiring:
    settings: CouponsSettings
    client: redis.Redis
    engine: Engine
    store: ReservationStore
    catalog: SqlAdminCatalog
    sync: StateSync
    availability: AvailabilityService


@functools.cache
def wiring() -> Wiring:
    """Read the settings (failing with the variable's name if one is wrong) and wire the stores."""
    settings = CouponsSettings.from_env()
    client = redis_client(settings.redis)
    engine = make_engine(settings.database)
    store, catalog = ReservationStore(client), SqlAdminCatalog(engine)
    locks, registry = RedisCouponLocks(client), RedisCouponRegistry(client)
    sync = StateSync(catalog, store, locks, registry, retention_ms=settings.retention.state_ms)
    return Wiring(settings, client, engine, store, catalog, sync, AvailabilityService(RedisSaleReader(client)))


def reset() -> None:
    """Forget the wiring and close its connections."""
    if wiring.cache_info().currsize:
        wiring().client.close()
        wiring().engine.dispose()
    wiring.cache_clear()
    edge_secret.cache_clear()
    request.allowed_origins.cache_clear()


def settings() -> CouponsSettings:
    return wiring().settings


def reservations() -> Reservations:
    return wiring().store


def availability() -> AvailabilityService:
    return wiring().availability


def catalog() -> AdminCatalog:
    return wiring().catalog


def coupon_admin() -> CouponAdmin:
    parts = wiring()
    return CouponAdmin(parts.catalog, parts.sync)


def lifecycle() -> LifecycleService:
    parts = wiring()
    return LifecycleService(SqlIssueLifecycle(parts.engine), parts.catalog, parts.store, parts.sync)


def on_demand_reconcile() -> OnDemandReconcile:
    return RebuildInvoker(wiring().settings.rebuild_function.name)


def caller(request: Request, config: Annotated[CouponsSettings, Depends(settings)]) -> Caller:
    """The caller of the current request."""
    return caller_of(request.resolved_event.raw_event, config.caller)


CallerParam = Annotated[Caller, Depends(caller)]


@functools.cache
def edge_secret(arn: str) -> str:
    """The value the edge sends in ``EDGE_HEADER``, read once per container."""
    try:
        return str(boto3.client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"])
    except Exception as exc:  # botocore's errors: the answer is a 503, asked again next time
        raise UnavailableError(f"the edge's secret could not be read: {exc}") from exc


def from_edge(request: Request, config: Annotated[CouponsSettings, Depends(settings)]) -> bool:
    """Whether the edge asked: ``EDGE_HEADER`` carries this stack's secret. The edge keeps an
    answer a second itself, so it is answered from a read of Redis made for it; a page, or a
    script naming the header without the secret, from the container's read."""
    arn = config.edge.secret_arn
    sent = next(iter(header_values(request.resolved_event, EDGE_HEADER)), None)
    if arn is None or not isinstance(sent, str):
        return False
    return hmac.compare_digest(sent.encode(), edge_secret(arn).encode())
