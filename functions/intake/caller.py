"""Who is asking: the user id from the body, or from the token when USER_ID_SOURCE=claims."""

import re
from dataclasses import dataclass
from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Request

from coupon_core.settings import IntakeSettings, UserIdSource
from functions.intake.dependencies import settings
from functions.intake.errors import RequestRefusedError
from lua_redis import MAX_BIGINT

_FORBIDDEN = (HTTPStatus.FORBIDDEN, "FORBIDDEN")
_ASCII_ID = re.compile(r"[0-9]{1,19}")  # str.isdigit() takes "²" and int() reads "١٢" as 12


@dataclass(frozen=True)
class Caller:
    """Where this environment takes the user id from, the claim that carries it, and the
    token's claims (empty without one)."""

    source: UserIdSource
    claim: str
    claims: dict[str, Any]

    def user_id(self, claimed: int | None) -> int:
        """The user the request acts for, given the id it names (body or path), if any.

        With ``body``, the named id (required). With ``claims``, the token's numeric ``sub``; a
        With ``claims``, the token's numeric ``claim``, ASCII digits only; a
        request that names a different user is refused.
        """
        if self.source == "body":
            if claimed is None:
                raise RequestRefusedError(HTTPStatus.UNPROCESSABLE_ENTITY, "INVALID_REQUEST", "userId: Field required")
            return claimed
        value = self.claims.get(self.claim)
        if not isinstance(value, str) or not _ASCII_ID.fullmatch(value) or not 1 <= int(value) <= MAX_BIGINT:
            raise RequestRefusedError(*_FORBIDDEN, f"the token carries no numeric user id (claim {self.claim})")
        if claimed is not None and claimed != int(value):
            raise RequestRefusedError(*_FORBIDDEN, "userId differs from the user id in the token")
        return int(value)


def caller(request: Request, config: Annotated[IntakeSettings, Depends(settings)]) -> Caller:
    """The caller of the current request (a ``Depends`` provider)."""
    context = request.resolved_event.raw_event.get("requestContext") or {}
    claims = (context.get("authorizer") or {}).get("claims") or {}
    return Caller(config.issuing.user_id_source, config.issuing.user_id_claim, dict(claims))
