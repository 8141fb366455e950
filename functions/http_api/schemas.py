"""Request and response bodies of the API (camelCase on the wire, as in docs/design.md): pydantic
models only (the path, query and header parameters of the routes are in ``parameters.py``). The
issue request's body is in ``request.py``, which the intake imports alone."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    model_validator,
)

from coupon_core.domain.operations import IssueLife
from functions.http_api.request import Strict

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _no_control_characters(name: str) -> str:
    # PostgreSQL text cannot hold NUL; no other control character belongs in a name either.
    if _CONTROL.search(name):
        raise ValueError("must not contain control characters (NUL, tab, newline, ...)")
    return name


Name = Annotated[str, Field(min_length=1, max_length=200, strict=True), AfterValidator(_no_control_characters)]
_ISO_8601 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]")


def _iso_8601_text(value: object) -> object:
    # pydantic reads a number, or a string of digits, as a Unix time; the contract is ISO 8601.
    if not isinstance(value, str) or not _ISO_8601.match(value):
        raise ValueError("must be an ISO 8601 date and time with a zone (2026-12-01T12:00:00Z), not a number")
    return value


# Times become epoch milliseconds in Redis and Kafka, which are never negative.
Moment = Annotated[
    AwareDatetime, Field(ge=EPOCH, description="ISO 8601 with a zone, not before 1970"), BeforeValidator(_iso_8601_text)
]


class CreateCouponRequest(Strict):
    name: Name
    totalQuantity: Annotated[StrictInt, Field(ge=1, le=10_000_000)]  # noqa: N815
    issueStartsAt: Moment  # noqa: N815
    issueEndsAt: Moment  # noqa: N815
    validUntil: Moment | None = Field(default=None, description="an issued copy expires at this time")  # noqa: N815
    validDays: Annotated[StrictInt, Field(ge=1, le=3_650)] | None = Field(  # noqa: N815
        default=None, description="an issued copy expires this many days after its issue (the earlier of the two)"
    )
    reissueAfterCancel: bool = Field(  # noqa: N815
        default=False, strict=True, description="may a user who canceled take the coupon again?"
    )

    @model_validator(mode="after")
    def _times_are_ordered(self) -> CreateCouponRequest:
        if self.issueEndsAt <= self.issueStartsAt:
            raise ValueError("issueEndsAt must be after issueStartsAt")
        if self.validUntil is not None and self.validUntil <= self.issueStartsAt:
            raise ValueError("validUntil must be after issueStartsAt")
        return self


class ChangeCouponRequest(Strict):
    """Fields to change; at least one."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})  # said where draft 4 can

    name: Name | None = None
    issueStartsAt: Moment | None = None  # noqa: N815
    issueEndsAt: Moment | None = None  # noqa: N815

    @model_validator(mode="after")
    def _something_changes(self) -> ChangeCouponRequest:
        if self.name is None and self.issueStartsAt is None and self.issueEndsAt is None:
            raise ValueError("name it, or give issueStartsAt or issueEndsAt: nothing to change")
        return self


class TopUpRequest(Strict):
    copies: Annotated[StrictInt, Field(ge=1, le=10_000_000, description="copies added to the stock")]


class ErrorBody(BaseModel):
    status: str
    error: str


class IssueAccepted(BaseModel):
    status: Literal["SUCCESS"]
    couponId: int  # noqa: N815
    userId: int  # noqa: N815
    requestId: str  # noqa: N815
    reservedAt: str  # noqa: N815


class IssueStatusBody(BaseModel):
    status: Literal["NONE", "PENDING", "ISSUED", "USED", "CANCELED", "EXPIRED", "FAILED"]
    couponId: int  # noqa: N815
    userId: int  # noqa: N815


class AvailabilityBody(BaseModel):
    """A sale as a shop's page shows it: ``status`` at ``serverTime`` (the server's clock, for
    the page's countdown), the window, and the copies left at ``asOf`` (Redis' count then).
    The window, ``total``, ``left`` and ``asOf`` are null for a coupon whose state expired long
    after its window (ENDED)."""

    status: Literal["NOT_OPEN", "OPEN", "SOLD_OUT", "ENDED", "CLOSED"]
    couponId: int  # noqa: N815
    serverTime: str  # noqa: N815
    startsAt: str | None  # noqa: N815
    endsAt: str | None  # noqa: N815
    total: int | None
    left: int | None
    asOf: str | None  # noqa: N815


class CouponBody(BaseModel):
    status: Literal["CREATED", "OK"]
    couponId: int  # noqa: N815
    name: str
    totalQuantity: int  # noqa: N815
    remainingQuantity: int  # noqa: N815
    issued: int
    reserved: int
    issueStartsAt: str  # noqa: N815
    issueEndsAt: str  # noqa: N815
    validUntil: str | None  # noqa: N815
    validDays: int | None  # noqa: N815
    reissueAfterCancel: bool  # noqa: N815
    closed: bool


class CouponPage(BaseModel):
    status: Literal["OK"]
    coupons: list[CouponBody]
    next: int | None  # the ``after`` of the next page; null on the last one


class IssueEntryBody(BaseModel):
    issueId: int  # noqa: N815
    userId: int  # noqa: N815
    requestId: str  # noqa: N815
    status: IssueLife
    reservedAt: str  # noqa: N815
    issuedAt: str  # noqa: N815
    expiresAt: str | None  # noqa: N815
    usedAt: str | None  # noqa: N815
    canceledAt: str | None  # noqa: N815


class IssuePage(BaseModel):
    status: Literal["OK"]
    couponId: int  # noqa: N815
    issues: list[IssueEntryBody]
    next: int | None


class ReconcileAnswer(BaseModel):
    status: Literal["OK"]
    couponId: int  # noqa: N815
    report: dict[str, Any]  # the rebuild function's report (docs/design.md, rebuild)


class UseBody(BaseModel):
    status: Literal["USED"]
    couponId: int  # noqa: N815
    userId: int  # noqa: N815
    usedAt: str  # noqa: N815


class CancelBody(BaseModel):
    status: Literal["CANCELED"]
    couponId: int  # noqa: N815
    userId: int  # noqa: N815
    canceledAt: str  # noqa: N815
