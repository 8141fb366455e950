"""JSON from outside parsed without crashing: the same values as ``json.loads``, and only its errors."""

from __future__ import annotations

import json

import pytest

from coupon_core import untrusted_json

DOCUMENTS = ['{"couponId": 3, "userId": 7}', '[1, -2, 3.5, "x", null, true]', '  {"a": {"b": [{}]}}  ', '"é✓"']


@pytest.mark.parametrize("document", DOCUMENTS)
@pytest.mark.parametrize("encoding", [None, "utf-8", "utf-16", "utf-32-le"])
def test_a_document_reads_as_json_loads_reads_it_as_text_or_bytes(document, encoding):
    given = document if encoding is None else document.encode(encoding)
    assert untrusted_json.loads(given) == json.loads(given)


@pytest.mark.parametrize("document", ["[" * 100_000, "{couponId: 3", "\ufeff{}", "", '{"a": 1', b"\xff\xfe\xfd"])
def test_a_malformed_document_raises_a_decode_error_only(document):
    with pytest.raises((json.JSONDecodeError, UnicodeDecodeError)):  # not RecursionError, nor a ValueError of int()
        untrusted_json.loads(document)


def test_an_integer_too_long_for_an_id_reads_as_out_of_range_with_its_sign():
    assert untrusted_json.loads("[" + "9" * 30 + ", -" + "9" * 30 + ", 12]") == [2**64, -(2**64), 12]
