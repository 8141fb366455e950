"""``POST /coupons/{couponId}/issues/{userId}/use`` and ``.../cancel``: an issued copy used
once, or canceled and returned to stock (public routes)."""

from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from coupon_core.domain.lifecycle import Change, CopyOutcome, LifecycleService
from functions.coupons.dependencies import CallerParam, lifecycle
from functions.coupons.routes.responses import from_model
from functions.http_api.answers import RequestRefusedError, answered
from functions.http_api.openapi_answers import FORBIDDEN, documented
from functions.http_api.parameters import IdempotencyKey, PathId
from functions.http_api.schemas import CancelBody, UseBody

router = Router()
answered(CopyOutcome, besides=())  # USED and CANCELED are each the other change's refusal too

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
    return _changed(Change.USE, couponId, caller.user_id(userId), service, idempotency_key)


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
    return _changed(Change.CANCEL, couponId, caller.user_id(userId), service, idempotency_key)


def _changed(
    change: Change, coupon_id: int, user_id: int, service: LifecycleService, key: str | None
) -> Response[dict[str, Any]]:
    """The answer to a use or a cancel: its body with the change's time, or its refusal."""
    result = service.change(change, coupon_id, user_id, key=key)
    if result.outcome is not change.done or result.at is None:
        raise RequestRefusedError(result.outcome.value, coupon=coupon_id, user=user_id)
    at = result.at.isoformat()
    if change is Change.USE:
        return from_model(HTTPStatus.OK, UseBody(status="USED", couponId=coupon_id, userId=user_id, usedAt=at))
    body = CancelBody(status="CANCELED", couponId=coupon_id, userId=user_id, canceledAt=at)
    return from_model(HTTPStatus.OK, body)
