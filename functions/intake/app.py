"""Intake function: the HTTP API of DESIGN section 3 behind API Gateway (REST, proxy).

Thin by design: parse and validate (Powertools event handler with Pydantic), call the domain,
map the result to a status code and a JSON body. Every answer has ``status``; errors add
``error``, a sentence that says what was wrong.
"""

import time
from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from coupon_core.catalog import NewCoupon
from coupon_core.issuing import IssueOutcome, IssueResult
from coupon_core.observability import logger, metrics
from coupon_core.status import issue_status
from coupon_core.timeutil import from_millis
from functions.intake.dependencies import intake
from functions.intake.schemas import (
    CouponBody,
    CreateCouponRequest,
    ErrorBody,
    IssueAccepted,
    IssueRequest,
    IssueStatusBody,
)
from lua_redis import MAX_BIGINT, StateUnavailableError

RETRY_AFTER_S = "1"

app = APIGatewayRestResolver(enable_validation=True)
PathId = Annotated[int, Path(ge=1, le=MAX_BIGINT, description="positive integer below 2^63")]


class RequestRefusedError(Exception):
    """An answer other than success, raised from a route and turned into JSON by one handler."""

    def __init__(self, status_code: HTTPStatus, status: str, error: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(error)
        self.status_code, self.status, self.error, self.headers = status_code, status, error, headers or {}


def json_response(status_code: HTTPStatus, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    return Response(status_code=status_code, content_type="application/json", body=body, headers=headers)


@app.exception_handler(RequestRefusedError)
def _refused(exc: RequestRefusedError) -> Response:
    return json_response(exc.status_code, {"status": exc.status, "error": exc.error}, exc.headers)


@app.exception_handler(RequestValidationError)
def _invalid(exc: RequestValidationError) -> Response:
    problems = "; ".join(_describe(error) for error in exc.errors())
    return json_response(HTTPStatus.UNPROCESSABLE_ENTITY, {"status": "INVALID_REQUEST", "error": problems})


@app.exception_handler(StateUnavailableError)
def _redis_down(exc: StateUnavailableError) -> Response:
    logger.warning("Redis unavailable", extra={"detail": str(exc)})
    return _unavailable()


@app.not_found
def _no_route(_: Exception) -> Response:
    event = app.current_event
    return json_response(
        HTTPStatus.NOT_FOUND,
        {"status": "NOT_FOUND", "error": f"no route for {event.http_method} {event.path}"},
    )


def _describe(error: dict[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
    if error.get("type") == "json_invalid":
        return "body is not valid JSON"
    return f"{where}: {error.get('msg', 'invalid')}"


def _unavailable() -> Response:
    return json_response(
        HTTPStatus.SERVICE_UNAVAILABLE,
        {"status": "UNAVAILABLE", "error": "temporarily unavailable; nothing was reserved, retry later"},
        {"Retry-After": RETRY_AFTER_S},
    )


def _caller(body_user_id: int | None) -> int:
    """The user id: from the body, or from the token's ``sub`` claim when USER_ID_SOURCE=claims."""
    if intake().settings.user_id_source == "body":
        if body_user_id is None:
            raise RequestRefusedError(HTTPStatus.UNPROCESSABLE_ENTITY, "INVALID_REQUEST", "userId: Field required")
        return body_user_id
    claims = (app.current_event.request_context.authorizer.claims or {}) if app.current_event else {}
    subject = str(claims.get("sub", ""))
    if not subject.isdigit() or not 1 <= int(subject) <= MAX_BIGINT:
        raise RequestRefusedError(HTTPStatus.FORBIDDEN, "FORBIDDEN", "the token carries no numeric user id (claim sub)")
    if body_user_id is not None and body_user_id != int(subject):
        raise RequestRefusedError(HTTPStatus.FORBIDDEN, "FORBIDDEN", "userId differs from the user id in the token")
    return int(subject)


_CONFLICTS = {
    IssueOutcome.DUPLICATE: "user {user} already holds coupon {coupon}",
    IssueOutcome.SOLD_OUT: "coupon {coupon} is sold out",
    IssueOutcome.NOT_OPEN: "the issue window of coupon {coupon} has not opened yet",
    IssueOutcome.ENDED: "the issue window of coupon {coupon} has ended",
}


def _issue_response(result: IssueResult, coupon_id: int, user_id: int) -> Response:
    if result.outcome is IssueOutcome.SUCCESS and result.message is not None:
        return json_response(
            HTTPStatus.ACCEPTED,
            {
                "status": "SUCCESS",
                "couponId": coupon_id,
                "userId": user_id,
                "requestId": str(result.message.request_id),
                "reservedAt": from_millis(result.message.reserved_at).isoformat(timespec="milliseconds"),
            },
        )
    if result.outcome is IssueOutcome.COUPON_NOT_FOUND:
        raise RequestRefusedError(HTTPStatus.NOT_FOUND, "COUPON_NOT_FOUND", f"coupon {coupon_id} does not exist")
    if result.outcome in _CONFLICTS:
        error = _CONFLICTS[result.outcome].format(user=user_id, coupon=coupon_id)
        raise RequestRefusedError(HTTPStatus.CONFLICT, result.outcome.value, error)
    logger.warning("issue request unavailable", extra={"detail": result.detail, "releaseFailed": result.release_failed})
    return _unavailable()


def _documented(success: tuple[int, str, type[BaseModel]], errors: dict[int, str] | None = None) -> dict[int, Any]:
    """OpenAPI responses of a route: its success model, and ErrorBody for each error status."""
    code, description, model = success
    responses: dict[int, Any] = {code: {"description": description, "content": {"application/json": {"model": model}}}}
    all_errors = {422: "INVALID_REQUEST: the request is malformed; the error says how", **(errors or {})}
    for status_code, text in all_errors.items():
        responses[status_code] = {"description": text, "content": {"application/json": {"model": ErrorBody}}}
    return responses


@app.post(
    "/coupon-issues",
    summary="Request a coupon: first come, first served",
    responses=_documented(
        (202, "SUCCESS: reserved and durably queued; persisted asynchronously", IssueAccepted),
        {
            403: "FORBIDDEN: userId differs from the token's user (USER_ID_SOURCE=claims)",
            404: "COUPON_NOT_FOUND",
            409: "DUPLICATE, SOLD_OUT, NOT_OPEN or ENDED",
            503: "UNAVAILABLE: nothing reserved; retry after the Retry-After header",
        },
    ),
)
def request_coupon(request: Annotated[IssueRequest, Body()]) -> Response[dict[str, Any]]:
    user_id = _caller(request.userId)
    started = time.perf_counter()
    result = intake().service.issue(request.couponId, user_id)
    metrics.add_metric(name="IssueLatency", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000)
    metrics.add_metric(name=f"Issue{result.outcome.value.title().replace('_', '')}", unit=MetricUnit.Count, value=1)
    if result.release_failed:
        metrics.add_metric(name="ReleaseFailed", unit=MetricUnit.Count, value=1)
    logger.append_keys(couponId=request.couponId, userId=user_id)
    return _issue_response(result, request.couponId, user_id)


@app.get(
    "/coupons/<couponId>/issues/<userId>",
    summary="Where a user's request stands",
    responses=_documented(
        (200, "NONE, PENDING (reserved, not yet persisted), ISSUED or FAILED", IssueStatusBody),
        {404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"},
    ),
)
def get_issue_status(
    couponId: PathId,  # noqa: N803
    userId: PathId,  # noqa: N803
) -> Response[dict[str, Any]]:
    user_id = _caller(userId) if intake().settings.user_id_source == "claims" else userId
    status = issue_status(intake().catalog(), intake().store, couponId, user_id)
    if status is None:
        raise RequestRefusedError(HTTPStatus.NOT_FOUND, "COUPON_NOT_FOUND", f"coupon {couponId} does not exist")
    return json_response(HTTPStatus.OK, {"status": status.value, "couponId": couponId, "userId": user_id})


@app.post(
    "/coupons",
    summary="Create a coupon (admin)",
    responses=_documented((201, "CREATED", CouponBody)),
)
def create_coupon(request: Annotated[CreateCouponRequest, Body()]) -> Response[dict[str, Any]]:
    coupon = (
        intake()
        .catalog()
        .create(NewCoupon(request.name, request.totalQuantity, request.issueStartsAt, request.issueEndsAt))
    )
    logger.info("coupon created", extra={"couponId": coupon.coupon_id})
    return json_response(HTTPStatus.CREATED, _coupon_body("CREATED", coupon, reserved=0))


@app.get(
    "/coupons/<couponId>",
    summary="A coupon with its database and Redis counts (admin)",
    responses=_documented((200, "OK", CouponBody), {404: "COUPON_NOT_FOUND", 503: "UNAVAILABLE"}),
)
def get_coupon(couponId: PathId) -> Response[dict[str, Any]]:  # noqa: N803
    coupon = intake().catalog().find(couponId)
    if coupon is None:
        raise RequestRefusedError(HTTPStatus.NOT_FOUND, "COUPON_NOT_FOUND", f"coupon {couponId} does not exist")
    return json_response(HTTPStatus.OK, _coupon_body("OK", coupon, reserved=intake().store.reserved_count(couponId)))


def _coupon_body(status: str, coupon: Any, *, reserved: int) -> dict[str, Any]:
    return {
        "status": status,
        "couponId": coupon.coupon_id,
        "name": coupon.name,
        "totalQuantity": coupon.total_quantity,
        "remainingQuantity": coupon.remaining_quantity,
        "issued": coupon.issued,
        "reserved": reserved,
        "issueStartsAt": coupon.issue_starts_at.isoformat(),
        "issueEndsAt": coupon.issue_ends_at.isoformat(),
    }


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
