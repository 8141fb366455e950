"""What both HTTP functions read of an API Gateway event before anything else: whether its body
may be read (JSON only), and who is asking.

**The media type.** The API reads JSON bodies only, in both HTTP functions: a body declared as
anything else is refused (415 UNSUPPORTED_MEDIA_TYPE) before anything reads it, and nothing
changes. The coupons function's resolver would otherwise parse form bodies into strings, and
fail on ``multipart/form-data`` without a boundary with a ``ValueError``, which API Gateway
answers 502; the intake would read the body as JSON whatever its ``Content-Type`` said. What
counts as JSON is what Powertools' resolver reads as JSON: no ``Content-Type``, or one that starts
with ``application/json`` (parameters such as ``charset`` allowed). JSON is UTF-8 text: a body
API Gateway passed base64-encoded that does not decode to it is 422 INVALID_REQUEST here
(Powertools raised ``UnicodeDecodeError``: a 502).

**The caller.** The user id from the body (or the path), or from the token when
``USER_ID_SOURCE=claims``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from coupon_core.domain.ids import MAX_BIGINT
from coupon_core.settings.http_api import CallerSettings, UserIdSource
from functions.http_api.answers import Answer, RequestRefusedError, refusal

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


_ASCII_ID = re.compile(r"[0-9]{1,19}")  # str.isdigit() takes "²" and int() reads "١٢" as 12


@dataclass(frozen=True)
class Caller:
    """Where this environment takes the user id from, the claim that carries it, and the
    token's claims (empty without one)."""

    source: UserIdSource
    claim: str
    claims: Mapping[str, Any]

    def user_id(self, claimed: int | None) -> int:
        """The user the request acts for, given the id it names (body or path), if any.

        With ``body``, the named id (required). With ``claims``, the token's numeric ``claim``,
        ASCII digits only; a request that names a different user is refused.
        """
        if self.source == "body":
            if claimed is None:
                raise RequestRefusedError("USER_ID_MISSING")
            return claimed
        value = self.claims.get(self.claim)
        if not isinstance(value, str) or not _ASCII_ID.fullmatch(value) or not 1 <= int(value) <= MAX_BIGINT:
            raise RequestRefusedError("NO_USER_IN_TOKEN", claim=self.claim)
        if claimed is not None and claimed != int(value):
            raise RequestRefusedError("NOT_THE_TOKENS_USER")
        return int(value)


def caller_of(event: Mapping[str, Any], settings: CallerSettings) -> Caller:
    """The caller of an API Gateway REST proxy event."""
    context = event.get("requestContext") or {}
    claims = (context.get("authorizer") or {}).get("claims") or {}
    return Caller(settings.user_id_source, settings.user_id_claim, claims)
