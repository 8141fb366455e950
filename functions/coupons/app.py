"""Coupons function: every route of docs/design.md's HTTP API but ``POST /coupon-issues``
(the intake's), behind API Gateway (REST, Lambda proxy), on stock Powertools.

The operators' routes, a request's status, use and cancel, the reconcile route and the export:
``APIGatewayRestResolver`` with its validation, one router per resource (``routes/``), the error
answers in one place (``error_handlers.py``), Logger's ``inject_lambda_context`` with the API
Gateway request id as correlation id, and Metrics' ``log_metrics``. A body declared as anything
but JSON is refused before the resolver reads it (``functions/http_api/request.py`` says why).

Route modules and providers keep their annotations as objects (no ``from __future__ import
annotations``): Powertools reads ``Depends`` from the signatures on every request, and string
annotations cost a compile and an eval each time (a unit test keeps it so).
"""

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core import untrusted_json
from coupon_core.observability import logger, metrics
from functions.coupons import error_handlers
from functions.coupons.routes import availability, coupons, issues, lifecycle, operations
from functions.http_api import request

app = APIGatewayRestResolver(enable_validation=True, json_body_deserializer=untrusted_json.loads)
error_handlers.register(app)
app.include_router(availability.router)
app.include_router(issues.router)
app.include_router(coupons.router)
app.include_router(lifecycle.router)
app.include_router(operations.router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    proxy_event = APIGatewayProxyEvent(event)
    refused = request.refused(proxy_event)
    answer = refused.proxy_result() if refused else app.resolve(event, context)
    return request.with_cors(proxy_event, answer)
