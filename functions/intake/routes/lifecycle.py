"""``POST /coupons/{couponId}/issues/{userId}/use``: an issued copy, used once (public route)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from coupon_core.domain.lifecycle import IssueLifecycle, UseOutcome, use_coupon
from coupon_core.domain.ports import CouponCatalog, Reservations
from functions.intake.answers import answer, documented
from functions.intake.caller import Caller, caller
from functions.intake.dependencies import catalog, lifecycle, reservations
from functions.intake.errors import RequestRefusedError, coupon_not_found
from functions.intake.schemas import IdempotencyKey, PathId, UseBody

router = Router()

_REFUSALS = {
    UseOutcome.ALREADY_USED: "user {user}'s copy of coupon {coupon} is already used",
    UseOutcome.CANCELED: "user {user}'s copy of coupon {coupon} was canceled",
    UseOutcome.EXPIRED: "user {user}'s copy of coupon {coupon} has expired",
    UseOutcome.PENDING: "user {user}'s copy of coupon {coupon} is not persisted yet; retry in a moment",
    UseOutcome.NOT_ISSUED: "user {user} holds no copy of coupon {coupon}",
}


@router.post(
    "/coupons/<couponId>/issues/<userId>/use",
    summary="Use an issued coupon (once)",
    responses=documented(
        (200, "USED (the same answer again for a repeat with the same Idempotency-Key)", UseBody),
        {
            403: "FORBIDDEN: userId differs from the token's user (USER_ID_SOURCE=claims)",
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
    asker: Annotated[Caller, Depends(caller)],
    issues: Annotated[IssueLifecycle, Depends(lifecycle)],
    coupons: Annotated[CouponCatalog, Depends(catalog)],
    store: Annotated[Reservations, Depends(reservations)],
    idempotency_key: IdempotencyKey = None,
) -> Response[dict[str, Any]]:
    user_id = asker.user_id(userId)
    result = use_coupon(issues, coupons, store, couponId, user_id, key=idempotency_key)
    if result.outcome is UseOutcome.USED and result.used_at is not None:
        body = UseBody(status="USED", couponId=couponId, userId=user_id, usedAt=result.used_at.isoformat())
        return answer(HTTPStatus.OK, body)
    if result.outcome is UseOutcome.COUPON_NOT_FOUND:
        raise coupon_not_found(couponId)
    error = _REFUSALS[result.outcome].format(user=user_id, coupon=couponId)
    raise RequestRefusedError(HTTPStatus.CONFLICT, result.outcome.value, error)
