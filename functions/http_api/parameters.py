"""The path, query and header parameters of the coupons function's routes (and of the issue
route's description), as Powertools' OpenAPI parameters: its validation reads them."""

from __future__ import annotations

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query

from coupon_core.domain.records import MAX_BIGINT
from functions.http_api.request import KEY_LENGTH, KEY_PATTERN

PathId = Annotated[int, Path(ge=1, le=MAX_BIGINT, description="positive integer below 2^63")]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=KEY_LENGTH[0],
        max_length=KEY_LENGTH[1],
        pattern=KEY_PATTERN,
        description="optional; the same key with the same body, within the coupon's window, answers the "
        "same (202 with the same requestId); with another body, 422 KEY_REUSED",
    ),
]
PageAfter = Annotated[int, Query(ge=0, le=MAX_BIGINT, description="the last id of the previous page; 0 first")]
PageLimit = Annotated[int, Query(ge=1, le=1_000, description="at most this many per page")]
ExportFormat = Annotated[Literal["json", "csv"], Query(alias="format", description="json (default) or csv")]
