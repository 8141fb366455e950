"""The answer to a valid issue request: issue, count, log, and map the outcome.

:func:`answer_issue` calls the domain once (``IssueService.issue``), prints the answer's metrics
line (``issue_metrics.py``), and answers a success with its body and any other outcome with its
refusal (``functions/http_api/answers.py``'s ``REFUSALS``). Plain data only: importing it costs
no framework.
"""

from __future__ import annotations

import time
from http import HTTPStatus

from coupon_core.domain.issuing import IssueOutcome, IssueResult, IssueService
from coupon_core.observability import logger
from coupon_core.timeutil import from_millis
from functions.http_api.answers import Answer, refusal
from functions.intake import issue_metrics

# Outcomes answered by their refusal as they are; the others need the record or a warning.
_REFUSED = frozenset(IssueOutcome) - {IssueOutcome.SUCCESS, IssueOutcome.UNCONFIRMED, IssueOutcome.UNAVAILABLE}


def answer_issue(service: IssueService, coupon_id: int, user_id: int, idempotency_key: str | None) -> Answer:
    """Issue one copy of ``coupon_id`` to ``user_id``, and the answer to it."""
    started = time.perf_counter()
    result = service.issue(coupon_id, user_id, idempotency_key)
    latency_ms = (time.perf_counter() - started) * 1000
    issue_metrics.count(result.outcome, latency_ms, release_failed=result.release_failed)
    # No user id in the logs: the request id names the request, and the database maps it to its
    # user for whoever may see that (coupon_issues.request_id, coupon_issue_failures.request_id).
    logger.append_keys(couponId=coupon_id, requestId=str(result.message.request_id) if result.message else None)
    return _answer(result, coupon_id, user_id)


def _answer(result: IssueResult, coupon_id: int, user_id: int) -> Answer:
    message = result.message
    if result.outcome is IssueOutcome.SUCCESS and message is not None:
        reserved_at = from_millis(message.reserved_at).isoformat(timespec="milliseconds")
        body = {"status": "SUCCESS", "couponId": coupon_id, "userId": user_id}
        return Answer(HTTPStatus.ACCEPTED, body | {"requestId": str(message.request_id), "reservedAt": reserved_at})
    if result.outcome is IssueOutcome.UNCONFIRMED and message is not None:
        return refusal("UNCONFIRMED", coupon=coupon_id, user=user_id, request=message.request_id)
    if result.outcome in _REFUSED:
        return refusal(result.outcome.value, coupon=coupon_id, user=user_id)
    logger.warning("issue request unavailable", extra={"detail": result.detail, "releaseFailed": result.release_failed})
    return refusal("UNAVAILABLE")
