"""The collaborators only the resolver's routes use, apart from the hot path's (``dependencies.py``).

A sale's requests take the express lane, which imports ``dependencies.py`` alone. These
providers, and the domain services they build (the copies' lifecycle, the operators' admin and
on-demand reconcile, the state sync), are imported with the resolver, on the first request that
needs it: about 9 ms of the intake's cold start that the express lane never uses
(docs/benchmarks.md). Like the wiring they are built once per container, and
``dependencies.reset`` forgets them with it.
"""

import functools

from coupon_core.domain.issuing import StateInitialiser
from coupon_core.domain.lifecycle import LifecycleService
from coupon_core.domain.operations import CouponAdmin, OnDemandReconcile
from coupon_core.domain.ports import CouponCatalog, Reservations
from coupon_core.domain.state_sync import StateSync
from coupon_core.errors import UnavailableError
from coupon_core.settings.intake import IntakeSettings
from functions.intake.dependencies import catalog_for, engine_for, forgotten_with_the_wiring, wiring
from lua_redis import CouponLocks


def state_initialiser() -> StateInitialiser:
    return wiring().initialiser


def reservations() -> Reservations:
    return wiring().store


def catalog() -> CouponCatalog:
    return catalog_for(wiring().settings)


def coupon_admin() -> CouponAdmin:
    settings = wiring().settings
    return CouponAdmin(catalog_for(settings), _sync(settings))


def on_demand_reconcile() -> OnDemandReconcile:
    from coupon_core.adapters.lambda_rebuild import RebuildInvoker  # noqa: PLC0415

    name = wiring().settings.rebuild_function.name
    if name is None:
        raise UnavailableError("REBUILD_FUNCTION is not set: this environment cannot reconcile on demand")
    return RebuildInvoker(name)


def lifecycle() -> LifecycleService:
    return _lifecycle(wiring().settings)


@forgotten_with_the_wiring
@functools.cache
def _lifecycle(settings: IntakeSettings) -> LifecycleService:
    from coupon_core.adapters.postgres.lifecycle import SqlIssueLifecycle  # noqa: PLC0415

    store = wiring().store
    return LifecycleService(SqlIssueLifecycle(engine_for(settings)), catalog_for(settings), store, _sync(settings))


@forgotten_with_the_wiring
@functools.cache
def _sync(settings: IntakeSettings) -> StateSync:
    parts = wiring()
    return StateSync(
        catalog_for(settings), parts.store, CouponLocks(parts.client), retention_ms=settings.retention.state_ms
    )
