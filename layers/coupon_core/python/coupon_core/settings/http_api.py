"""The settings both HTTP functions read: where the user id comes from."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from coupon_core.settings import Part
from coupon_core.settings import variables as var

UserIdSource = Literal["body", "claims"]


class CallerSettings(Part):
    """Where the user id comes from: the body (``USER_ID_SOURCE=body``), or the token's
    ``USER_ID_CLAIM`` (default ``custom:user_id``, an immutable Cognito attribute set when the user
    is created: Cognito's own ``sub`` is a UUID, not the numeric id the API works with)."""

    user_id_source: Annotated[UserIdSource, Field(validation_alias="USER_ID_SOURCE"), var.one_of("body", "claims")] = (
        "body"
    )
    user_id_claim: Annotated[
        str,
        Field(validation_alias="USER_ID_CLAIM"),
        AfterValidator(var.matching(r"[A-Za-z0-9_:.-]{1,128}", "a claim name (letters, digits, _ : . -)")),
    ] = "custom:user_id"
