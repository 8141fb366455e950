"""Every interleaving Hypothesis draws of the pipeline's steps holds I1-I5 (``interleavings.py``).

``make test`` runs a fixed sample (derandomised, no example database: the same steps every run);
``make explore`` runs the machine with random seeds for a number of examples or a duration, and
keeps what it finds in ``.hypothesis/`` to replay first next time. A failure prints the minimal
sequence of steps: each is a method of the machine, so the printout is a plain test to keep.
"""

from __future__ import annotations

import os
import time

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import run_state_machine_as_test

from tests.services.interleavings import Interleavings, World

STEPS = int(os.environ.get("EXPLORE_STEPS", "25"))


def test_every_interleaving_holds_the_invariants(pipeline, migrated_engine, redis_client):
    Interleavings.world = World(pipeline, migrated_engine, redis_client)
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


def test_a_reconcile_between_a_dead_letter_and_its_commit_puts_no_holder_back(pipeline, migrated_engine, redis_client):
    """The ordering of tests/services/test_dead_letter_races.py as the machine's steps."""
    Interleavings.world = World(pipeline, migrated_engine, redis_client)
    state = Interleavings()
    state.open_coupon(copies=2, reissue=False)
    state.request(user=1, keyed=False)
    state.dead_letter_a_batch(limit=1, commit=False)
    state.settle_dead_letters()
    state.scheduled_reconcile()
    state.no_copy_given_back_is_held_again()
    state.teardown()
