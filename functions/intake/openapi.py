"""``POST /coupon-issues`` as OpenAPI describes it: a Powertools route the intake never serves.

The intake answers without a resolver (``app.py`` says why), so its route is declared here,
with the same models and parameters the coupons function's routes use, for the one purpose of
the API's document: ``local/tools/openapi.py`` adds this router to the coupons function's routes
and writes docs/openapi.json. The contract tests hold the intake's answers to that document
(``tests/services/test_fuzz.py``), and ``tests/unit/functions/intake`` to its statuses.
"""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from functions.http_api.openapi_answers import FORBIDDEN, documented
from functions.http_api.parameters import IdempotencyKey
from functions.http_api.schemas import IssueAccepted
from functions.intake.request import METHOD, PATH, IssueRequest

router = Router()


@router.route(
    PATH,
    method=METHOD,
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
    request: Annotated[IssueRequest, Body()], idempotency_key: IdempotencyKey = None
) -> Response[dict[str, Any]]:
    raise NotImplementedError("described, never served: the intake's handler answers this route (app.py)")
