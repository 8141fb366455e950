"""The body of ``POST /coupon-issues`` and its ``Idempotency-Key``: the one schema of the issue
request, which the intake validates with and the gateway's request model is generated from.

Apart from the other bodies (``schemas.py``) because the intake imports it alone: a cold
container of a sale's scale-out builds this one model, not every body of the API.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from coupon_core.domain.records import MAX_BIGINT

Id = Annotated[StrictInt, Field(ge=1, le=MAX_BIGINT, description="positive integer below 2^63")]
KEY_LENGTH, KEY_PATTERN = (1, 255), r"^[\x21-\x7e]+$"  # an Idempotency-Key: printable ASCII, no space
IdempotencyKeyValue = Annotated[str, Field(min_length=KEY_LENGTH[0], max_length=KEY_LENGTH[1], pattern=KEY_PATTERN)]


class Strict(BaseModel):
    """A body with nothing but its fields."""

    model_config = ConfigDict(extra="forbid")


class IssueRequest(Strict):
    couponId: Id  # noqa: N815 - wire names are camelCase
    userId: Id | None = Field(default=None, description="required unless the user id comes from the token's claims")  # noqa: N815
