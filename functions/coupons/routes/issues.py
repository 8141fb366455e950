"""``GET /coupons/{couponId}/issues/{userId}``: where a user's request stands (public)."""

from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from coupon_core.domain.ports import CouponCatalog, Reservations
from coupon_core.domain.status import issue_status
from functions.coupons.dependencies import CallerParam, catalog, reservations
from functions.coupons.routes.responses import from_model
from functions.http_api.answers import RequestRefusedError
from functions.http_api.openapi_answers import FORBIDDEN, documented
from functions.http_api.parameters import PathId
from functions.http_api.schemas import IssueStatusBody

router = Router()


@router.get(
    "/coupons/<couponId>/issues/<userId>",
    summary="Where a user's request stands",
    responses=documented(
        (
            200,
            "NONE, PENDING (reserved, not yet persisted), ISSUED, USED, CANCELED, EXPIRED or FAILED",
            IssueStatusBody,
        ),
        {403: FORBIDDEN, 404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"},
    ),
)
def get_issue_status(
    couponId: PathId,  # noqa: N803 - path parameters are camelCase on the wire
    userId: PathId,  # noqa: N803
    caller: CallerParam,
    coupons: Annotated[CouponCatalog, Depends(catalog)],
    store: Annotated[Reservations, Depends(reservations)],
) -> Response[dict[str, Any]]:
    user_id = caller.user_id(userId)
    status = issue_status(coupons, store, couponId, user_id)
    if status is None:
        raise RequestRefusedError("COUPON_NOT_FOUND", coupon=couponId)
    return from_model(HTTPStatus.OK, IssueStatusBody(status=status.value, couponId=couponId, userId=user_id))
