"""Intake function: the HTTP API of docs/design.md behind API Gateway (REST, Lambda proxy).

A body declared as anything but JSON is refused first (``json_only.py``). Then two lanes, one
answer format (every answer has ``status``; errors add ``error``, which says
what was wrong). A well-formed ``POST /coupon-issues``, nearly every request of a flash sale,
is answered by the express lane (``express.py``) without the resolver; every other request,
malformed ones included, by Powertools' resolver (``api.py``), imported the first time one
arrives. Both run under Logger's Lambda context (``observability.lambda_context``: the keys of
Powertools' ``inject_lambda_context``, with the API Gateway request id as correlation id, at a
third of its cost). Issue answers print their own metrics (``issue_metrics.py``); Metrics'
decorator flushes what the resolver's routes add.

In a Lambda runtime the module also opens its Redis connection and its Kafka producer while
the container initialises (``dependencies.open_connections``), so that the first request of a new
container is not the one that pays for them.
"""

import os
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core.observability import lambda_context, metrics
from functions.intake import dependencies, express, json_only


def request_id_of(event: dict[str, Any]) -> str | None:
    """API Gateway's id of the request (``requestContext.requestId``), if the event has one."""
    request_context = event.get("requestContext")
    return request_context.get("requestId") if isinstance(request_context, dict) else None


@lambda_context(correlation_id=request_id_of)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return json_only.refused(event) or express.take(event) or _resolved(event, context)


@metrics.log_metrics
def _resolved(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from functions.intake.api import app  # noqa: PLC0415 - loaded on the first request that needs it

    return app.resolve(event, context)


if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE"):  # set by Lambda during INIT: connect now
    dependencies.open_connections()
