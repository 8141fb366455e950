"""The kinds of variable the settings read, as pydantic validators, and the one mapping of a
validation error to :class:`ConfigError`.

A field is named by its variable (``Field(validation_alias="REDIS_URL")``). A validator here
raises its problem without the variable's name ("must be an integer; got 'x'"), and
:func:`config_error` puts the name first, from the error's location. A check that spans
variables (a model validator) names them itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import BeforeValidator, ValidationError

from coupon_core.errors import ConfigError

Environ = Mapping[str, str]


def present(environ: Environ) -> dict[str, str]:
    """The variables that are set: stripped, an empty one as if unset (its default applies)."""
    return {name: value.strip() for name, value in environ.items() if value.strip()}


def config_error(error: ValidationError) -> ConfigError:
    """The first problem of ``error`` on one line, naming its variable: a field's location ends
    with its variable (``REDIS_URL``); a part's own check, located at the part, names them itself."""
    problem = error.errors(include_url=False)[0]
    where = str(problem["loc"][-1]) if problem["loc"] else ""
    variable = where if where.isupper() else ""
    said = str(problem["msg"]).removeprefix("Value error, ")
    if problem["type"] == "missing":
        said = "is required and not set"
    elif problem["type"] == "int_parsing":
        said = f"must be an integer; got {problem['input']!r}"
    return ConfigError(f"{variable} {said}" if variable else said)


def between(low: int, high: int) -> Callable[[int], int]:
    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}; got {value}")
        return value

    return check


def one_of(*choices: str) -> Any:
    """A before-validator: the value, lower-cased, must be one of ``choices``."""

    def check(value: object) -> str:
        chosen = str(value).lower()
        if chosen not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}; got {chosen!r}")
        return chosen

    return BeforeValidator(check)


def url_of(*schemes: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in schemes or not parts.hostname:
            raise ValueError(f"must be a URL with scheme {' or '.join(schemes)} and a host; got {value!r}")
        return value

    return check


def matching(pattern: str, what: str) -> Callable[[str], str]:
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"must be {what}; got {value!r}")
        return value

    return check


FUNCTION_NAME = matching(r"[A-Za-z0-9_:.-]{1,140}", "a Lambda function name or ARN")
