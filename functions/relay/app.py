"""Relay function: publishes the outbox to ``coupon.events.v1`` (docs/design.md, Event stream).

Run by the schedule every minute, or on demand with ``{}``; anything else is refused before
anything is read. First it expires the issued copies past their validity (their COUPON_EXPIRED
events then go out in the same run), then publishes until the outbox is empty (at most
``MAX_BATCHES`` batches each), and reports how many, and how old the oldest event still waiting is.
"""

from dataclasses import asdict
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.domain.lifecycle import expire_all_due
from coupon_core.domain.outbox_relay import relay
from coupon_core.observability import logger, metrics
from functions.relay.dependencies import wiring
from functions.schedule_events import is_scheduled

MAX_BATCHES = 50


class InvalidRelayEventError(ValueError):
    """The event is neither the schedule nor an on-demand ``{}``."""


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: Any, context: LambdaContext) -> dict[str, Any]:
    if not (is_scheduled(event) or event == {}):
        raise InvalidRelayEventError(f"expected a scheduled EventBridge event or {{}} (on demand); got {event!r:.200}")
    parts = wiring()
    expired = expire_all_due(parts.lifecycle, batch=parts.settings.relay.batch, max_batches=MAX_BATCHES)
    report = relay(parts.outbox, parts.publisher.publish, batch=parts.settings.relay.batch, max_batches=MAX_BATCHES)
    metrics.add_metric(name="CouponsExpired", unit=MetricUnit.Count, value=expired)
    metrics.add_metric(name="OutboxPublished", unit=MetricUnit.Count, value=report.published)
    metrics.add_metric(name="OutboxLagSeconds", unit=MetricUnit.Seconds, value=report.lag_seconds)
    logger.info("outbox relayed", extra={"report": asdict(report), "expired": expired})
    return {**asdict(report), "expired": expired}
