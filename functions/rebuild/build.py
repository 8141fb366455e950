"""Builder function: the state the intake found missing, built for the intake that waits for it
(docs/design.md, Flow and Redis state).

Thin: the intake's ``{"stateMissing": N}`` is validated (``event_parsing.py``; anything else is
refused), the coupon's state is built (``Reconciler.build``), and its outcome is the answer:
``{"couponId": N, "state": "READY" | "COUPON_NOT_FOUND" | "ENDED" | "BUILDING"}``.
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.observability import logger
from coupon_core.tracing import tracer
from functions.rebuild.dependencies import wiring
from functions.rebuild.event_parsing import state_missing


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    coupon_id = state_missing(event)
    return {"couponId": coupon_id, "state": wiring().reconciler.build(coupon_id).value}
