"""``POST /coupon-issues`` and ``GET /coupons/{couponId}/issues/{userId}``: the public routes."""

from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from coupon_core.domain.issuing import IssueService
from coupon_core.domain.ports import CouponCatalog, Reservations
from coupon_core.domain.status import issue_status
from functions.intake import issue_route
from functions.intake.answers import RequestRefusedError
from functions.intake.dependencies import issue_service
from functions.intake.route_dependencies import catalog, reservations
from functions.intake.routes.asker import Asker
from functions.intake.routes.responses import FORBIDDEN, as_response, documented, from_model
from functions.intake.schemas import IdempotencyKey, IssueAccepted, IssueRequest, IssueStatusBody, PathId

router = Router()


@router.post(
    "/coupon-issues",
    summary="Request a coupon: first come, first served",
    responses=documented(
        (202, "SUCCESS: reserved and durably queued; persisted asynchronously", IssueAccepted),
        {
            403: FORBIDDEN,
            404: "COUPON_NOT_FOUND",
            409: "DUPLICATE, SOLD_OUT, NOT_OPEN, ENDED or CLOSED (by its operators)",
            422: "INVALID_REQUEST: the request is malformed; KEY_REUSED: the Idempotency-Key was used with "
            "another body",
            503: "UNAVAILABLE: nothing reserved; retry after the Retry-After header. UNCONFIRMED: reserved, and "
            "the request may have been accepted: ask the status route before sending it again",
        },
    ),
)
def request_coupon(
    request: Annotated[IssueRequest, Body()],
    asker: Asker,
    service: Annotated[IssueService, Depends(issue_service)],
    idempotency_key: IdempotencyKey = None,
) -> Response[dict[str, Any]]:
    # Most requests never reach this: the express lane (express.py) answers a well-formed one first.
    return as_response(issue_route.request_coupon(service, asker, request.couponId, request.userId, idempotency_key))


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
    asker: Asker,
    coupons: Annotated[CouponCatalog, Depends(catalog)],
    store: Annotated[Reservations, Depends(reservations)],
) -> Response[dict[str, Any]]:
    user_id = asker.user_id(userId)
    status = issue_status(coupons, store, couponId, user_id)
    if status is None:
        raise RequestRefusedError("COUPON_NOT_FOUND", coupon=couponId)
    return from_model(HTTPStatus.OK, IssueStatusBody(status=status.value, couponId=couponId, userId=user_id))
