"""JSON from outside (HTTP bodies, Kafka records, dead letters), parsed without crashing.

Python's ``json`` raises ``ValueError`` for an integer of more than 4,300 digits and
``RecursionError`` for a document nested about a thousand deep; neither is a
``JSONDecodeError``, so a caller that catches only that would answer a 500 or poison a batch.
Here deep nesting becomes a ``JSONDecodeError``, and an integer too long to be an id (more than
20 digits) is read as 2**64 with its sign, so that validation names the field that is out of
range instead of the parser failing.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DIGITS = 20
OUT_OF_RANGE = 2**64


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) <= MAX_DIGITS:
        return int(text)
    return -OUT_OF_RANGE if text.startswith("-") else OUT_OF_RANGE


_decoder = json.JSONDecoder(parse_int=_bounded_int)  # one: json.loads builds a decoder a call for parse_int


def loads(document: str | bytes) -> Any:
    """``json.loads`` that raises only ``JSONDecodeError`` (and ``UnicodeDecodeError`` for bytes)."""
    try:
        if isinstance(document, bytes):  # as json.loads reads bytes: UTF-8, -16 or -32
            return _decoder.decode(document.decode(json.detect_encoding(document), "surrogatepass"))
        return _decoder.decode(document)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", document if isinstance(document, str) else "", 0) from None
