"""The intake's HTTP API as Powertools' REST resolver: every route of docs/design.md.

The resolver validates each request into the models of ``schemas.py``, a route of ``routes/``
calls one domain function with collaborators from ``dependencies.py`` and builds its answer
from a response model; everything else is answered by ``error_handlers.py``. ``app.py`` imports this
module on the first request the express lane does not take, so a container that only ever
answers issue requests never loads it.

The route modules and their providers keep their annotations as objects (no ``from __future__
import annotations``): Powertools reads ``Depends`` from the signatures on every request, and
string annotations cost a compile and an eval each time (a unit test keeps it so).
"""

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from coupon_core import untrusted_json
from functions.intake import error_handlers
from functions.intake.dependencies import OVERRIDES
from functions.intake.routes import coupons, issues, lifecycle, operations

app = APIGatewayRestResolver(enable_validation=True, json_body_deserializer=untrusted_json.loads)
app.dependency_overrides = OVERRIDES  # one registry of test replacements for both lanes
error_handlers.register(app)
app.include_router(issues.router)
app.include_router(coupons.router)
app.include_router(lifecycle.router)
app.include_router(operations.router)
