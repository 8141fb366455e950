"""Rebuild function: reconciles Redis with the database (DESIGN sections 2 and 4).

Two events: the EventBridge schedule, which reconciles every coupon open now, ended within
RECONCILE_LOOKBACK_HOURS or opening within RECONCILE_LOOKAHEAD_MINUTES (so a sale starts with
its state ready); and an on-demand ``{"couponId": N}`` or ``{"couponId": [N, ...]}``. Anything
else is refused with a message that says what was expected, before anything changes.
"""

import functools
from typing import Annotated, Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from coupon_core.db.catalog import SqlCouponCatalog
from coupon_core.db.engine import make_engine
from coupon_core.observability import logger, metrics
from coupon_core.rebuild import STATE_LOCK_WAIT_S, Rebuilder, RebuildReport
from coupon_core.settings import RebuildSettings
from coupon_core.tracing import tracer
from lua_redis import MAX_BIGINT, ReservationStore, connect

CouponId = Annotated[StrictInt, Field(ge=1, le=MAX_BIGINT)]


class OnDemand(BaseModel):
    model_config = ConfigDict(extra="forbid")

    couponId: CouponId | Annotated[list[CouponId], Field(min_length=1, max_length=1_000)]  # noqa: N815


class InvalidRebuildEventError(ValueError):
    """The event is neither the schedule nor an on-demand request."""


@functools.cache
def rebuilder() -> tuple[Rebuilder, RebuildSettings]:
    settings = RebuildSettings.from_env()
    client = connect(settings.redis.url, socket_timeout=STATE_LOCK_WAIT_S + 5)  # BLPOP waits on this socket
    store = ReservationStore(client)
    catalog = SqlCouponCatalog(make_engine(settings.database))
    return Rebuilder(
        store, client, catalog, retention_ms=settings.state_retention_ms, skew_ms=settings.skew_ms
    ), settings


def coupons_to_reconcile(event: Any, service: Rebuilder, settings: RebuildSettings) -> list[int]:
    if (
        isinstance(event, dict)
        and event.get("source") == "aws.events"
        and event.get("detail-type") == "Scheduled Event"
    ):
        return service.coupons_near_their_window(settings.lookback_ms, settings.lookahead_ms)
    try:
        request = OnDemand.model_validate(event)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'event'}: {e['msg']}" for e in exc.errors())
        raise InvalidRebuildEventError(
            f'expected a scheduled EventBridge event or {{"couponId": N | [N, ...]}}; {problems}'
        ) from None
    coupon_ids = request.couponId if isinstance(request.couponId, list) else [request.couponId]
    coupon_ids = list(dict.fromkeys(coupon_ids))
    service.check_known(coupon_ids)
    return coupon_ids


def _emit(report: RebuildReport) -> None:
    for coupon in report.reconciled:
        metrics.add_metric(name="ReconcileAdded", unit=MetricUnit.Count, value=coupon.added)
        metrics.add_metric(name="ReconcileReleased", unit=MetricUnit.Count, value=coupon.released)
        metrics.add_metric(name="ReconcileDeferred", unit=MetricUnit.Count, value=coupon.deferred)
        metrics.add_metric(name="ReconcileDrift", unit=MetricUnit.Count, value=coupon.added + coupon.released)
        metrics.add_metric(name="ReconcileReserved", unit=MetricUnit.Count, value=coupon.reserved)
        metrics.add_metric(name="ReconcileDuration", unit=MetricUnit.Milliseconds, value=coupon.durationMs)
    metrics.add_metric(name="ReconcileFailed", unit=MetricUnit.Count, value=len(report.failed))


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    service, settings = rebuilder()
    coupon_ids = coupons_to_reconcile(event, service, settings)
    report = service.rebuild(coupon_ids)
    _emit(report)
    logger.info("reconcile finished", extra={"report": report.as_dict()})
    return report.as_dict()
