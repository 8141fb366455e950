"""The settings both HTTP functions read: where the user id comes from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

from coupon_core.errors import ConfigError
from coupon_core.settings import variables as var
from coupon_core.settings.variables import Environ

UserIdSource = Literal["body", "claims"]


def _claim_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_:.-]{1,128}", value):
        raise ConfigError(f"USER_ID_CLAIM must be a claim name (letters, digits, _ : . -); got {value!r}")
    return value


@dataclass(frozen=True)
class CallerSettings:
    """Where the user id comes from: the body (``USER_ID_SOURCE=body``), or the token's
    ``USER_ID_CLAIM`` (default ``custom:user_id``, an immutable Cognito attribute set when the user
    is created: Cognito's own ``sub`` is a UUID, not the numeric id the API works with)."""

    user_id_source: UserIdSource
    user_id_claim: str

    @classmethod
    def from_env(cls, environ: Environ) -> CallerSettings:
        return cls(
            user_id_source=cast(UserIdSource, var.choice(environ, "USER_ID_SOURCE", ("body", "claims"), "body")),
            user_id_claim=_claim_name(environ.get("USER_ID_CLAIM", "custom:user_id").strip() or "custom:user_id"),
        )
