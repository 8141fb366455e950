"""Who is asking: the user id from the body, or from the token when USER_ID_SOURCE=claims."""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Request

from coupon_core.settings import IntakeSettings, UserIdSource
from functions.intake.dependencies import settings
from functions.intake.errors import RequestRefusedError
from lua_redis import MAX_BIGINT

_FORBIDDEN = (HTTPStatus.FORBIDDEN, "FORBIDDEN")


@dataclass(frozen=True)
class Caller:
    """Where this environment takes the user id from, and the token's claims (empty without one)."""

    source: UserIdSource
    claims: dict[str, Any]

    def user_id(self, claimed: int | None) -> int:
        """The user the request acts for, given the id it names (body or path), if any.

        With ``body``, the named id (required). With ``claims``, the token's numeric ``sub``; a
        request that names a different user is refused.
        """
        if self.source == "body":
            if claimed is None:
                raise RequestRefusedError(HTTPStatus.UNPROCESSABLE_ENTITY, "INVALID_REQUEST", "userId: Field required")
            return claimed
        subject = str(self.claims.get("sub", ""))
        if not subject.isdigit() or not 1 <= int(subject) <= MAX_BIGINT:
            raise RequestRefusedError(*_FORBIDDEN, "the token carries no numeric user id (claim sub)")
        if claimed is not None and claimed != int(subject):
            raise RequestRefusedError(*_FORBIDDEN, "userId differs from the user id in the token")
        return int(subject)


def caller(request: Request, config: Annotated[IntakeSettings, Depends(settings)]) -> Caller:
    """The caller of the current request (a ``Depends`` provider)."""
    context = request.resolved_event.raw_event.get("requestContext") or {}
    claims = (context.get("authorizer") or {}).get("claims") or {}
    return Caller(config.issuing.user_id_source, dict(claims))
