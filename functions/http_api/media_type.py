"""The API reads JSON bodies only, in both HTTP functions: a body declared as anything else is
refused (415 UNSUPPORTED_MEDIA_TYPE) before anything reads it, and nothing changes.

Both functions ask this first. The coupons function's resolver would otherwise parse form
bodies into strings, and fail on ``multipart/form-data`` without a boundary with a
``ValueError``, which API Gateway answers 502; the intake would read the body as JSON whatever
its ``Content-Type`` said. What counts as JSON is what Powertools' resolver reads as JSON: no
``Content-Type``, or one that starts with ``application/json`` (parameters such as ``charset``
allowed). JSON is UTF-8 text: a body API Gateway passed base64-encoded that does not decode to
it is 422 INVALID_REQUEST here (Powertools raised ``UnicodeDecodeError``: a 502).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from functions.http_api.answers import Answer, refusal

JSON = "application/json"
_SHOWN = 100  # characters of a declared type an error repeats


def refused(event: Mapping[str, Any]) -> Answer | None:
    """The answer refusing an event whose body is declared as something other than JSON, or is
    not UTF-8 text; None for every other event."""
    if not event.get("body"):
        return None
    declared = header_values(event, "content-type") or [JSON]  # no type: read as JSON
    if not str(declared[0]).strip().startswith(JSON):
        return refusal("UNSUPPORTED_MEDIA_TYPE", declared=str(declared[0])[:_SHOWN])
    if event.get("isBase64Encoded") and not _utf8(str(event["body"])):
        return refusal("INVALID_REQUEST", problems="body is not valid JSON: not UTF-8 text")
    return None


def _utf8(encoded: str) -> bool:
    try:
        base64.b64decode(encoded, validate=True).decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError both are
        return False
    return True


def header_values(event: Mapping[str, Any], lowercase_name: str) -> list[Any]:
    """A header's values, named in any case: ``multiValueHeaders`` if the event has them (as the
    resolver reads them), else ``headers``."""
    multi = event.get("multiValueHeaders")
    if multi:
        return [value for name, values in multi.items() if name.lower() == lowercase_name for value in values or ()]
    single = event.get("headers") or {}
    return [value for name, value in single.items() if name.lower() == lowercase_name]
