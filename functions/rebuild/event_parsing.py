"""The rebuild's and the builder's events, validated before anything changes.

The rebuild takes the EventBridge schedule (``"source": "aws.events"``, ``"detail-type":
"Scheduled Event"``) and an on-demand ``{"couponId": N}`` or ``{"couponId": [N, ...]}``; the
builder, the intake's ``{"stateMissing": N}``. Anything else is refused with a message that says
what was expected.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from coupon_core.domain.records import MAX_BIGINT
from functions.schedule_events import is_scheduled

__all__ = ["InvalidRebuildEventError", "is_scheduled", "on_demand_coupons", "state_missing"]

CouponId = Annotated[StrictInt, Field(ge=1, le=MAX_BIGINT)]


class InvalidRebuildEventError(ValueError):
    """The event is not one the function takes: the schedule or an on-demand request (the
    rebuild), the intake's ask for a missing state (the builder)."""


class OnDemand(BaseModel):
    model_config = ConfigDict(extra="forbid")

    couponId: CouponId | Annotated[list[CouponId], Field(min_length=1, max_length=1_000)]  # noqa: N815


class StateMissing(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stateMissing: CouponId  # noqa: N815


_EXPECTED = 'expected a scheduled EventBridge event, or {"couponId": N | [N, ...]}'
_EXPECTED_BY_THE_BUILDER = 'expected {"stateMissing": N}'


def state_missing(event: Any) -> int:
    """The coupon whose missing state the intake asks the builder to build."""
    try:
        return StateMissing.model_validate(event).stateMissing
    except ValidationError as exc:
        raise InvalidRebuildEventError(f"{_EXPECTED_BY_THE_BUILDER}; {_problems(exc)}") from None


def on_demand_coupons(event: Any) -> list[int]:
    """The coupon ids an on-demand event names, without repeats, in their order."""
    try:
        request = OnDemand.model_validate(event)
    except ValidationError as exc:
        raise InvalidRebuildEventError(f"{_EXPECTED}; {_problems(exc)}") from None
    coupon_ids = request.couponId if isinstance(request.couponId, list) else [request.couponId]
    return list(dict.fromkeys(coupon_ids))


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'event'}: {e['msg']}" for e in exc.errors())
