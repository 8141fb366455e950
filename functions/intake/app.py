"""Intake function: the HTTP API of docs/design.md behind API Gateway (REST, Lambda proxy).

Thin by design: the resolver validates each request into the models of ``schemas.py``, a route
of ``routes/`` calls one domain function with collaborators from ``dependencies.py`` and builds
its answer from a response model (``answers.py``); everything else is answered by
``errors.py``. Every answer has ``status``; errors add ``error``, which says what was wrong.

The route modules, ``caller.py`` and ``dependencies.py`` keep their annotations as objects (no
``from __future__ import annotations``): Powertools reads ``Depends`` from the signatures on
every request, and string annotations cost a compile and an eval each time, about 0.8 ms of a
request's CPU (bench/intake.py; a unit test keeps it so).
"""

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from coupon_core import untrusted_json
from coupon_core.observability import logger, metrics
from functions.intake import errors
from functions.intake.routes import coupons, issues, lifecycle, operations

app = APIGatewayRestResolver(enable_validation=True, json_body_deserializer=untrusted_json.loads)
errors.register(app)
app.include_router(issues.router)
app.include_router(coupons.router)
app.include_router(lifecycle.router)
app.include_router(operations.router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
