"""What ``POST /coupon-issues`` does once its request is valid, for both lanes that take it.

The express lane (``express.py``) and the resolver's route (``routes/issues.py``) call
:func:`request_coupon`; it asks the caller for the user, issues, counts and logs, and maps the
outcome to its answer. Plain data only: importing it costs no framework.
"""

from __future__ import annotations

import time
from http import HTTPStatus

from aws_lambda_powertools.metrics import MetricUnit

from coupon_core.domain.issuing import IssueOutcome, IssueResult, IssueService
from coupon_core.observability import logger, metrics
from coupon_core.timeutil import from_millis
from functions.intake.answers import Answer, answer_for, coupon_not_found, error_answer, unavailable, unconfirmed
from functions.intake.caller import Caller

_CONFLICTS = {
    IssueOutcome.DUPLICATE: "user {user} already holds coupon {coupon}",
    IssueOutcome.SOLD_OUT: "coupon {coupon} is sold out",
    IssueOutcome.NOT_OPEN: "the issue window of coupon {coupon} has not opened yet",
    IssueOutcome.ENDED: "the issue window of coupon {coupon} has ended",
    IssueOutcome.CLOSED: "coupon {coupon} is closed by its operators",
}
_METRIC_NAMES = {outcome: f"Issue{outcome.value.title().replace('_', '')}" for outcome in IssueOutcome}


def request_coupon(
    service: IssueService, asker: Caller, coupon_id: int, claimed_user_id: int | None, idempotency_key: str | None
) -> Answer:
    """Issue one copy of ``coupon_id`` to the caller; refusals of the caller itself raise
    :class:`~functions.intake.answers.RequestRefusedError`."""
    user_id = asker.user_id(claimed_user_id)
    started = time.perf_counter()
    result = service.issue(coupon_id, user_id, idempotency_key)
    _count(result, started)
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
    if result.outcome is IssueOutcome.COUPON_NOT_FOUND:
        return answer_for(coupon_not_found(coupon_id))
    if result.outcome is IssueOutcome.KEY_REUSED:
        return error_answer(
            HTTPStatus.UNPROCESSABLE_ENTITY,
            "KEY_REUSED",
            f"this Idempotency-Key was used for another request to coupon {coupon_id}; use a new key",
        )
    if result.outcome in _CONFLICTS:
        error = _CONFLICTS[result.outcome].format(user=user_id, coupon=coupon_id)
        return error_answer(HTTPStatus.CONFLICT, result.outcome.value, error)
    if result.outcome is IssueOutcome.UNCONFIRMED and message is not None:
        return unconfirmed(coupon_id, user_id, str(message.request_id))
    logger.warning("issue request unavailable", extra={"detail": result.detail, "releaseFailed": result.release_failed})
    return unavailable()


def _count(result: IssueResult, started: float) -> None:
    metrics.add_metric(name="IssueLatency", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000)
    metrics.add_metric(name=_METRIC_NAMES[result.outcome], unit=MetricUnit.Count, value=1)
    if result.release_failed:
        metrics.add_metric(name="ReleaseFailed", unit=MetricUnit.Count, value=1)
