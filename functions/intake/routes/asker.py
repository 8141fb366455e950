"""``Asker``: the caller of the current request, as a ``Depends`` parameter of a route."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Request

from coupon_core.settings.intake import IntakeSettings
from functions.intake.caller import Caller, caller_of
from functions.intake.dependencies import settings


def caller(request: Request, config: Annotated[IntakeSettings, Depends(settings)]) -> Caller:
    """The caller of the current request (a ``Depends`` provider)."""
    return caller_of(request.resolved_event.raw_event, config)


Asker = Annotated[Caller, Depends(caller)]
