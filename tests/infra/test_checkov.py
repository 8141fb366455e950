"""checkov's CloudFormation rules on the dev, small and prod templates: every failed check is fixed, or
accepted once with its reason in ``coupon_cdk/checkov_accepted.py``; none unexplained, none stale.

checkov runs from a virtual environment of its own (``local/testkit/checkov.py``), made on the
first run.
"""

from __future__ import annotations

import pytest

from coupon_cdk.checkov_accepted import ACCEPTED, reason_for
from local.testkit.checkov import failed_checks
from tests.infra.conftest import ASSEMBLIES


@pytest.fixture(scope="module")
def findings(dev, small, prod):  # the fixtures synthesize the environments into ASSEMBLIES
    templates = [ASSEMBLIES[env] / f"Coupons-{env}.template.json" for env in ("dev", "small", "prod")]
    return failed_checks(templates)


def test_checkov_finds_nothing_that_is_not_accepted_with_a_reason(findings):
    unexplained = sorted(
        (finding.template, finding.check_id, finding.logical_id)
        for finding in findings
        if reason_for(finding.check_id, finding.logical_id) is None
    )
    assert not unexplained, unexplained


def test_every_acceptance_still_matches_a_finding(findings):
    found = {finding.check_id for finding in findings}
    assert not sorted(set(ACCEPTED) - found)  # a check that passes now is no longer accepted
    for check_id, (prefixes, _) in ACCEPTED.items():
        matched = {
            prefix
            for prefix in prefixes
            for f in findings
            if f.check_id == check_id and f.logical_id.startswith(prefix)
        }
        assert matched == set(prefixes), (check_id, sorted(set(prefixes) - matched))
