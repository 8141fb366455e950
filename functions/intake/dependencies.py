"""The intake's collaborators on the hot path: built once per Lambda container, handed to routes
with ``Depends``.

Each provider is a plain function a route names in ``Annotated[T, Depends(provider)]``, and the
express lane calls through :func:`provide`. Tests replace one with ``OVERRIDES[provider] = ...``:
the same dict is the resolver's ``dependency_overrides``, so both lanes see the replacement. The
wiring is cached per container (``functools.cache``): it keeps the Redis client and the Kafka
producer alive across invocations. The providers only the resolver's routes use are in
``route_dependencies.py``, imported with the resolver: the express lane's cold start does not
build their domain services.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import redis

from coupon_core.adapters.elasticache import redis_client
from coupon_core.adapters.kafka.producer_internals import KafkaInternalsChangedError
from coupon_core.adapters.kafka.publisher import IssuePublisher
from coupon_core.domain.issuing import IssueService, StateInitialiser
from coupon_core.observability import logger
from coupon_core.settings.intake import IntakeSettings
from lua_redis import CouponLocks, ReservationStore

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from coupon_core.domain.ports import CouponCatalog, InFlightReader


OVERRIDES: dict[Callable[..., Any], Callable[..., Any]] = {}
_FORGOTTEN: list[Callable[[], None]] = []  # how to clear every cache built from the wiring


def forgotten_with_the_wiring[F: Callable[..., Any]](cached: F) -> F:
    """Mark a ``functools.cache`` built from the wiring: :func:`reset` clears it too."""
    _FORGOTTEN.append(cast("Any", cached).cache_clear)
    return cached


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


@forgotten_with_the_wiring
@functools.cache
def engine_for(settings: IntakeSettings) -> "Engine":
    """The SQLAlchemy engine of ``settings``, built on the first request that needs the database
    (SQLAlchemy is imported then, not at cold start)."""
    from coupon_core.adapters.postgres.engine import make_engine  # noqa: PLC0415

    return make_engine(settings.database)


@forgotten_with_the_wiring
@functools.cache
def catalog_for(settings: IntakeSettings) -> "CouponCatalog":
    """The coupon catalog (PostgreSQL) of ``settings``, built on first use."""
    from coupon_core.adapters.postgres.catalog import SqlCouponCatalog  # noqa: PLC0415

    return SqlCouponCatalog(engine_for(settings))


@forgotten_with_the_wiring
@functools.cache
def _in_flight(settings: IntakeSettings) -> "InFlightReader":
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
        lambda: catalog_for(settings),
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
    of paying for them. An unreachable server must not stop the container from starting: such a
    failure is logged and the first request connects (or reports a wrong variable) as it would
    have anyway. A kafka-python without the internals the publisher reads does stop it, loudly.
    """
    try:
        parts = wiring()
        parts.client.ping()
        parts.publisher.connect()
    except KafkaInternalsChangedError:
        raise
    except Exception:  # logged; the request path connects again, and reports what is wrong
        logger.warning("could not connect while initialising; the first request will", exc_info=True)


def settings() -> IntakeSettings:
    return wiring().settings


def issue_service() -> IssueService:
    return wiring().service


def reset() -> None:
    """Forget the wiring, and every cache built from it (tests change the environment between cases)."""
    if wiring.cache_info().currsize:
        wiring().publisher.close()
        wiring().client.close()
    wiring.cache_clear()
    for clear in _FORGOTTEN:
        clear()
