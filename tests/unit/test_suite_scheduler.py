"""``make test``'s workers: the integration tier on one worker, the infra tier on one, every
other test wherever a worker is free (tests/conftest.py, OneWorkerPerTier)."""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadScopeScheduling

from tests.conftest import OneWorkerPerTier


def test_the_scope_it_overrides_is_the_one_xdist_groups_by() -> None:
    # a private method of the pinned xdist: a rename would leave the override unused and two
    # workers starting LocalStack on the same ports
    assert "_split_scope" in vars(LoadScopeScheduling)
    assert "_split_scope" in vars(OneWorkerPerTier)


@pytest.mark.parametrize(
    ("nodeid", "scope"),
    [
        ("tests/integration/test_shop_page.py::test_a", "integration"),
        ("tests/integration/test_through_the_api.py::test_b[x]", "integration"),
        ("tests/infra/test_stack.py::test_c", "infra"),
        ("tests/services/test_intake.py::test_d", "tests/services/test_intake.py::test_d"),
        ("tests/unit/integration/test_e.py::test_f", "tests/unit/integration/test_e.py::test_f"),
    ],
)
def test_each_live_or_synthesized_tier_is_one_scope_and_every_other_test_its_own(nodeid: str, scope: str) -> None:
    assert OneWorkerPerTier._split_scope(nodeid) == scope
