"""The command's arguments, checked before anything is sent, by the bounds the API's request
models set (a test holds them equal to ``functions/http_api``'s models): a typo is a usage error
(status 2) on the operator's terminal, not a round trip to a 422.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import typer

MAX_ID = 2**63 - 1  # ids are PostgreSQL bigints
MAX_COPIES = 10_000_000  # totalQuantity and a top-up's copies
MAX_NAME = 200
MAX_VALID_DAYS = 3_650
MAX_PAGE = 1_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_RELATIVE = re.compile(r"^\+(\d+)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def moment(text: str) -> datetime:
    """An ISO 8601 time with its zone (``2026-12-24T12:00:00+09:00``, ``...Z``), ``now``, or a
    time from now (``+90s``, ``+10m``, ``+2h``, ``+7d``)."""
    now = datetime.now(UTC).replace(microsecond=0)
    if text == "now":
        return now
    if relative := _RELATIVE.match(text):
        return now + timedelta(**{_UNITS[relative[2]]: int(relative[1])})
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not an ISO 8601 time (2026-12-24T12:00:00Z), now or +10m") from None
    if parsed.tzinfo is None:
        raise typer.BadParameter(f"{text!r} has no zone: add Z or an offset (+09:00)")
    return parsed


def name(text: str) -> str:
    if not 1 <= len(text) <= MAX_NAME or _CONTROL.search(text):
        raise typer.BadParameter(f"a name is 1 to {MAX_NAME} characters without control characters")
    return text


def ordered(starts: datetime | None, ends: datetime | None) -> None:
    if starts is not None and ends is not None and ends <= starts:
        raise typer.BadParameter(f"the window ends ({ends.isoformat()}) before it starts ({starts.isoformat()})")


def wire(moment_: datetime) -> str:
    """A time as the API takes it."""
    return moment_.isoformat()
