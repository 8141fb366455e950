"""Reading one environment variable: each helper raises :class:`ConfigError` naming it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from coupon_core.errors import ConfigError

Environ = Mapping[str, str]


def required(environ: Environ, name: str) -> str:
    value = environ.get(name, "").strip()
    if not value:
        raise ConfigError(f"{name} is required and not set")
    return value


def choice(environ: Environ, name: str, choices: tuple[str, ...], default: str) -> str:
    value = environ.get(name, default).strip().lower() or default
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def integer(environ: Environ, name: str, default: int, *, low: int, high: int) -> int:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer; got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}; got {value}")
    return value


def function_name(environ: Environ, name: str) -> str | None:
    """A Lambda function's name or ARN, or None where the variable is unset."""
    value = environ.get(name, "").strip() or None
    if value is not None and not re.fullmatch(r"[A-Za-z0-9_:.-]{1,140}", value):
        raise ConfigError(f"{name} must be a Lambda function name or ARN; got {value!r}")
    return value


def url(environ: Environ, name: str, schemes: tuple[str, ...]) -> str:
    value = required(environ, name)
    parts = urlsplit(value)
    if parts.scheme not in schemes or not parts.hostname:
        raise ConfigError(f"{name} must be a URL with scheme {' or '.join(schemes)} and a host; got {value!r}")
    return value
