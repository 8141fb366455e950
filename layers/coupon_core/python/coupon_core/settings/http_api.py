"""The settings both HTTP functions read: where the user id comes from, and the rebuild function
they invoke (the intake to build a missing state, the coupons function to reconcile on demand)."""

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


@dataclass(frozen=True)
class RebuildFunctionSettings:
    """The rebuild function to invoke (REBUILD_FUNCTION, a Lambda function name or ARN). Unset,
    a missing state is answered 503 by the intake, and the reconcile route answers 503."""

    name: str | None

    @classmethod
    def from_env(cls, environ: Environ) -> RebuildFunctionSettings:
        name = environ.get("REBUILD_FUNCTION", "").strip() or None
        if name is not None and not re.fullmatch(r"[A-Za-z0-9_:.-]{1,140}", name):
            raise ConfigError(f"REBUILD_FUNCTION must be a Lambda function name or ARN; got {name!r}")
        return cls(name=name)
