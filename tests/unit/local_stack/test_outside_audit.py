"""The outside audit says BROKEN when the API's own figures show a broken invariant (and only
then): an oversold coupon, a user holding two issues, a SUCCESS with neither an issue nor a
recorded failure, Redis and PostgreSQL apart, a bad request accepted."""

from __future__ import annotations

from typing import Any

import pytest

from coupon_client.api_client import Reply
from coupon_client.retry import Claim, Kind
from local.tools import invariants
from local.tools.outside_audit import Auditor, Issue, audit


class Seen(Auditor):
    def __init__(self, counts: dict[str, Any], issues: list[Issue], failed: set[int] = frozenset()) -> None:
        self._counts, self._issues, self._failed = counts, issues, failed
        self.coupon_id = 1

    def counts(self) -> dict[str, Any]:
        return dict(self._counts)

    def issues(self) -> list[Issue]:
        return list(self._issues)

    def status_of(self, user: int) -> str:
        return "FAILED" if user in self._failed else "NONE"


class Refusing:
    """A public client whose every bad request is refused with a JSON error (``accept``: or not)."""

    def __init__(self, accept: bool = False) -> None:
        self.accept = accept

    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None) -> Reply:
        return Reply(202 if self.accept else 422, {"status": "INVALID_REQUEST", "error": "no"}, 0.0)


COUNTS = {"totalQuantity": 2, "remainingQuantity": 0, "reserved": 2, "issued": 2}
ISSUES = [Issue(1, "r1", "ISSUED"), Issue(2, "r2", "USED")]


def clicked(code: int, body: dict[str, Any]) -> Claim:
    """A click that ended on ``body``'s answer."""
    return Claim(Kind.SUCCESS if code == 202 else Kind.REFUSED, Reply(code, body, 0.0), 1, 0.0)


ANSWERS = [(1, clicked(202, {"status": "SUCCESS", "requestId": "r1"})),
           (2, clicked(202, {"status": "SUCCESS", "requestId": "r2"})),
           (3, clicked(409, {"status": "SOLD_OUT"}))]  # fmt: skip


@pytest.fixture(autouse=True)
def no_wait(monkeypatch):
    monkeypatch.setattr(invariants.time, "sleep", lambda _s: None)


def broken(checks: dict[str, bool]) -> list[str]:
    return [name.split(" ")[0] for name, held in checks.items() if not held]


def test_a_clean_sale_holds_every_invariant():
    assert broken(audit(Seen(COUNTS, ISSUES), ANSWERS, Refusing())) == []


@pytest.mark.parametrize(
    ("counts", "issues", "answers", "failed", "expected"),
    [
        ({**COUNTS, "totalQuantity": 1}, ISSUES, ANSWERS, set(), ["I1"]),  # two holders of one copy
        (COUNTS, [*ISSUES, Issue(1, "r9", "ISSUED")], ANSWERS, set(), ["I1", "I2"]),  # user 1 twice
        (COUNTS, ISSUES, [*ANSWERS, (1, clicked(202, {"status": "SUCCESS", "requestId": "r7"}))], {1}, ["I2"]),
        (COUNTS, ISSUES[:1], ANSWERS, set(), ["I1", "I3"]),  # a SUCCESS that is nowhere
        ({**COUNTS, "remainingQuantity": 1}, ISSUES[:1], ANSWERS, {2}, []),  # released, recorded: settled
        ({**COUNTS, "reserved": 3}, ISSUES, ANSWERS, set(), ["I4"]),
    ],
)
def test_a_broken_invariant_is_reported_broken(counts, issues, answers, failed, expected):
    assert broken(audit(Seen(counts, issues, failed), answers, Refusing())) == expected


def test_a_bad_request_that_is_accepted_breaks_i5():
    assert broken(audit(Seen(COUNTS, ISSUES), ANSWERS, Refusing(accept=True))) == ["I5"]
