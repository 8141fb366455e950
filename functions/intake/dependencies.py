"""The intake's collaborators: built once per Lambda container, handed to routes with ``Depends``.

Each provider is a plain function a route names in ``Annotated[T, Depends(provider)]``, and the
express lane calls through :func:`provide`. Tests replace one with ``OVERRIDES[provider] = ...``:
the same dict is the resolver's ``dependency_overrides``, so both lanes see the replacement. The
wiring is cached per container (``functools.cache``): it keeps the Redis client and the Kafka
producer alive across invocations.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import redis

from coupon_core.adapters.elasticache import redis_client
from coupon_core.adapters.kafka.publisher import IssuePublisher
from coupon_core.domain.issuing import IssueService, StateInitialiser
from coupon_core.domain.lifecycle import LifecycleService
from coupon_core.domain.operations import CouponAdmin, OnDemandReconcile
from coupon_core.domain.ports import CouponCatalog, InFlightReader, Reservations
from coupon_core.domain.state_sync import StateSync
from coupon_core.errors import UnavailableError
from coupon_core.observability import logger
from coupon_core.settings.intake import IntakeSettings
from lua_redis import CouponLocks, ReservationStore

if TYPE_CHECKING:
    from sqlalchemy import Engine


OVERRIDES: dict[Callable[..., Any], Callable[..., Any]] = {}


def provide[T](provider: Callable[[], T]) -> T:
    """What ``provider`` gives, or what a test put in its place (:data:`OVERRIDES`)."""
    return cast("T", OVERRIDES.get(provider, provider)())


@dataclass(frozen=True)
class Wiring:
    settings: IntakeSettings
    client: redis.Redis
    store: ReservationStore
    publisher: IssuePublisher
    initialiser: StateInitialiser
    service: IssueService


@functools.cache
def _engine(settings: IntakeSettings) -> "Engine":
    # SQLAlchemy is imported here, on the first request that needs the database, not at cold start.
    from coupon_core.adapters.postgres.engine import make_engine  # noqa: PLC0415

    return make_engine(settings.database)


@functools.cache
def _catalog(settings: IntakeSettings) -> CouponCatalog:
    from coupon_core.adapters.postgres.catalog import SqlCouponCatalog  # noqa: PLC0415

    return SqlCouponCatalog(_engine(settings))


@functools.cache
def _lifecycle(settings: IntakeSettings) -> LifecycleService:
    from coupon_core.adapters.postgres.lifecycle import SqlIssueLifecycle  # noqa: PLC0415

    return LifecycleService(SqlIssueLifecycle(_engine(settings)), _catalog(settings), wiring().store, _sync(settings))


@functools.cache
def _sync(settings: IntakeSettings) -> StateSync:
    parts = wiring()
    return StateSync(
        _catalog(settings), parts.store, CouponLocks(parts.client), retention_ms=settings.retention.state_ms
    )


@functools.cache
def _in_flight(settings: IntakeSettings) -> InFlightReader:
    from coupon_core.adapters.kafka.in_flight import KafkaInFlightReader  # noqa: PLC0415 - a coupon's first request

    read_back = settings.read_back
    group = settings.consumer_group.group
    return KafkaInFlightReader(
        settings.kafka, group=group, max_records=read_back.max_records, timeout_s=read_back.timeout_s
    )


@functools.cache
def wiring() -> Wiring:
    """Read the settings (failing with the variable's name if one is wrong) and wire the service."""
    settings = IntakeSettings.from_env()
    client = redis_client(settings.redis)
    store = ReservationStore(client)
    publisher = IssuePublisher(settings.kafka, timeout_ms=settings.issuing.produce_timeout_ms)
    initialiser = StateInitialiser(
        store,
        CouponLocks(client),
        lambda: _catalog(settings),
        lambda: _in_flight(settings),
        retention_ms=settings.retention.state_ms,
        produce_bound_ms=2 * settings.issuing.produce_timeout_ms,  # a send, and its resend
    )
    issuing = settings.issuing
    service = IssueService(
        store, publisher, initialiser, wait_replicas=issuing.wait_replicas, wait_timeout_ms=issuing.wait_timeout_ms
    )
    return Wiring(settings, client, store, publisher, initialiser, service)


def open_connections() -> None:
    """Open the hot path's connections now (Redis, the Kafka producer with its topic's metadata).

    Called while a Lambda container initialises: the first request then finds them open instead
    of paying for them. Nothing here may stop the container from starting: a failure is logged
    and the first request connects (or reports a wrong variable) as it would have anyway.
    """
    try:
        parts = wiring()
        parts.client.ping()
        parts.publisher.connect()
    except Exception:  # logged; the request path connects again, and reports what is wrong
        logger.warning("could not connect while initialising; the first request will", exc_info=True)


def settings() -> IntakeSettings:
    return wiring().settings


def issue_service() -> IssueService:
    return wiring().service


def state_initialiser() -> StateInitialiser:
    return wiring().initialiser


def reservations() -> Reservations:
    return wiring().store


def catalog() -> CouponCatalog:
    return _catalog(wiring().settings)


def coupon_admin() -> CouponAdmin:
    settings = wiring().settings
    return CouponAdmin(_catalog(settings), _sync(settings))


def on_demand_reconcile() -> OnDemandReconcile:
    from coupon_core.adapters.lambda_rebuild import RebuildInvoker  # noqa: PLC0415

    name = wiring().settings.rebuild_function.name
    if name is None:
        raise UnavailableError("REBUILD_FUNCTION is not set: this environment cannot reconcile on demand")
    return RebuildInvoker(name)


def lifecycle() -> LifecycleService:
    return _lifecycle(wiring().settings)


def reset() -> None:
    """Forget the wiring (tests change the environment between cases)."""
    if wiring.cache_info().currsize:
        wiring().publisher.close()
        wiring().client.close()
    wiring.cache_clear()
    _catalog.cache_clear()
    _lifecycle.cache_clear()
    _sync.cache_clear()
    _engine.cache_clear()
    _in_flight.cache_clear()
