"""What the HTTP functions read of an API Gateway event, through Powertools' ``APIGatewayProxyEvent``:
whether its body may be read (JSON only), who is asking, and the page's CORS headers; the rule of
an ``Idempotency-Key``. The intake's one request is ``functions/intake/request.py``.

**The media type.** The API reads JSON bodies only, in both HTTP functions: a body declared as
anything else is refused (415 UNSUPPORTED_MEDIA_TYPE) before anything reads it, and nothing
changes. The coupons function's resolver would otherwise parse form bodies into strings, and
fail on ``multipart/form-data`` without a boundary with a ``ValueError``, which API Gateway
answers 502; the intake would read the body as JSON whatever its ``Content-Type`` said. What
counts as JSON is what Powertools' resolver reads as JSON: no ``Content-Type``, or one that starts
with ``application/json`` (parameters such as ``charset`` allowed). JSON is UTF-8 text: a body
API Gateway passed base64-encoded that does not decode to it is 422 INVALID_REQUEST here
(Powertools raised ``UnicodeDecodeError``: a 502).

**The page.** A browser sends its page's ``Origin``; an answer carries the CORS headers that let
that page read it (:func:`cors_headers`) only for an origin on the function's list
(``CORS_ORIGINS``). API Gateway answers the preflights itself (the CDK app, ``coupon_cdk.api``),
so no ``OPTIONS`` reaches a function.

**The caller.** The user id from the body (or the path), or from the token when
``USER_ID_SOURCE=claims``.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from pydantic import BaseModel, ConfigDict, Field

from coupon_core.domain.records import MAX_BIGINT
from coupon_core.settings.http import CallerSettings, CorsSettings, UserIdSource
from functions.http_api.answers import Answer, RequestRefusedError, refusal

KEY_LENGTH, KEY_PATTERN = (1, 255), r"^[\x21-\x7e]+$"  # an Idempotency-Key: printable ASCII, no space
IdempotencyKeyValue = Annotated[str, Field(min_length=KEY_LENGTH[0], max_length=KEY_LENGTH[1], pattern=KEY_PATTERN)]


class Strict(BaseModel):
    """A body with nothing but its fields."""

    model_config = ConfigDict(extra="forbid")


JSON = "application/json"
_SHOWN = 100  # characters of a declared type an error repeats


def refused(event: APIGatewayProxyEvent) -> Answer | None:
    """The answer refusing an event whose body is declared as something other than JSON, or is
    not UTF-8 text; None for every other event."""
    if not event.body:
        return None
    declared = header_values(event, "content-type") or [JSON]  # no type: read as JSON
    if not str(declared[0]).strip().startswith(JSON):
        return refusal("UNSUPPORTED_MEDIA_TYPE", declared=str(declared[0])[:_SHOWN])
    if event.is_base64_encoded:
        try:
            base64.b64decode(event.body, validate=True).decode("utf-8")
        except ValueError:  # binascii.Error and UnicodeDecodeError both are
            return refusal("INVALID_REQUEST", problems="body is not valid JSON: not UTF-8 text")
    return None


def header_values(event: BaseProxyEvent, name: str) -> list[Any]:
    """A header's values, named in any case, from the field the resolver reads them from
    (``multiValueHeaders`` if the event has them, else ``headers``)."""
    values = event.resolved_headers_field.get(name)
    return [] if values is None else list(values) if isinstance(values, list) else [values]


@functools.cache
def allowed_origins() -> tuple[str, ...]:
    """CORS_ORIGINS, read once per container (a wrong value fails every answer, naming it)."""
    return CorsSettings.from_env().origins


CORS_EXPOSED = "Retry-After"  # the one header beyond the CORS-safelisted ones a page must read
EDGE_HEADER = "X-Coupon-Edge"  # what the edge (cdk/coupon_cdk/edge.py) sends: its stack's secret


def with_cors(event: APIGatewayProxyEvent, result: dict[str, Any]) -> dict[str, Any]:
    """The proxy result ``result`` answering ``event``, with the CORS headers of its page
    (:func:`cors_headers` for :func:`allowed_origins`) added to its ``multiValueHeaders``, as
    Powertools' resolver and ``Answer.proxy_result`` give them: both HTTP functions' last step."""
    if headers := cors_headers(event, allowed_origins()):
        result.setdefault("multiValueHeaders", {}).update({name: [value] for name, value in headers.items()})
    return result


def cors_headers(event: APIGatewayProxyEvent, allowed: tuple[str, ...]) -> dict[str, str]:
    """The CORS headers of an answer to ``event``: its ``Origin`` allowed to read it, and
    ``Retry-After`` exposed, if that origin is on ``allowed`` (or ``allowed`` holds ``*``);
    none otherwise. ``Vary: Origin`` wherever a list applies, so that no cache serves one
    page's answer to another."""
    if not allowed:
        return {}
    origin = next(iter(header_values(event, "origin")), None)
    if origin is None or (origin not in allowed and "*" not in allowed):
        return {"Vary": "Origin"}
    return {"Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": CORS_EXPOSED, "Vary": "Origin"}


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
