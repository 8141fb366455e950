"""Intake function: ``POST /coupon-issues`` behind API Gateway (REST, Lambda proxy), and nothing
else (every other route is the coupons function's, ``functions/coupons``).

Nearly every request of a flash sale is this one, hundreds of thousands of times a minute, so
the handler is plain: a body declared as anything but JSON is refused (``media_type.py``), the
request is read and validated (``issue_request.py``), the caller names the user
(``caller.py``), the domain issues (``issue_answer.py``), and the answer goes back in the API's
one format. Through Powertools' resolver an answer spent about twice the CPU of the reserve and
the produce themselves, and its imports were half the cold start (docs/benchmarks.md).

Logger's Lambda context is ``observability.lambda_context``: the keys and the environment
variables of Powertools' ``inject_lambda_context``, with the API Gateway request id as
correlation id, at a third of its cost. The answer prints its own metrics line
(``issue_metrics.py``). In a Lambda runtime the module also opens its Redis connection and its
Kafka producer while the container initialises (``dependencies.open_connections``), so that the
first request of a new container is not the one that pays for them.
"""

import os
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.observability import lambda_context
from functions.http_api import media_type
from functions.http_api.answers import ANSWERED, Answer, answer_to
from functions.http_api.caller import caller_of
from functions.intake import dependencies
from functions.intake.issue_answer import answer_issue
from functions.intake.issue_request import issue_ask


def request_id_of(event: dict[str, Any]) -> str | None:
    """API Gateway's id of the request (``requestContext.requestId``), if the event has one."""
    request_context = event.get("requestContext")
    return request_context.get("requestId") if isinstance(request_context, dict) else None


@lambda_context(correlation_id=request_id_of)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return (media_type.refused(event) or _answer(event)).proxy_result()


def _answer(event: dict[str, Any]) -> Answer:
    try:
        ask = issue_ask(event)
        parts = dependencies.wiring()
        user_id = caller_of(event, parts.settings.caller).user_id(ask.user_id)
        return answer_issue(parts.service, ask.coupon_id, user_id, ask.idempotency_key)
    except ANSWERED as exc:
        return answer_to(exc)


if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE"):  # set by Lambda during INIT: connect now
    dependencies.open_connections()
