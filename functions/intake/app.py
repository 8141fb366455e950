"""Intake function: ``POST /coupon-issues`` behind API Gateway (REST, Lambda proxy), and nothing
else (every other route is the coupons function's, ``functions/coupons``).

Nearly every request of a flash sale is this one, hundreds of thousands of times a minute, so
the handler is plain: a body declared as anything but JSON is refused (``request.refused``), the
request is read and validated (``functions/intake/request.py``, ``issue_request``), the caller names the user
(``request.Caller``), the domain issues (``IssueService.issue``, once), the answer is counted
(:func:`count_issue`, by ``observability``'s names), and the outcome is mapped to its answer in the API's one format:
a success to its body, anything else to its refusal (``answers.REFUSALS``). It is not on
Powertools' resolver: a single route needs no router, and the answers are the coupons
function's (``functions/http_api``).

Logger's ``inject_lambda_context`` gives every line the API Gateway request id as correlation id,
and ``log_metrics`` flushes each answer's metrics as one line. In a Lambda runtime the module also
opens its Redis connection and its Kafka producer while the container initialises
(``dependencies.open_connections``), so that the first request of a new container is not the one
that pays for them.
"""

import os
import time
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent, event_source
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core import observability
from coupon_core.domain.issuing import IssueResult, IssueService
from coupon_core.domain.records import from_millis
from coupon_core.domain.reservations import IssueOutcome
from coupon_core.observability import logger, metrics
from functions.http_api import request
from functions.http_api.answers import Answer, RequestRefusedError, refusal
from functions.intake import dependencies
from functions.intake.request import arrived_at, issue_request

DETAIL_CHARS = 300  # of a 503's cause in its warning line: a server's error can be long, the line is not
_NOTHING_DONE = {IssueOutcome.SUCCESS, IssueOutcome.UNCONFIRMED, IssueOutcome.UNAVAILABLE}


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@metrics.log_metrics
@event_source(data_class=APIGatewayProxyEvent)
def handler(event: APIGatewayProxyEvent, context: LambdaContext) -> dict[str, Any]:
    answer = (request.refused(event) or _respond(event)).proxy_result()
    return request.with_cors(event, answer)


def _respond(event: APIGatewayProxyEvent) -> Answer:
    try:
        issue, idempotency_key = issue_request(event)
        parts = dependencies.wiring()
        user_id = request.caller_of(event, parts.settings.caller).user_id(issue.userId)
        return answer_issue(parts.service, issue.couponId, user_id, idempotency_key, arrived_at(event))
    except RequestRefusedError as refused:
        return refused.answer


def answer_issue(
    service: IssueService, coupon_id: int, user_id: int, idempotency_key: str | None, arrived_at: int | None
) -> Answer:
    """Issue one copy of ``coupon_id`` to ``user_id``, and the answer to it; ``arrived_at`` is when
    API Gateway received the request, which the answer's metrics line carries with its decision's time."""
    started = time.perf_counter()
    result = service.issue(coupon_id, user_id, idempotency_key)
    latency_ms = (time.perf_counter() - started) * 1000
    decided_at = result.decided_at if result.decided_at is not None else time.time_ns() // 1_000_000
    count_issue(result, latency_ms, coupon_id, arrived_at, decided_at)
    # No user id in the logs: the request id names the request, and the database maps it to its
    # user for whoever may see that (coupon_issues.request_id, coupon_issue_failures.request_id).
    logger.append_keys(couponId=coupon_id, requestId=str(result.record.request_id) if result.record else None)
    return _mapped(result, coupon_id, user_id)


def count_issue(
    result: IssueResult, latency_ms: float, coupon_id: int, arrived_at: int | None, decided_at: int
) -> None:
    """Count one answer: its latency, its outcome, an answer from the memory, a refresh of it, a
    failed release; and beside them, as the line's properties, the coupon, the outcome, the
    request's arrival at API Gateway (``arrived_at``, epoch ms on its clock; None: the event has
    none), ``decided_at`` (epoch ms), the request id that joins a click's attempts, and the
    time of the earlier decision an answer repeats (``replays``). Never the user or the key.
    Flushed as one line when the handler returns."""
    metrics.add_metric(name=observability.ISSUE_LATENCY, unit=MetricUnit.Milliseconds, value=latency_ms)
    flags = {
        observability.ISSUE_COUNT_OF[result.outcome]: True,
        observability.FROM_MEMORY: result.remembered,
        observability.MEMORY_REFRESH: result.learned,
        observability.RELEASE_FAILED: result.release_failed,
    }
    for name in (name for name, flag in flags.items() if flag):
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
    properties: dict[str, object] = {"couponId": coupon_id, "outcome": result.outcome.value, "decidedAt": decided_at}
    if arrived_at is not None:
        properties["arrivedAt"] = arrived_at
    if result.request_id is not None:
        properties["requestId"] = str(result.request_id)
    if result.replays is not None:
        properties["replays"] = result.replays
    for key, value in properties.items():
        metrics.add_metadata(key=key, value=value)


def _mapped(result: IssueResult, coupon_id: int, user_id: int) -> Answer:
    """The answer to an outcome: a success's body, or its refusal (``answers.REFUSALS``, which
    answers every outcome: checked at import)."""
    record, outcome = result.record, result.outcome
    if outcome is IssueOutcome.SUCCESS and record is not None:
        reserved_at = from_millis(record.reserved_at).isoformat(timespec="milliseconds")
        body = {"status": "SUCCESS", "couponId": coupon_id, "userId": user_id}
        return Answer(HTTPStatus.ACCEPTED, body | {"requestId": str(record.request_id), "reservedAt": reserved_at})
    if outcome is IssueOutcome.UNCONFIRMED and record is not None:
        return refusal(outcome, coupon=coupon_id, user=user_id, request=record.request_id)
    if outcome in _NOTHING_DONE:  # without its record a success is not one: nothing the client may rely on was done
        logger.warning("issue request unavailable", extra={"detail": result.detail[:DETAIL_CHARS],
                                                           "releaseFailed": result.release_failed})  # fmt: skip
        return refusal(IssueOutcome.UNAVAILABLE)
    return refusal(outcome, coupon=coupon_id, user=user_id)


if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE"):  # set by Lambda during INIT: connect now
    dependencies.open_connections()
