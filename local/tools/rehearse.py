"""A flash sale rehearsed against a running environment, audited from outside: ``make rehearse``.

    python -m local.tools.rehearse --target local                       # make up's stack
    python -m local.tools.rehearse --target dev --url https://ID.execute-api.eu-west-1.amazonaws.com/dev \\
        --region eu-west-1
    python -m local.tools.rehearse --target prod --url .../prod --region eu-west-1 --id-tokens tokens.txt

It creates a coupon of ``--copies`` through the operators' route, then drives a sale shaped like
a real one with locust (its library, no web UI): ``--users`` users, ``--burst`` of them at the
opening second and the rest arriving over ``--late-seconds``; every user clicks twice at once;
a 429 or 503 is asked again after its ``Retry-After`` with jitter and the same
``Idempotency-Key`` (``ApiClient.request_coupon``). Then it waits for the pipeline to drain and
audits I1-I5 through the API alone (``outside_audit.py``), prints locust's statistics and the
invariants, writes the HTML report, and exits 1 if an invariant broke.

It only ever calls the URL it is given, and only when that URL is the target's own: an AWS
target needs ``--url`` naming the execute-api stage of that environment in ``--region`` (the
stack's ``ApiUrl`` output), and the local target is make up's stack, which must be running.
Users, time and copies are bounded. Authentication is the environment's: SigV4 with your AWS
credentials for the operators' routes (and the public ones in dev); in prod the public route
takes a Cognito ID token per user (``--id-tokens``, one per line: the sale has that many users).
"""

from gevent import monkey

monkey.patch_all()  # before anything imports ssl or threading: locust's users are greenlets

import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402
from itertools import count  # noqa: E402
from typing import ClassVar  # noqa: E402

import gevent  # noqa: E402
from locust import User, task  # noqa: E402
from locust.env import Environment  # noqa: E402
from locust.exception import StopUser  # noqa: E402
from locust.stats import get_percentile_stats_summary, get_stats_summary  # noqa: E402

from coupon_client.api_client import ApiClient  # noqa: E402
from coupon_client.fairness import Line  # noqa: E402
from coupon_client.retry import Claim  # noqa: E402
from local.testkit.intake_lines import sale_lines, span_since  # noqa: E402
from local.tools.outside_audit import Auditor, audit  # noqa: E402
from local.tools.rehearsal_target import Target, TargetError, arrivals, parse_args, target  # noqa: E402
from local.tools.sale_report import (  # noqa: E402
    Convergence,
    Observation,
    SaleTimeline,
    conclude,
    fairness_rows,
)

FINAL = {"SUCCESS", "SOLD_OUT", "DUPLICATE"}


@dataclass
class RehearsalSale:
    """What the simulated users share: the coupon, who arrives when, and every answer."""

    coupon_id: int
    users: int
    arrivals: list[float]  # seconds after the opening, one per user
    public: list[ApiClient]
    started: float = field(default_factory=time.perf_counter)
    began_ms: int = field(default_factory=lambda: time.time_ns() // 1_000_000)  # when it began (epoch ms)
    answers: list[tuple[int, Claim]] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    _next: count = field(default_factory=lambda: count(1))

    def next_user(self) -> int | None:
        user = next(self._next)
        return user if user <= self.users else None

    def client_of(self, user: int) -> ApiClient:
        return self.public[(user - 1) % len(self.public)]

    @property
    def clicks_answered(self) -> int:
        return len(self.answers)


class Buyer(User):
    """One user of the sale: arrives at its time and clicks twice at once."""

    sale: ClassVar[RehearsalSale]

    @task
    def arrive_and_click(self) -> None:
        sale = self.sale
        user = sale.next_user()
        if user is None:
            raise StopUser
        gevent.sleep(max(0.0, sale.arrivals[user - 1] - (time.perf_counter() - sale.started)))
        gevent.joinall([gevent.spawn(self._click, user) for _ in range(2)])
        raise StopUser

    def _click(self, user: int) -> None:
        sale = self.sale
        began = time.perf_counter()
        answer = sale.client_of(user).request_coupon(sale.coupon_id, user)
        done = time.perf_counter()
        sale.answers.append((user, answer))
        sale.observations.append(Observation(done - sale.started, answer.status, (done - began) * 1000))
        failed = None if answer.status in FINAL else RuntimeError(f"{answer.reply.status_code} {answer.status}")
        self.environment.events.request.fire(
            request_type="POST", name=f"/coupon-issues {answer.status}", response_time=(done - began) * 1000,
            response_length=0, exception=failed, context={},
        )  # fmt: skip


def create_coupon(admin: ApiClient, copies: int) -> int:
    now = datetime.now(UTC)
    created = admin.request("POST", "/coupons", {
        "name": "rehearsal", "totalQuantity": copies,
        "issueStartsAt": now.isoformat(), "issueEndsAt": (now + timedelta(hours=1)).isoformat(),
    })  # fmt: skip
    if created.status_code != 201:
        raise RuntimeError(f"the coupon was not created: {created.status_code} {created.body}")
    return int(created.body["couponId"])


def drive(sale: RehearsalSale, max_seconds: float) -> float:
    """Every user through locust's runner, within ``max_seconds``; the sale's duration."""
    Buyer.sale = sale
    environment = Environment(user_classes=[Buyer])
    runner = environment.create_local_runner()
    sale.started = time.perf_counter()
    runner.start(user_count=sale.users, spawn_rate=sale.users)
    deadline = sale.started + max_seconds
    while sale.clicks_answered < 2 * sale.users and time.perf_counter() < deadline:
        gevent.sleep(0.2)
    elapsed = time.perf_counter() - sale.started
    runner.quit()
    print("\nlocust's statistics, per answer (response times in ms, retries included):")
    print("\n".join(get_stats_summary(environment.stats, current=False)))
    print("\n".join(get_percentile_stats_summary(environment.stats)))
    return elapsed


def arrival_order(chosen: Target, sale: RehearsalSale) -> tuple[list[Line], str]:
    """The sale's lines in the intake's log group, for its arrival order, or why there are none:
    read again until there is one per request the sale's clicks sent (a log group is written a
    moment after the answer); on AWS, only the coupon's (a JSON filter pattern)."""
    log = chosen.intake_log
    if log is None:
        return [], ": give --intake-log-group (the stack's IntakeLogGroup output)"
    span = span_since(sale.began_ms)
    requests = sum(claim.attempts for _, claim in sale.answers)
    return sale_lines(lambda: log.lines(span, sale.coupon_id), sale.coupon_id, requests), f" in {log.group}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv, __doc__ or "")
    try:
        chosen = target(args)
    except (TargetError, OSError) as exc:
        print(f"make rehearse: {exc}", file=sys.stderr)
        return 2
    users = len(chosen.public) if chosen.name == "prod" else args.users
    coupon_id = create_coupon(chosen.admin, args.copies)
    print(f"Rehearsal on {chosen.name} ({chosen.url}): coupon {coupon_id}, {args.copies:,} copies, {users:,} users "
          f"clicking twice, {args.burst:.0%} at the opening, the rest over {args.late_seconds:g} s")  # fmt: skip
    sale = RehearsalSale(coupon_id, users, arrivals(users, args.burst, args.late_seconds), chosen.public)
    elapsed = drive(sale, args.max_seconds)
    auditor = Auditor(chosen.admin, coupon_id)
    sample = Convergence(auditor.held_counts, lambda: time.perf_counter() - sale.started)
    drained = auditor.wait_until_converged(args.drain_seconds, sample)
    checks = audit(auditor, sale.answers, chosen.public[0])
    checks[f"the pipeline drained within {args.drain_seconds:g} s"] = drained
    checks[f"every click answered within {args.max_seconds:g} s"] = sale.clicks_answered == 2 * users
    answered = Counter(answer.status for _, answer in sale.answers)
    summary = [
        ("target", f"{chosen.name}: {chosen.url}"),
        ("requests", f"{sale.clicks_answered:,} clicks answered in {elapsed:.1f} s"),
        ("answers", ", ".join(f"{status} {count:,}" for status, count in sorted(answered.items()))),
    ]
    lines, missing = arrival_order(chosen, sale)
    summary += fairness_rows(lines, missing)
    for label, value in summary:
        print(f"{label}: {value}")
    title = f"make rehearse: {chosen.name}, coupon {coupon_id}, {args.copies:,} copies, {users:,} users"
    timeline = SaleTimeline(title, args.copies, sale.observations, sample.samples, summary, checks, lines)
    return conclude(timeline, "rehearsal")


if __name__ == "__main__":
    sys.exit(main())
