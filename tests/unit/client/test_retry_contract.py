"""The retry contract of docs/frontend.md, held by the Python client: every scenario of
``web/test/retry-contract.json`` (the browser client's tests run the same ones) through
``coupon_client.retry.claim`` over a scripted API; and every row of the document's table held
by at least one scenario, so that the table, the scenarios and both clients say one thing."""

from __future__ import annotations

import json
import re
import time
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest

from coupon_client.api_client import NO_ANSWER, Reply
from coupon_client.retry import (
    MAX_SENDS,
    STATUS_ASKS,
    TIMEOUT_S,
    WAIT_S,
    Kind,
    claim,
    http_date,
    retry_after_seconds,
    wait_seconds,
)

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = json.loads((ROOT / "web/test/retry-contract.json").read_text())
NOW = parsedate_to_datetime(CONTRACT["now"]).timestamp()


class ScriptedApi:
    """Answers the n-th request with the n-th answer (the last one once they run out), and
    records what was asked."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, str, Any, dict[str, str]]] = []
        self.replies: list[Reply] = []

    def request(self, method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None) -> Reply:
        self.calls.append((method, path, body, headers or {}))
        self.replies.append(self._reply(self.answers[min(len(self.calls), len(self.answers)) - 1]))
        return self.replies[-1]

    @staticmethod
    def _reply(answer: Any) -> Reply:
        if answer == "no answer":
            return Reply(NO_ANSWER, {"status": "NO_ANSWER", "error": "connection dropped"}, 0.0)
        status, body, *rest = answer
        headers = rest[0] if rest else {}
        return Reply(status, body, 0.0, retry_after_seconds(headers.get("Retry-After"), NOW), headers)


@pytest.mark.parametrize("scenario", CONTRACT["scenarios"], ids=lambda s: s["name"])
def test_the_python_client_keeps_every_scenario_of_the_contract(scenario):
    api, waits, ticks = ScriptedApi(scenario["answers"]), [], iter([10.0, 12.5])
    result = claim(api.request, 3, 7, sleep=waits.append, random=lambda: 1.0, clock=lambda: next(ticks), key="key-1")

    assert [method for method, *_ in api.calls] == scenario["requests"]
    assert waits == [ms / 1000 for ms in scenario["waits"]]
    assert (result.kind.value, result.status, result.attempts) == (
        scenario["kind"],
        scenario["status"],
        scenario["attempts"],
    )
    assert result.reply is api.replies[max(i for i, (method, *_) in enumerate(api.calls) if method == "POST")]
    assert result.seconds == 2.5
    if "retryAfterMs" in scenario:
        assert result.reply.retry_after_s * 1000 == scenario["retryAfterMs"]
    for method, path, body, headers in api.calls:
        if method == "POST":
            assert (path, body, headers) == (
                "/coupon-issues",
                {"couponId": 3, "userId": 7},
                {"Idempotency-Key": "key-1"},
            )
        else:
            assert (path, body) == ("/coupons/3/issues/7", None)


@pytest.mark.parametrize(("value", "ms"), CONTRACT["retryAfter"], ids=repr)
def test_retry_after_is_read_as_rfc_9110_allows_and_nothing_else(value, ms):
    seconds = retry_after_seconds(value, NOW)
    assert (None if seconds is None else seconds * 1000) == ms


def test_an_rfc_850_year_more_than_50_years_ahead_is_the_most_recent_past_one():
    now = parsedate_to_datetime("Sun, 06 Dec 2026 00:00:00 GMT").timestamp()

    def year(date: str) -> int:
        when = http_date(date, now)
        assert when is not None
        return time.gmtime(when).tm_year

    assert year("Sunday, 06-Nov-94 08:49:37 GMT") == 1994
    assert year("Sunday, 06-Nov-76 08:49:37 GMT") == 2076
    assert year("Sunday, 06-Nov-77 08:49:37 GMT") == 1977
    now = parsedate_to_datetime("Fri, 01 Jan 2049 00:00:00 GMT").timestamp()
    assert year("Sunday, 06-Nov-94 08:49:37 GMT") == 2094


def test_the_jitter_spreads_a_wait_from_once_to_half_as_long_again():
    assert [wait_seconds(2.0, r) for r in (0.0, 0.5, 1.0)] == [2.0, 2.5, 3.0]
    assert wait_seconds(None, 0.0) == WAIT_S


def test_a_new_key_per_click_by_default():
    api = ScriptedApi([[202, {"status": "SUCCESS"}]])
    claim(api.request, 3, 7)
    claim(api.request, 3, 7)
    first, second = (headers["Idempotency-Key"] for *_, headers in api.calls)
    assert first != second
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", first)


def test_every_row_of_the_documents_table_is_held_by_a_scenario_and_every_scenario_names_one():
    document = (ROOT / "docs/frontend.md").read_text()
    table = document[
        document.index("<!-- the retry contract -->") : document.index("<!-- end of the retry contract -->")
    ]
    rows = {line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ") and "---" not in line}
    rows.discard("answer")
    assert rows == {scenario["row"] for scenario in CONTRACT["scenarios"]}


def test_the_contracts_numbers_are_the_documents():
    document = (ROOT / "docs/frontend.md").read_text()
    assert f"at most {MAX_SENDS} times" in document
    assert f"at most {STATUS_ASKS} times" in document
    assert f"unanswered for {TIMEOUT_S:g} s has no answer" in document
    assert {Kind(scenario["kind"]) for scenario in CONTRACT["scenarios"]} == set(Kind)
