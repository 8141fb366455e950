"""The answer to a valid issue request: issue, count, log, and map the outcome.

:func:`answer_issue` calls the domain once (``IssueService.issue``), prints the answer's metrics
line (``issue_metrics.py``), and answers a success with its body and any other outcome with its
refusal (``functions/http_api/answers.py``'s ``REFUSALS``). Plain data only: importing it costs
no framework.
"""

from __future__ import annotations

import time
from http import HTTPStatus
from typing import assert_never

from coupon_core.domain.issuing import IssueOutcome, IssueResult, IssueService
from coupon_core.observability import logger
from coupon_core.timeutil import from_millis
from functions.http_api.answers import Answer, refusal
from functions.intake import issue_metrics


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
    """The answer to each outcome: a new one that is not handled here is mypy's error (``assert_never``)."""
    message, outcome = result.message, result.outcome
    match outcome:
        case IssueOutcome.SUCCESS if message is not None:
            reserved_at = from_millis(message.reserved_at).isoformat(timespec="milliseconds")
            body = {"status": "SUCCESS", "couponId": coupon_id, "userId": user_id}
            return Answer(HTTPStatus.ACCEPTED, body | {"requestId": str(message.request_id), "reservedAt": reserved_at})
        case IssueOutcome.UNCONFIRMED if message is not None:
            return refusal(outcome, coupon=coupon_id, user=user_id, request=message.request_id)
        case (
            IssueOutcome.DUPLICATE
            | IssueOutcome.SOLD_OUT
            | IssueOutcome.NOT_OPEN
            | IssueOutcome.ENDED
            | IssueOutcome.CLOSED
            | IssueOutcome.KEY_REUSED
            | IssueOutcome.COUPON_NOT_FOUND
        ):
            return refusal(outcome, coupon=coupon_id, user=user_id)
        case IssueOutcome.SUCCESS | IssueOutcome.UNCONFIRMED | IssueOutcome.UNAVAILABLE | IssueOutcome.STATE_MISSING:
            # without its record a success is not one: nothing the client may rely on was done
            logger.warning("issue request unavailable", extra={"detail": result.detail,
                                                               "releaseFailed": result.release_failed})  # fmt: skip
            return refusal(IssueOutcome.UNAVAILABLE)
        case _:
            assert_never(outcome)
