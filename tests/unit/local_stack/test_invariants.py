"""The invariant check the demo and the integration run report with, on hand-made observations."""

from __future__ import annotations

import pytest

from local.tools.invariants import Observed, check


def observed(
    issued: dict[str, int],
    failed: frozenset[str] | set[str] = frozenset(),
    total: int = 10,
    canceled: frozenset[int] | set[int] = frozenset(),
) -> Observed:
    """Holders from ``issued`` (request -> user) minus the ``canceled`` users, who keep blocking."""
    users = set(issued.values()) - set(canceled)
    return Observed(
        total=total,
        remaining=total - len(users),
        issued_users=users,
        issued_requests=set(issued),
        failed_requests=set(failed),
        reserved_users=users | set(canceled),
        canceled_users=set(canceled),
        reissue_after_cancel=False,
    )


def i3(observation: Observed, successes: dict[str, int]) -> bool:
    return next(held for name, held in check(observation, successes).items() if name.startswith("I3"))


@pytest.mark.parametrize(
    ("issued", "failed", "successes", "held"),
    [
        ({"r1": 1}, set(), {"r1": 1}, True),  # issued by its own request
        ({}, {"r1"}, {"r1": 1}, True),  # dead-lettered, released and recorded
        ({"r1": 1}, set(), {"r2": 1}, False),  # another request of the user was issued: this SUCCESS left no trace
        ({"r2": 1}, {"r1"}, {"r1": 1, "r2": 1}, True),  # failed, then issued on a second request
        ({}, set(), {"r1": 1}, False),  # lost
        ({"r1": 1}, {"r1"}, {"r1": 1}, False),  # both issued and recorded as failed
        ({"r1": 2}, set(), {"r9": 1}, False),  # another user's issue does not settle this one
    ],
)
def test_i3_every_success_ends_exactly_once(issued, failed, successes, held):
    assert i3(observed(issued, failed), successes) is held


def test_oversell_and_drift_are_reported():
    oversold = observed({f"r{user}": user for user in range(11)})
    results = check(oversold, {})
    assert [held for name, held in results.items() if name.startswith(("I1", "I4"))] == [False, True]
    drifted = Observed(10, 10, {1}, {"r1"}, set(), set(), set(), reissue_after_cancel=False)
    assert [held for name, held in check(drifted, {"r1": 1}).items() if name.startswith("I4")] == [False]


def test_more_success_answers_than_copies_break_i1_even_when_the_database_held():
    """Each extra SUCCESS ends FAILED (I3 holds), but the API promised more copies than exist."""
    results = check(observed({"r1": 1}, {"r2"}, total=1), {"r1": 1, "r2": 2})
    assert [held for name, held in results.items() if name.startswith(("I1", "I3"))] == [False, True]


def test_a_canceled_copy_sold_again_keeps_every_invariant():
    """Two copies; user 1 canceled (still blocking in Redis), the copy sold to user 3."""
    after_cancel = observed({"r1": 1, "r2": 2, "r3": 3}, total=2, canceled={1})
    results = check(after_cancel, {"r1": 1, "r2": 2, "r3": 3})
    assert all(results.values()), results


def test_more_success_answers_than_copies_and_cancels_break_i1():
    oversold = observed({"r1": 1, "r2": 2, "r3": 3}, total=2, canceled={1})
    results = check(oversold, {"r1": 1, "r2": 2, "r3": 3, "r4": 4})
    assert [held for name, held in results.items() if name.startswith("I1")] == [False]
