"""Rebuild function: reconciles Redis with the database (docs/design.md, Flow and Redis state).

Thin: tell the event apart (``event_parsing.py``), pick the coupons (near their window for the
schedule, the named ones on demand, refused before anything changes if one does not exist),
reconcile them, emit the report as metrics and return it. The intake's missing states are the
builder's (``build.py``), a function of its own.
"""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.domain.reconcile import ReconcileReport
from coupon_core.observability import logger, metrics
from coupon_core.tracing import tracer
from functions.rebuild.dependencies import wiring
from functions.rebuild.event_parsing import is_scheduled, on_demand_coupons


def coupons_to_reconcile(event: Any) -> list[int]:
    settings, reconciler = wiring().settings, wiring().reconciler
    if is_scheduled(event):
        return reconciler.coupons_near_their_window(settings.reconcile.lookback_ms, settings.reconcile.lookahead_ms)
    coupon_ids = on_demand_coupons(event)
    reconciler.check_known(coupon_ids)
    return coupon_ids


def _emit(report: ReconcileReport) -> None:
    for coupon in report.reconciled:
        metrics.add_metric(name="ReconcileAdded", unit=MetricUnit.Count, value=coupon.added)
        metrics.add_metric(name="ReconcileReleased", unit=MetricUnit.Count, value=coupon.released)
        metrics.add_metric(name="ReconcileDeferred", unit=MetricUnit.Count, value=coupon.deferred)
        metrics.add_metric(name="ReconcileStray", unit=MetricUnit.Count, value=coupon.stray)
        metrics.add_metric(name="ReconcileInFlight", unit=MetricUnit.Count, value=coupon.inFlight)
        # reserved users neither issued nor in flight, and holders Redis had lost
        metrics.add_metric(name="ReconcileDrift", unit=MetricUnit.Count, value=coupon.added + coupon.stray)
        metrics.add_metric(name="ReconcileReserved", unit=MetricUnit.Count, value=coupon.reserved)
        metrics.add_metric(name="ReconcileDuration", unit=MetricUnit.Milliseconds, value=coupon.durationMs)
    metrics.add_metric(name="ReconcileFailed", unit=MetricUnit.Count, value=len(report.failed))
    metrics.add_metric(
        name="ReconcileInFlightUnknown", unit=MetricUnit.Count, value=int(report.inFlightError is not None)
    )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = wiring().reconciler.reconcile(coupons_to_reconcile(event))
    _emit(report)
    logger.info("reconcile finished", extra={"report": report.as_dict()})
    return report.as_dict()
