"""``POST /coupons/{couponId}/issues/{userId}/use`` and ``.../cancel``: an issued copy used
once, or canceled and returned to stock (public routes)."""

from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from coupon_core.domain.lifecycle import CancelOutcome, LifecycleService, UseOutcome
from functions.coupons.dependencies import CallerParam, lifecycle
from functions.coupons.routes.responses import from_model
from functions.http_api.answers import RequestRefusedError, answered
from functions.http_api.openapi_answers import FORBIDDEN, documented
from functions.http_api.parameters import IdempotencyKey, PathId
from functions.http_api.schemas import CancelBody, UseBody

router = Router()
answered(UseOutcome, besides={UseOutcome.USED})
answered(CancelOutcome, besides={CancelOutcome.CANCELED})

Service = Annotated[LifecycleService, Depends(lifecycle)]


@router.post(
    "/coupons/<couponId>/issues/<userId>/use",
    summary="Use an issued coupon (once)",
    responses=documented(
        (200, "USED (the same answer again for a repeat with the same Idempotency-Key)", UseBody),
        {
            403: FORBIDDEN,
            404: "COUPON_NOT_FOUND",
            409: "ALREADY_USED, CANCELED, EXPIRED, PENDING (retry shortly) or NOT_ISSUED",
            503: "UNAVAILABLE",
        },
    ),
)
def use(
    *,
    couponId: PathId,  # noqa: N803 - path parameters are camelCase on the wire
    userId: PathId,  # noqa: N803
    caller: CallerParam,
    service: Service,
    idempotency_key: IdempotencyKey = None,
) -> Response[dict[str, Any]]:
    user_id = caller.user_id(userId)
    result = service.use(couponId, user_id, key=idempotency_key)
    if result.outcome is not UseOutcome.USED or result.used_at is None:
        raise RequestRefusedError(result.outcome.value, coupon=couponId, user=user_id)
    return from_model(
        HTTPStatus.OK, UseBody(status="USED", couponId=couponId, userId=user_id, usedAt=result.used_at.isoformat())
    )


@router.post(
    "/coupons/<couponId>/issues/<userId>/cancel",
    summary="Cancel an issued coupon: its copy goes back to stock",
    responses=documented(
        (200, "CANCELED (the same answer again for a repeat with the same Idempotency-Key)", CancelBody),
        {
            403: FORBIDDEN,
            404: "COUPON_NOT_FOUND",
            409: "ALREADY_CANCELED, USED, EXPIRED, PENDING (retry shortly) or NOT_ISSUED",
            503: "UNAVAILABLE",
        },
    ),
)
def cancel(
    *,
    couponId: PathId,  # noqa: N803 - path parameters are camelCase on the wire
    userId: PathId,  # noqa: N803
    caller: CallerParam,
    service: Service,
    idempotency_key: IdempotencyKey = None,
) -> Response[dict[str, Any]]:
    user_id = caller.user_id(userId)
    result = service.cancel(couponId, user_id, key=idempotency_key)
    if result.outcome is not CancelOutcome.CANCELED or result.canceled_at is None:
        raise RequestRefusedError(result.outcome.value, coupon=couponId, user=user_id)
    body = CancelBody(status="CANCELED", couponId=couponId, userId=user_id, canceledAt=result.canceled_at.isoformat())
    return from_model(HTTPStatus.OK, body)
