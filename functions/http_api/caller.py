"""Who is asking: the user id from the body, or from the token when USER_ID_SOURCE=claims."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from coupon_core.domain.ids import MAX_BIGINT
from coupon_core.settings.http_api import CallerSettings, UserIdSource
from functions.http_api.answers import RequestRefusedError

_ASCII_ID = re.compile(r"[0-9]{1,19}")  # str.isdigit() takes "²" and int() reads "١٢" as 12


@dataclass(frozen=True)
class Caller:
    """Where this environment takes the user id from, the claim that carries it, and the
    token's claims (empty without one)."""

    source: UserIdSource
    claim: str
    claims: Mapping[str, Any]

    def user_id(self, claimed: int | None) -> int:
        """The user the request acts for, given the id it names (body or path), if any.

        With ``body``, the named id (required). With ``claims``, the token's numeric ``claim``,
        ASCII digits only; a request that names a different user is refused.
        """
        if self.source == "body":
            if claimed is None:
                raise RequestRefusedError("USER_ID_MISSING")
            return claimed
        value = self.claims.get(self.claim)
        if not isinstance(value, str) or not _ASCII_ID.fullmatch(value) or not 1 <= int(value) <= MAX_BIGINT:
            raise RequestRefusedError("NO_USER_IN_TOKEN", claim=self.claim)
        if claimed is not None and claimed != int(value):
            raise RequestRefusedError("NOT_THE_TOKENS_USER")
        return int(value)


def caller_of(event: Mapping[str, Any], settings: CallerSettings) -> Caller:
    """The caller of an API Gateway REST proxy event."""
    context = event.get("requestContext") or {}
    claims = (context.get("authorizer") or {}).get("claims") or {}
    return Caller(settings.user_id_source, settings.user_id_claim, claims)
