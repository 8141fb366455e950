"""``POST /coupons`` and ``GET /coupons/{couponId}``: the admin routes (IAM-authorised on AWS)."""

from http import HTTPStatus
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from coupon_core.domain.coupons import Coupon, Validity
from coupon_core.domain.operations import CouponAdmin, NewCoupon
from coupon_core.domain.ports import CouponCatalog, Reservations
from coupon_core.observability import logger
from functions.coupons.dependencies import catalog, coupon_admin, reservations
from functions.coupons.routes.responses import from_model
from functions.http_api.answers import RequestRefusedError
from functions.http_api.openapi_answers import documented
from functions.http_api.parameters import PathId
from functions.http_api.schemas import CouponBody, CreateCouponRequest

router = Router()

Catalog = Annotated[CouponCatalog, Depends(catalog)]


def coupon_body(status: Literal["CREATED", "OK"], coupon: Coupon, *, reserved: int) -> CouponBody:
    return CouponBody(
        status=status,
        couponId=coupon.coupon_id,
        name=coupon.name,
        totalQuantity=coupon.total_quantity,
        remainingQuantity=coupon.remaining_quantity,
        issued=coupon.issued,
        reserved=reserved,
        issueStartsAt=coupon.issue_starts_at.isoformat(),
        issueEndsAt=coupon.issue_ends_at.isoformat(),
        validUntil=coupon.validity.until.isoformat() if coupon.validity.until else None,
        validDays=coupon.validity.days,
        reissueAfterCancel=coupon.reissue_after_cancel,
        closed=coupon.closed,
    )


@router.post(
    "/coupons",
    summary="Create a coupon (admin)",
    responses=documented((201, "CREATED", CouponBody), {503: "UNAVAILABLE"}),
)
def create_coupon(
    request: Annotated[CreateCouponRequest, Body()], admin: Annotated[CouponAdmin, Depends(coupon_admin)]
) -> Response[dict[str, Any]]:
    validity = Validity(request.validUntil, request.validDays)
    coupon = admin.create(
        NewCoupon(
            request.name,
            request.totalQuantity,
            request.issueStartsAt,
            request.issueEndsAt,
            validity,
            reissue_after_cancel=request.reissueAfterCancel,
        )
    )
    logger.info("coupon created", extra={"couponId": coupon.coupon_id})
    return from_model(HTTPStatus.CREATED, coupon_body("CREATED", coupon, reserved=0))


@router.get(
    "/coupons/<couponId>",
    summary="A coupon with its database and Redis counts (admin)",
    responses=documented((200, "OK", CouponBody), {404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"}),
)
def get_coupon(
    couponId: PathId,  # noqa: N803 - path parameters are camelCase on the wire
    coupons: Catalog,
    store: Annotated[Reservations, Depends(reservations)],
) -> Response[dict[str, Any]]:
    coupon = coupons.find(couponId)
    if coupon is None:
        raise RequestRefusedError("COUPON_NOT_FOUND", coupon=couponId)
    return from_model(HTTPStatus.OK, coupon_body("OK", coupon, reserved=store.reserved_count(couponId)))
