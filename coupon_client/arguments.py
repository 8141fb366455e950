"""The command's arguments, checked before anything is sent, by the bounds the API's request
models set (a test holds them equal to ``functions/http_api``'s models): a typo is a usage error
(status 2) on the operator's terminal, not a round trip to a 422.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

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


@dataclass(frozen=True)
class WindowEnd:
    """``--ends`` as given: a time (``at``), or ``+DURATION``, that long after ``--starts``."""

    at: datetime | None = None
    duration: timedelta | None = None

    def after(self, starts: datetime | None) -> datetime:
        """The time it names: ``duration`` counts from ``starts``, or from now without it."""
        if self.at is not None:
            return self.at
        assert self.duration is not None
        return (starts or datetime.now(UTC).replace(microsecond=0)) + self.duration


def window_end(text: str) -> WindowEnd:
    """``--ends``: as :func:`moment`, but ``+2h`` is two hours after ``--starts``: a window's
    length, as the examples use it (``--starts 2026-12-24T12:00Z --ends +2h``)."""
    if relative := _RELATIVE.match(text):
        return WindowEnd(duration=timedelta(**{_UNITS[relative[2]]: int(relative[1])}))
    return WindowEnd(at=moment(text))


def name(text: str) -> str:
    if not 1 <= len(text) <= MAX_NAME or _CONTROL.search(text):
        raise typer.BadParameter(f"a name is 1 to {MAX_NAME} characters without control characters")
    return text


def ordered(starts: datetime | None, ends: datetime | None) -> None:
    if starts is not None and ends is not None and ends <= starts:
        raise typer.BadParameter(f"the window ends ({ends.isoformat()}) before it starts ({starts.isoformat()})")


def bounded(what: str, low: int, high: int) -> Callable[[int | None], int | None]:
    """A callback that says ``what must be at least low`` (or at most ``high``) of a number out of
    bounds, in the operator's words (Click's range check would say ``-5 is not in the range``)."""

    def check(value: int | None) -> int | None:
        if value is not None and value < low:
            raise typer.BadParameter(f"{what} must be at least {low:,}")
        if value is not None and value > high:
            raise typer.BadParameter(f"{what} must be at most {high:,}")
        return value

    return check


_HOST = re.compile(r"[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]")  # a name, an IPv4 address, or an IPv6 one in brackets


def url(text: str | None) -> str | None:
    """An http(s) URL with a host (the API's, or an endpoint's) and a port, if any, that exists;
    or a usage error that says so."""
    if text is None:
        return None
    if not _is_url(text):
        raise typer.BadParameter(
            f"{text!r} is not an http(s) URL such as https://ID.execute-api.REGION.amazonaws.com/STAGE"
        )
    return text.rstrip("/")


def _is_url(text: str) -> bool:
    try:
        parts = urlsplit(text)
        port = parts.port  # reading it checks it: a number, 0 to 65535
    except ValueError:  # an unclosed IPv6 bracket, a port out of range or not a number
        return False
    host = parts.netloc.rpartition("@")[2]
    if port is not None:
        host = host.rsplit(":", 1)[0]
    return parts.scheme in ("https", "http") and bool(parts.hostname) and bool(_HOST.fullmatch(host))


def not_past(ends: datetime, *, yes: bool) -> None:
    """A window that has wholly ended sells nothing: refused unless the operator says ``--yes``."""
    now = datetime.now(UTC)
    if ends <= now and not yes:
        raise typer.BadParameter(
            f"the window ended already ({ends.isoformat()}, now {now.replace(microsecond=0).isoformat()}): no request "
            "could take a copy; pass --yes to create it anyway"
        )


def wire(moment_: datetime) -> str:
    """A time as the API takes it."""
    return moment_.isoformat()
