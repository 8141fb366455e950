"""First come, first served, measured: one entry per click, a give-back apart from an inversion.

Every answer of ``POST /coupon-issues`` writes one metrics line (``functions/intake/app.py``,
``count_issue``): the coupon, the outcome, ``arrivedAt`` (API Gateway's ``requestTimeEpoch``),
``decidedAt`` (this answer's time: Redis' ``TIME`` for a decision ``reserve.lua`` made, the
container's clock for an answer from its memory), ``requestId`` (derived from the
``Idempotency-Key``, so a click's attempts share it) and, for an answer that repeats an earlier
decision, ``replays``: that decision's time (the reservation of a SUCCESS answered again, or the
Redis answer the container's memory repeats). The figures are computed here, from those lines,
for every report and for ``coupons fairness`` alike (docs/design.md section 10 states them):

- a **click** is the lines of one request id (:func:`clicks`): it arrived at its first attempt
  that reached the intake; it is a **winner** if an attempt took a copy (SUCCESS, or UNCONFIRMED,
  which keeps its reservation; taken at the reservation; when only replays of it have lines, the
  attempt that reserved wrote none, its answer lost at the gateway, a function timeout, so the
  click arrived by the reservation at the latest), a **loser** if one was SOLD_OUT and none took
  one (decided at its first SOLD_OUT, the repeated decision's time for an answer from the
  memory), else neither;
- an **inversion** is a loser overtaken: it arrived before a winner and was decided after that
  winner took its copy, or in the same millisecond (Redis runs one script at a time, so a refusal
  in the millisecond of the take that sold out came after it). The **inversion window** is the
  largest overtaking (the winner's arrival minus the loser's), the **early losers** the losers
  overtaken;
- a **late winner** took its copy after a loser had been told SOLD_OUT: a copy put back (a
  cancel, a release, a top-up) and taken later, counted apart, never an inversion;
- **waits**: arrival to decision per outcome, each attempt's; the two clocks differ (API Gateway's
  and Redis' or the container's), so a wait may be negative, and the minimum shows it.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

WINNER, LOSER = "SUCCESS", "SOLD_OUT"
TAKEN = frozenset({WINNER, "UNCONFIRMED"})  # answers of a request that took a copy (UNCONFIRMED keeps it)


@dataclass(frozen=True)
class Line:
    """One answer as its metrics line gives it: epoch ms, and the outcome."""

    arrived_at: int
    decided_at: int
    outcome: str
    request_id: str | None = None  # None: a request without a key; its attempts cannot be joined
    replays: int | None = None  # the earlier decision this answer repeats


@dataclass(frozen=True)
class Click:
    """One click: its attempts joined. ``decided_at``: a winner's reservation, a loser's first
    SOLD_OUT decision; None for neither."""

    arrived_at: int
    outcome: str  # WINNER, LOSER, or the last attempt's outcome
    decided_at: int | None
    attempts: int


@dataclass(frozen=True)
class Waits:
    """Arrival to decision of one outcome's answers, in ms."""

    answers: int
    min_ms: int
    p50_ms: int
    p99_ms: int
    max_ms: int


@dataclass(frozen=True)
class Overtaking:
    """A loser overtaken: when it arrived and was decided, and the winner that overtook it most."""

    loser_arrived_at: int
    loser_decided_at: int
    winner_arrived_at: int
    winner_took_at: int

    @property
    def ms(self) -> int:
        return self.winner_arrived_at - self.loser_arrived_at


@dataclass(frozen=True)
class Fairness:
    lines: int
    clicks: int
    winners: int
    losers: int
    inversion_window_ms: int
    early_losers: int
    late_winners: int
    late_takes: tuple[int, int] | None  # epoch ms of the first and the last late winner's take
    waits: dict[str, Waits] = field(default_factory=dict)
    overtaken: tuple[Overtaking, ...] = ()  # every overtaken loser, the largest overtaking first

    def as_json(self, detail: int = 0) -> dict[str, object]:
        """The figures under the names ``coupons fairness --output json`` prints, with up to
        ``detail`` of the overtaken losers."""
        return {
            "lines": self.lines, "clicks": self.clicks, "winners": self.winners, "losers": self.losers,
            "inversionWindowMs": self.inversion_window_ms, "earlyLosers": self.early_losers,
            "lateWinners": self.late_winners,
            "lateTakes": None if self.late_takes is None else {"first": self.late_takes[0], "last": self.late_takes[1]},
            "waits": {outcome: {"answers": w.answers, "minMs": w.min_ms, "p50Ms": w.p50_ms, "p99Ms": w.p99_ms,
                                "maxMs": w.max_ms} for outcome, w in sorted(self.waits.items())},
            "overtaken": [{"loserArrivedAt": o.loser_arrived_at, "loserDecidedAt": o.loser_decided_at,
                           "winnerArrivedAt": o.winner_arrived_at, "winnerTookAt": o.winner_took_at, "ms": o.ms}
                          for o in self.overtaken[:detail]],
        }  # fmt: skip

    def summary(self) -> list[tuple[str, str]]:
        """The figures as a report's rows (name, value)."""
        late = "none"
        if self.late_takes is not None:
            late = (
                f"{self.late_winners:,}, taking copies {(self.late_takes[1] - self.late_takes[0]) / 1000:,.1f} s apart"
            )
        rows = [
            ("clicks", f"{self.clicks:,} ({self.lines:,} answers): {self.winners:,} won, {self.losers:,} lost"),
            ("inversion window", f"{self.inversion_window_ms:,} ms"),
            ("losers overtaken by a later arrival", f"{self.early_losers:,} of {self.losers:,}"),
            ("late winners (a copy put back, taken later)", late),
        ]
        rows += [
            (f"arrival to decision, {outcome}",
             f"min {w.min_ms:,} ms, p50 {w.p50_ms:,} ms, p99 {w.p99_ms:,} ms, max {w.max_ms:,} ms")
            for outcome, w in sorted(self.waits.items())
        ]  # fmt: skip
        return rows


def percentile(values: Sequence[int], q: float) -> int:
    """The nearest-rank ``q``-th percentile of ``values`` (sorted or not; at least one)."""
    ordered = sorted(values)
    return ordered[max(math.ceil(q / 100 * len(ordered)), 1) - 1]


def lines_of(texts: Iterable[str], coupon_id: int) -> list[Line]:
    """The coupon's answers among ``texts`` (log lines: the intake's metrics lines, a log
    stream's prefix before the JSON allowed; any other line passed over). A line without an
    integer ``arrivedAt`` (an event without ``requestTimeEpoch``) is left out."""
    found = []
    for document in _documents(texts):
        arrived, decided = _ms(document.get("arrivedAt")), _ms(document.get("decidedAt"))
        if document.get("couponId") != coupon_id or arrived is None or decided is None:
            continue
        request = document.get("requestId")
        found.append(Line(arrived, decided, str(document.get("outcome")), request if isinstance(request, str) else None,
                          _ms(document.get("replays"))))  # fmt: skip
    return found


def _ms(value: object) -> int | None:
    """``value`` if it is an integer (epoch ms), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _documents(texts: Iterable[str]) -> Iterator[dict[str, Any]]:
    for text in texts:
        if '"decidedAt"' not in text:
            continue
        try:
            document = json.loads(text[text.index("{") :])
        except ValueError:
            continue
        if isinstance(document, dict):
            yield document


def clicks(lines: Iterable[Line]) -> list[Click]:
    """The clicks of ``lines``: each request id's lines joined (a line without one is a click of
    its own)."""
    by_request: dict[object, list[Line]] = {}
    for number, line in enumerate(lines):
        by_request.setdefault(line.request_id if line.request_id is not None else number, []).append(line)
    return [_click(attempts) for attempts in by_request.values()]


def _click(attempts: list[Line]) -> Click:
    arrived = min(line.arrived_at for line in attempts)
    took = [line for line in attempts if line.outcome in TAKEN]
    if took:  # its reservation: the decision a SUCCESS answered again repeats
        reserved = min(_decision(line) for line in took)
        if all(line.replays is not None for line in took):  # the attempt that reserved wrote no line
            arrived = min(arrived, reserved)
        return Click(arrived, WINNER, reserved, len(attempts))
    lost = [line for line in attempts if line.outcome == LOSER]
    if lost:
        return Click(arrived, LOSER, min(_decision(line) for line in lost), len(attempts))
    last = max(attempts, key=lambda line: line.decided_at)
    return Click(arrived, last.outcome, None, len(attempts))


def _decision(line: Line) -> int:
    return line.replays if line.replays is not None else line.decided_at


def measure(lines: Iterable[Line]) -> Fairness:
    """The figures of a sale from every one of its answers' lines (the module's docstring)."""
    lines = list(lines)
    joined = clicks(lines)
    winners = sorted((c.decided_at, c.arrived_at) for c in joined if c.outcome == WINNER and c.decided_at is not None)
    losers = [(c.arrived_at, c.decided_at) for c in joined if c.outcome == LOSER and c.decided_at is not None]
    overtaken = _overtaken(winners, losers)
    first_loss = min((decided for _, decided in losers), default=None)
    late = [took for took, _ in winners if first_loss is not None and took > first_loss]
    waits: dict[str, list[int]] = {}
    for line in lines:
        waits.setdefault(line.outcome, []).append(line.decided_at - line.arrived_at)
    return Fairness(
        lines=len(lines),
        clicks=len(joined),
        winners=len(winners),
        losers=len(losers),
        inversion_window_ms=max((o.ms for o in overtaken), default=0),
        early_losers=len(overtaken),
        late_winners=len(late),
        late_takes=(min(late), max(late)) if late else None,
        waits={
            outcome: Waits(len(ms), min(ms), percentile(ms, 50), percentile(ms, 99), max(ms))
            for outcome, ms in waits.items()
        },
        overtaken=tuple(sorted(overtaken, key=lambda o: (-o.ms, o.loser_arrived_at))),
    )


def _overtaken(winners: list[tuple[int, int]], losers: list[tuple[int, int]]) -> list[Overtaking]:
    """Each loser overtaken by the winner that overtook it most: of the winners that took their
    copy before the loser was decided (or in its millisecond), the last to arrive, if it arrived
    after the loser.
    ``winners`` are (took, arrived) in order of taking; ``losers`` (arrived, decided)."""
    takes = [took for took, _ in winners]
    latest: list[tuple[int, int]] = []  # per prefix of winners: (arrived, took) of the latest arrival
    for took, arrived in winners:
        latest.append(max(latest[-1], (arrived, took)) if latest else (arrived, took))
    found = []
    for arrived, decided in losers:
        before = bisect.bisect_right(takes, decided)  # the winners that took their copy by the decision
        if before and latest[before - 1][0] > arrived:
            winner_arrived, took = latest[before - 1]
            found.append(Overtaking(arrived, decided, winner_arrived, took))
    return found


def coupon_pattern(coupon_id: int) -> str:
    """CloudWatch Logs' filter pattern for the coupon's metrics lines."""
    return f"{{ $.couponId = {int(coupon_id)} }}"


def read_lines(logs: Any, group: str, span_ms: tuple[int, int], pattern: str = "") -> Iterator[str]:
    """The lines of ``group`` between ``span_ms`` (epoch ms) that match ``pattern`` (CloudWatch
    Logs' filter syntax; empty: every line), through a boto3 Logs client's FilterLogEvents,
    every page of it."""
    paginator = logs.get_paginator("filter_log_events")
    pages = paginator.paginate(logGroupName=group, startTime=span_ms[0], endTime=span_ms[1], filterPattern=pattern)
    for page in pages:
        for event in page.get("events", []):
            yield str(event["message"])
