"""The parts of the settings both HTTP functions read, and no other: where the user id comes from,
and the web pages that may read the answers."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from coupon_core.settings import Lower, Settings

UserIdSource = Literal["body", "claims"]


class CallerSettings(Settings):
    """Where the user id comes from: the body (``USER_ID_SOURCE=body``), or the token's
    ``USER_ID_CLAIM`` (default ``custom:user_id``, an immutable Cognito attribute set when the user
    is created: Cognito's own ``sub`` is a UUID, not the numeric id the API works with)."""

    user_id_source: Annotated[UserIdSource, Field(validation_alias="USER_ID_SOURCE"), Lower] = "body"
    user_id_claim: Annotated[str, Field(validation_alias="USER_ID_CLAIM", pattern=r"^[A-Za-z0-9_:.-]{1,128}$")] = (
        "custom:user_id"
    )


ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:\d{1,5})?")  # a web origin: scheme, host, port, no path


def _origins(value: object) -> tuple[str, ...]:
    origins = tuple(origin.strip() for origin in str(value).split(",") if origin.strip())
    bad = [origin for origin in origins if origin != "*" and not ORIGIN.fullmatch(origin)]
    if bad:
        raise ValueError(f"must be origins (scheme://host[:port], no path) or *, comma-separated; bad entries {bad}")
    return origins


class CorsSettings(Settings):
    """The web pages that may read the HTTP functions' answers (CORS_ORIGINS: origins such as
    ``https://shop.example.com``, comma-separated; ``*`` for any page, where the public routes
    take no credential). Unset, no answer carries CORS headers: no browser page reads them."""

    origins: Annotated[tuple[str, ...], Field(validation_alias="CORS_ORIGINS"), BeforeValidator(_origins)] = ()
