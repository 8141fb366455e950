"""Every interleaving Hypothesis draws of the pipeline's steps holds I1-I5 (``interleavings.py``).

``make test`` runs a fixed sample (derandomised, no example database: the same steps every run);
``make explore`` runs the machine with random seeds for a number of examples or a duration, and
keeps what it finds in ``.hypothesis/`` to replay first next time. A failure prints the minimal
sequence of steps: each is a method of the machine, so the printout is a plain test to keep.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import run_state_machine_as_test

from local.testkit.stores import WholeStore
from tests.services.interleavings import Interleavings, World

STEPS = int(os.environ.get("EXPLORE_STEPS", "25"))


@pytest.fixture
def world(pipeline, migrated_engine, redis_client) -> Iterator[World]:
    """The servers, for the machine: each test's machine runs on them."""
    Interleavings.world = World(pipeline, migrated_engine, redis_client)
    yield Interleavings.world
    Interleavings.world.close()


def test_every_interleaving_holds_the_invariants(world):
    if not os.environ.get("EXPLORE"):  # the fixed sample of make test
        run_state_machine_as_test(Interleavings, settings=sample(examples=6, derandomize=True))
        return
    seconds = float(os.environ.get("EXPLORE_SECONDS") or 0)
    examples = int(os.environ.get("EXPLORE_EXAMPLES") or (0 if seconds else 200))
    deadline = time.monotonic() + seconds
    rounds = 0
    while True:  # make explore: fresh random seeds, one round after the other
        run_state_machine_as_test(Interleavings, settings=sample(examples=examples or 20, derandomize=False))
        rounds += 1
        print(f"explore: round {rounds}, {examples or 20} examples of {STEPS} steps, held I1-I5")
        if examples or time.monotonic() >= deadline:
            return


def sample(*, examples: int, derandomize: bool) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=STEPS,
        derandomize=derandomize,
        database=None if derandomize else DirectoryBasedExampleDatabase(".hypothesis/interleavings"),
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        print_blob=not derandomize,
    )


def test_a_reconcile_between_a_dead_letter_and_its_commit_puts_no_holder_back(world):
    """The ordering of tests/services/test_dead_letter_races.py as the machine's steps."""
    state = Interleavings()
    state.open_coupon(copies=2, reissue=False)
    state.request(user=1, keyed=False)
    state.dead_letter_a_batch(limit=1, commit=False)
    state.settle_dead_letters()
    state.on_demand_reconcile()
    state.no_copy_given_back_is_held_again()
    state.teardown()


class FirstRead:
    """Draws the first of the tails the machine read, as the failing example did."""

    @staticmethod
    def draw(_strategy: object) -> int:
        return 0


def test_a_tail_read_before_an_issue_and_its_cancel_puts_no_canceled_holder_back(world):
    """Found by the machine: a reconcile reads the tail with the request in flight; the worker
    issues it and the user cancels (the coupon allows a second take, so the copy is released);
    then the reconcile applies that tail. It put the user back, whose new request was DUPLICATE
    until a reconcile past the skew released it."""
    state = Interleavings()
    state.open_coupon(copies=2, reissue=True)
    state.request(user=1, keyed=False)
    state.reconcile_reads_the_tail()
    state.deliver_a_batch(limit=1, commit=True)
    state.cancel(user=1)
    state.reconcile_applies_a_tail_read_earlier(data=FirstRead())
    state.no_copy_given_back_is_held_again()
    state.time_passes_for_the_intakes_memory(1.0)  # it remembers the first success a second
    state.request(user=1, keyed=False)
    assert len(state.told.success) == 2  # the second take is not DUPLICATE
    state.teardown()


def test_a_second_take_after_a_cancel_that_is_dead_lettered_is_recorded_and_released(world):
    """Found by the machine: on a coupon that allows a second take, a user cancels, takes the
    coupon again, and that request's record is dead-lettered. The DLQ handler counted the
    canceled row as the user's issue and recorded nothing: a SUCCESS that ended as neither an
    issue nor a released failure (I3), its reservation left for a reconcile past the skew."""
    state = Interleavings()
    state.open_coupon(copies=2, reissue=True)
    state.request(user=1, keyed=False)
    state.deliver_a_batch(limit=1, commit=True)
    state.cancel(user=1)
    state.request(user=1, keyed=False)
    state.dead_letter_a_batch(limit=1, commit=True)
    state.settle_dead_letters()
    state.no_copy_given_back_is_held_again()
    assert WholeStore(world.redis).reservation_time(state.coupon, 1) is None  # released
    state.teardown()
