"""``POST /coupon-issues`` and ``GET /coupons/{couponId}/issues/{userId}``: the public routes."""

import time
from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.metrics import MetricUnit

from coupon_core.domain.issuing import IssueOutcome, IssueResult, IssueService
from coupon_core.domain.ports import CouponCatalog, Reservations
from coupon_core.domain.status import issue_status
from coupon_core.observability import logger, metrics
from coupon_core.timeutil import from_millis
from functions.intake.answers import answer, documented, unavailable, unconfirmed
from functions.intake.caller import Caller, caller
from functions.intake.dependencies import catalog, issue_service, reservations
from functions.intake.errors import RequestRefusedError, coupon_not_found
from functions.intake.schemas import IdempotencyKey, IssueAccepted, IssueRequest, IssueStatusBody, PathId

router = Router()

Asker = Annotated[Caller, Depends(caller)]

_CONFLICTS = {
    IssueOutcome.DUPLICATE: "user {user} already holds coupon {coupon}",
    IssueOutcome.SOLD_OUT: "coupon {coupon} is sold out",
    IssueOutcome.NOT_OPEN: "the issue window of coupon {coupon} has not opened yet",
    IssueOutcome.ENDED: "the issue window of coupon {coupon} has ended",
    IssueOutcome.CLOSED: "coupon {coupon} is closed by its operators",
}


def _issue_answer(result: IssueResult, coupon_id: int, user_id: int) -> Response:
    if result.outcome is IssueOutcome.SUCCESS and result.message is not None:
        accepted = IssueAccepted(
            status="SUCCESS",
            couponId=coupon_id,
            userId=user_id,
            requestId=str(result.message.request_id),
            reservedAt=from_millis(result.message.reserved_at).isoformat(timespec="milliseconds"),
        )
        return answer(HTTPStatus.ACCEPTED, accepted)
    if result.outcome is IssueOutcome.COUPON_NOT_FOUND:
        raise coupon_not_found(coupon_id)
    if result.outcome is IssueOutcome.KEY_REUSED:
        raise RequestRefusedError(
            HTTPStatus.UNPROCESSABLE_ENTITY,
            "KEY_REUSED",
            f"this Idempotency-Key was used for another request to coupon {coupon_id}; use a new key",
        )
    if result.outcome in _CONFLICTS:
        error = _CONFLICTS[result.outcome].format(user=user_id, coupon=coupon_id)
        raise RequestRefusedError(HTTPStatus.CONFLICT, result.outcome.value, error)
    if result.outcome is IssueOutcome.UNCONFIRMED and result.message is not None:
        return unconfirmed(coupon_id, user_id, str(result.message.request_id))
    logger.warning("issue request unavailable", extra={"detail": result.detail, "releaseFailed": result.release_failed})
    return unavailable()


def _count(result: IssueResult, started: float) -> None:
    metrics.add_metric(name="IssueLatency", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000)
    metrics.add_metric(name=f"Issue{result.outcome.value.title().replace('_', '')}", unit=MetricUnit.Count, value=1)
    if result.release_failed:
        metrics.add_metric(name="ReleaseFailed", unit=MetricUnit.Count, value=1)


@router.post(
    "/coupon-issues",
    summary="Request a coupon: first come, first served",
    responses=documented(
        (202, "SUCCESS: reserved and durably queued; persisted asynchronously", IssueAccepted),
        {
            403: "FORBIDDEN: userId differs from the token's user (USER_ID_SOURCE=claims)",
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
    user_id = asker.user_id(request.userId)
    started = time.perf_counter()
    result = service.issue(request.couponId, user_id, idempotency_key)
    _count(result, started)
    # No user id in the logs: the request id names the request, and the database maps it to its
    # user for whoever may see that (coupon_issues.request_id, coupon_issue_failures.request_id).
    logger.append_keys(couponId=request.couponId, requestId=str(result.message.request_id) if result.message else None)
    return _issue_answer(result, request.couponId, user_id)


@router.get(
    "/coupons/<couponId>/issues/<userId>",
    summary="Where a user's request stands",
    responses=documented(
        (200, "NONE, PENDING (reserved, not yet persisted), ISSUED or FAILED", IssueStatusBody),
        {404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"},
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
        raise coupon_not_found(couponId)
    return answer(HTTPStatus.OK, IssueStatusBody(status=status.value, couponId=couponId, userId=user_id))
