"""The command's own checks of its arguments agree with the API's request models, and its times
read as an operator writes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import typer

from coupon_client import arguments
from functions.http_api.parameters import PageLimit, PathId
from functions.http_api.schemas import CreateCouponRequest, TopUpRequest


def _bounds(schema: dict, field: str) -> tuple[int | None, int | None]:
    spec = schema["properties"][field]
    spec = next((s for s in spec.get("anyOf", [spec]) if s.get("type") in ("integer", "string")), spec)
    return spec.get("minimum", spec.get("minLength")), spec.get("maximum", spec.get("maxLength"))


def test_the_bounds_are_the_request_models():
    create, top_up = CreateCouponRequest.model_json_schema(), TopUpRequest.model_json_schema()
    assert _bounds(create, "totalQuantity") == (1, arguments.MAX_COPIES)
    assert _bounds(top_up, "copies") == (1, arguments.MAX_COPIES)
    assert _bounds(create, "validDays") == (1, arguments.MAX_VALID_DAYS)
    assert _bounds(create, "name") == (1, arguments.MAX_NAME)
    assert _limits(PathId) == (1, arguments.MAX_ID)
    assert _limits(PageLimit) == (1, arguments.MAX_PAGE)


def _limits(parameter: object) -> tuple[int, int]:
    """A Powertools parameter's ge and le (pydantic's field metadata)."""
    found = {type(c).__name__: c for c in parameter.__metadata__[0].metadata}  # type: ignore[attr-defined]
    return found["Ge"].ge, found["Le"].le


def test_times_are_iso_8601_with_a_zone_now_or_from_now():
    assert arguments.moment("2026-12-24T12:00:00+09:00") == datetime(2026, 12, 24, 3, tzinfo=UTC)
    assert arguments.moment("2026-12-24T12:00Z") == datetime(2026, 12, 24, 12, tzinfo=UTC)
    before = datetime.now(UTC).replace(microsecond=0)
    now, in_ten_minutes, in_a_week = arguments.moment("now"), arguments.moment("+10m"), arguments.moment("+7d")
    after = datetime.now(UTC)  # bounds from the clock itself, not an allowance a slow machine could exceed
    assert before <= now <= after
    assert before + timedelta(minutes=10) <= in_ten_minutes <= after + timedelta(minutes=10)
    assert before + timedelta(days=7) <= in_a_week <= after + timedelta(days=7)


@pytest.mark.parametrize("text", ["2026-12-24T12:00", "tomorrow", "1766577600", "+10y", "-10m"])
def test_a_time_without_a_zone_or_unreadable_is_refused(text):
    with pytest.raises(typer.BadParameter):
        arguments.moment(text)


@pytest.mark.parametrize("text", ["", "x" * 201, "tab\there", "nul\x00"])
def test_a_name_the_api_refuses_is_refused_here(text):
    with pytest.raises(typer.BadParameter):
        arguments.name(text)
