"""``--debug``: every request the command sends and every answer it gets, on standard error, with
no secret in them.

Both kinds of call are traced by one :class:`Tracer`: the API's (``api_client``) and AWS's own
(CloudFormation, CloudWatch, SQS, through botocore's ``before-send`` and ``after-call`` events).
What would let someone else act as the operator is replaced by ``<redacted>``: a SigV4
``Signature`` (a signed request can be replayed for minutes), ``X-Amz-Security-Token`` (a
session's secret), and any ``Authorization`` that is not SigV4 (a Cognito token). The access key
id, the scope and the signed headers stay: they say who signed, and for what.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TextIO

REDACTED = "<redacted>"
SECRET_HEADERS = frozenset({"x-amz-security-token"})
_SIGNATURE = re.compile(r"(Signature=)[0-9a-fA-F]+")
BODY_SHOWN = 2_000  # characters of a body shown; a CSV page can be long


def redacted(headers: Mapping[str, str | bytes]) -> dict[str, str]:
    """``headers`` with every secret replaced."""
    shown = {}
    for name, raw in headers.items():
        value = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
        if name.lower() in SECRET_HEADERS:
            shown[name] = REDACTED
        elif name.lower() == "authorization":
            shown[name] = _SIGNATURE.sub(rf"\g<1>{REDACTED}", value) if value.startswith("AWS4-") else REDACTED
        else:
            shown[name] = value
    return shown


class Tracer:
    """Writes each request and answer to ``stream`` (standard error), a few lines each."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def request(self, method: str, url: str, headers: Mapping[str, str | bytes], body: bytes | str | None) -> None:
        self._write(f"> {method} {url}", headers, body)

    def answer(
        self, status: int, seconds: float | None, headers: Mapping[str, str | bytes], body: bytes | str | None
    ) -> None:
        self._write(f"< {status}" + ("" if seconds is None else f" in {seconds * 1000:.0f} ms"), headers, body)

    def failure(self, what: str, seconds: float) -> None:
        self._write(f"< no answer after {seconds * 1000:.0f} ms: {what}", {}, None)

    def _write(self, first: str, headers: Mapping[str, str | bytes], body: bytes | str | None) -> None:
        lines = [f"debug: {first}"]
        lines += [f"debug:   {name}: {value}" for name, value in redacted(headers).items()]
        text = body.decode(errors="replace") if isinstance(body, bytes) else body
        if text:
            shown = text if len(text) <= BODY_SHOWN else f"{text[:BODY_SHOWN]}... ({len(text)} characters)"
            lines.append(f"debug:   {shown}")
        self._stream.write("\n".join(lines) + "\n")
        self._stream.flush()
