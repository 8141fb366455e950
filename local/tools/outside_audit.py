"""I1-I5 audited from outside, through the API alone (a deployed environment's stores are out of
reach): the coupon's counts (``GET /coupons/{id}``, the database's and Redis'), the CSV export
of its issues, and the status route of each user the sale told SUCCESS.

Used by the rehearsal (``rehearse.py``), whose SUCCESS answers are the claims audited.
"""

from __future__ import annotations

import csv
import io
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from coupon_client.api_client import ApiClient
from coupon_client.retry import Claim
from local.tools.invariants import bad_input_changes_nothing, sent_through, successes_of
from local.tools.sale_report import Convergence

HOLDING = {"ISSUED", "USED", "EXPIRED"}  # an issue that holds a copy (CANCELED gave it back)


@dataclass(frozen=True)
class Issue:
    user: int
    request_id: str
    status: str


class Auditor:
    """The coupon's state as the operators' routes show it."""

    def __init__(self, admin: ApiClient, coupon_id: int) -> None:
        self._admin, self.coupon_id = admin, coupon_id

    def counts(self) -> dict[str, Any]:
        answer = self._admin.request("GET", f"/coupons/{self.coupon_id}")
        if answer.status_code != 200:
            raise RuntimeError(f"GET /coupons/{self.coupon_id} answered {answer.status_code}: {answer.body}")
        return dict(answer.body)

    def issues(self) -> list[Issue]:
        """Every issue, from the CSV export, a page of 1,000 at a time."""
        rows: list[Issue] = []
        after = "0"
        while True:
            path = f"/coupons/{self.coupon_id}/issues?format=csv&limit=1000&after={after}"
            answer = self._admin.request("GET", path)
            if answer.status_code != 200:
                raise RuntimeError(f"GET {path} answered {answer.status_code}: {answer.body}")
            text = answer.body if isinstance(answer.body, str) else ""
            rows += [Issue(int(row["userId"]), row["requestId"], row["status"])
                     for row in csv.DictReader(io.StringIO(text))]  # fmt: skip
            after = answer.headers.get("X-Next-After", "")
            if not after:
                return rows

    def status_of(self, user: int) -> str:
        return self._admin.request("GET", f"/coupons/{self.coupon_id}/issues/{user}").status

    def held_counts(self) -> tuple[int, int]:
        """(reservations in Redis, issues in PostgreSQL), as ``invariants.held_counts`` reads them
        from the stores themselves."""
        counts = self.counts()
        return int(counts["reserved"]), int(counts["issued"])

    def wait_until_converged(self, timeout_s: float, sample: Convergence) -> bool:
        """Until Redis' reservations equal the database's issues (the pipeline has drained);
        ``sample`` (on :meth:`held_counts`) takes every look."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            sample()
            _, reserved, issued = sample.samples[-1]
            if reserved == issued:
                return True
            time.sleep(1)
        return False


def audit(auditor: Auditor, answers: list[tuple[int, Claim]], public: ApiClient) -> dict[str, bool]:
    """Each invariant with whether it held, from the API's own answers."""
    counts, issues = auditor.counts(), auditor.issues()
    holders = [issue for issue in issues if issue.status in HOLDING]
    successes = successes_of(answers)
    issued_requests = {issue.request_id for issue in issues}
    per_user = Counter(user for user in successes.values())
    unsettled = [user for request_id, user in successes.items()
                 if request_id not in issued_requests and auditor.status_of(user) != "FAILED"]  # fmt: skip
    total = int(counts["totalQuantity"])
    return {
        f"I1 no oversell: {len(holders)} holders of {total} copies, {counts['remainingQuantity']} remaining":
            len(holders) <= total and int(counts["remainingQuantity"]) == total - len(holders),
        "I2 one per user: no user holds two issues or was told SUCCESS twice":
            len({h.user for h in holders}) == len(holders) and all(n == 1 for n in per_user.values()),
        f"I3 nothing lost: each of {len(successes)} SUCCESS answers is an issue or a recorded failure "
        f"({len(unsettled)} neither)": not unsettled,
        f"I4 convergence: Redis holds {counts['reserved']} reservations, PostgreSQL {counts['issued']} issues":
            counts["reserved"] == counts["issued"],
        "I5 bad input: 4xx with a JSON error, and no change anywhere": bad_input_changes_nothing(
            sent_through(public), lambda: (auditor.counts(), len(auditor.issues())), auditor.coupon_id,
            settle_s=2),
    }  # fmt: skip
