"""First come, first served, measured: how far a sale's winners strayed from arrival order.

A sale is judged by its answers, one :class:`Answer` each: when the request arrived (API
Gateway's ``requestTimeEpoch`` on AWS; on the local stack, when the client sent it), when its
answer was decided (Redis' clock for a decision ``reserve.lua`` made, the container's for one
from its memory) and the outcome. Winners are the SUCCESS answers, losers the SOLD_OUT ones;
DUPLICATE, bad input and the rest are neither. The figures (:class:`Fairness`):

- **the inversion window**: the latest winner's arrival minus the earliest loser's, when that is
  positive (else 0): the longest a loser had been waiting when a later arrival won. The one
  number to quote to a shopper who says "I clicked first";
- **early losers**: how many losers arrived before the last winner (each could say so);
- **waits**: arrival to decision, p50, p99 and max, per outcome: what the path to the decision
  took (a cold start, a queue), which is what reorders requests; only where the decision's time
  is known (the intake's lines carry it).

A late winner is a winner too: a copy a cancel or a release put back, taken by a later arrival,
widens the window by design (docs/design.md, Arrival order, says what reorders a request and
what bounds each cause).

On a deployed environment the figures come from the intake's metrics lines through CloudWatch
Logs Insights (:func:`by_outcome_query`, :func:`early_losers_query`, :func:`from_insights`); a
local report computes them from every answer (:func:`measure`). Percentiles here are by
nearest rank; Logs Insights computes its own ``pct``, which may be approximate on many rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

WINNER, LOSER = "SUCCESS", "SOLD_OUT"


@dataclass(frozen=True)
class Answer:
    """One answer of a sale: epoch ms on the clocks named above (``decided_at`` None: not known,
    as for a client that sees only its answers), and the outcome."""

    arrived_at: int
    decided_at: int | None
    outcome: str


@dataclass(frozen=True)
class Waits:
    """Arrival to decision of one outcome's answers, in ms."""

    answers: int
    p50_ms: float
    p99_ms: float
    max_ms: float


@dataclass(frozen=True)
class Fairness:
    winners: int
    losers: int
    inversion_window_ms: int
    early_losers: int
    last_winner_at: int | None  # epoch ms of the latest winner's arrival
    first_loser_at: int | None  # epoch ms of the earliest loser's arrival
    waits: dict[str, Waits] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        """The figures under the names ``coupons fairness --output json`` prints."""
        return {
            "winners": self.winners,
            "losers": self.losers,
            "inversionWindowMs": self.inversion_window_ms,
            "earlyLosers": self.early_losers,
            "lastWinnerAt": self.last_winner_at,
            "firstLoserAt": self.first_loser_at,
            "waits": {outcome: {"answers": w.answers, "p50Ms": w.p50_ms, "p99Ms": w.p99_ms, "maxMs": w.max_ms}
                      for outcome, w in sorted(self.waits.items())},
        }  # fmt: skip

    def summary(self) -> list[tuple[str, str]]:
        """The figures as a report's rows (name, value)."""
        rows = [
            ("inversion window", f"{self.inversion_window_ms:,} ms"),
            ("losers who arrived before the last winner", f"{self.early_losers:,} of {self.losers:,}"),
        ]
        rows += [
            (f"arrival to decision, {outcome}", f"p50 {w.p50_ms:g} ms, p99 {w.p99_ms:g} ms, max {w.max_ms:g} ms")
            for outcome, w in sorted(self.waits.items())
        ]
        return rows


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile of ``values`` (sorted or not; at least one)."""
    ordered = sorted(values)
    return ordered[max(math.ceil(q / 100 * len(ordered)), 1) - 1]


def measure(answers: Iterable[Answer]) -> Fairness:
    """The figures of a sale from every one of its answers."""
    answers = list(answers)
    winners = [a.arrived_at for a in answers if a.outcome == WINNER]
    losers = [a.arrived_at for a in answers if a.outcome == LOSER]
    last_winner, first_loser = max(winners, default=None), min(losers, default=None)
    waits: dict[str, list[int]] = {}
    for answer in answers:
        if answer.decided_at is not None:
            waits.setdefault(answer.outcome, []).append(answer.decided_at - answer.arrived_at)
    return Fairness(
        winners=len(winners),
        losers=len(losers),
        inversion_window_ms=_inversion(last_winner, first_loser),
        early_losers=sum(1 for arrived in losers if last_winner is not None and arrived < last_winner),
        last_winner_at=last_winner,
        first_loser_at=first_loser,
        waits={
            outcome: Waits(len(ms), percentile(ms, 50), percentile(ms, 99), max(ms)) for outcome, ms in waits.items()
        },
    )


def _inversion(last_winner: int | None, first_loser: int | None) -> int:
    if last_winner is None or first_loser is None:
        return 0
    return max(last_winner - first_loser, 0)


GATEWAY_REQUEST_ID = "x-amzn-requestid"  # API Gateway's request id on its answers: the lines' correlation_id


def gateway_request_id(headers: Mapping[str, str]) -> str | None:
    """API Gateway's id of the request an answer came from, from the answer's headers."""
    return next((value for name, value in headers.items() if name.lower() == GATEWAY_REQUEST_ID), None)


def _metrics_lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The intake's metrics lines among ``lines`` (JSON with ``decidedAt``; a log stream's prefix
    before the JSON allowed), as documents; any other line passed over."""
    for line in lines:
        if '"decidedAt"' not in line:
            continue
        try:
            document = json.loads(line[line.index("{") :])
        except ValueError:
            continue
        if isinstance(document, dict) and isinstance(document.get("decidedAt"), int):
            yield document


def decisions(lines: Iterable[str]) -> dict[str, int]:
    """When each request's answer was decided (epoch ms), by API Gateway's request id, from the
    intake's metrics lines among ``lines``."""
    return {str(line.get("correlation_id")): line["decidedAt"] for line in _metrics_lines(lines)}


def answers_of(lines: Iterable[str], coupon_id: int) -> list[Answer]:
    """The coupon's answers as the intake's metrics lines among ``lines`` give them, arrival at
    API Gateway included (a line without it is left out)."""
    return [
        Answer(line["arrivedAt"], line["decidedAt"], str(line.get("outcome")))
        for line in _metrics_lines(lines)
        if line.get("couponId") == coupon_id and isinstance(line.get("arrivedAt"), int)
    ]


# CloudWatch Logs Insights, over the intake's log group: its metrics lines carry couponId,
# outcome, arrivedAt and decidedAt (coupon_core/observability.py, count_issue).
_LINES = "filter couponId = {coupon} and ispresent(arrivedAt) and ispresent(decidedAt)"


def by_outcome_query(coupon_id: int) -> str:
    """Per outcome: answers, first and last arrival, and the waits' percentiles."""
    return (
        f"{_LINES.format(coupon=int(coupon_id))}\n"
        "| fields decidedAt - arrivedAt as waitMs\n"
        "| stats count(*) as answers, min(arrivedAt) as firstArrival, max(arrivedAt) as lastArrival,"
        " pct(waitMs, 50) as p50, pct(waitMs, 99) as p99, max(waitMs) as maxWait by outcome"
    )


def early_losers_query(coupon_id: int, last_winner_at: int) -> str:
    """How many losers arrived before the last winner (known from :func:`by_outcome_query`)."""
    return (
        f"{_LINES.format(coupon=int(coupon_id))} and outcome = '{LOSER}' and arrivedAt < {int(last_winner_at)}\n"
        "| stats count(*) as earlyLosers"
    )


def detail_query(coupon_id: int, fairness: Fairness, limit: int = 50) -> str:
    """The answers behind the window: losers who arrived before the last winner and winners who
    arrived after the first loser, oldest first, with their container (``@logStream``) and the
    gateway's request id (the intake's log lines carry it as ``correlation_id``)."""
    last, first = fairness.last_winner_at or 0, fairness.first_loser_at or 0
    return (
        f"{_LINES.format(coupon=int(coupon_id))}"
        f" and ((outcome = '{LOSER}' and arrivedAt < {last}) or (outcome = '{WINNER}' and arrivedAt > {first}))\n"
        "| fields arrivedAt, decidedAt, outcome, correlation_id, @logStream\n"
        f"| sort arrivedAt asc\n| limit {int(limit)}"
    )


Rows = Sequence[Sequence[Mapping[str, str]]]  # GetQueryResults' results: each row a list of {field, value}


def rows_of(results: Rows) -> list[dict[str, str]]:
    """Logs Insights' rows as dicts (its ``@ptr`` left out)."""
    return [{cell["field"]: cell["value"] for cell in row if cell["field"] != "@ptr"} for row in results]


def from_insights(by_outcome: Rows, early_losers: Rows | None = None) -> Fairness:
    """The figures from the two queries' results (``early_losers`` None: not asked, as before the
    last winner's arrival is known from ``by_outcome``, or with no winner)."""
    rows = {row["outcome"]: row for row in rows_of(by_outcome) if "outcome" in row}
    winners, losers = rows.get(WINNER), rows.get(LOSER)
    last = int(float(winners["lastArrival"])) if winners else None
    first = int(float(losers["firstArrival"])) if losers else None
    early = rows_of(early_losers or [])
    return Fairness(
        winners=int(winners["answers"]) if winners else 0,
        losers=int(losers["answers"]) if losers else 0,
        inversion_window_ms=_inversion(last, first),
        early_losers=int(early[0]["earlyLosers"]) if early else 0,
        last_winner_at=last,
        first_loser_at=first,
        waits={
            outcome: Waits(int(row["answers"]), float(row["p50"]), float(row["p99"]), float(row["maxWait"]))
            for outcome, row in rows.items()
        },
    )


QUERY_POLL_S = 1.0
QUERY_TIMEOUT_S = 300.0  # Logs Insights' own limit is 60 minutes; a sale's lines take seconds
_FINISHED = {"Complete", "Failed", "Cancelled", "Timeout", "Unknown"}


class QueryError(Exception):
    """A Logs Insights query that did not complete; the text says how it ended."""


def run_query(logs: Any, log_group: str, query: str, span_s: tuple[int, int], sleep: Callable[[float], None]) -> Rows:
    """``query`` over ``log_group`` between ``span_s`` (epoch seconds), through a boto3 ``logs``
    client, waited for: its rows, or :class:`QueryError`."""
    started = logs.start_query(logGroupName=log_group, startTime=span_s[0], endTime=span_s[1], queryString=query)
    waited = 0.0
    while True:
        answer = logs.get_query_results(queryId=started["queryId"])
        if answer["status"] in _FINISHED:
            break
        if waited >= QUERY_TIMEOUT_S:
            logs.stop_query(queryId=started["queryId"])
            raise QueryError(f"the query did not finish in {QUERY_TIMEOUT_S:g} s")
        sleep(QUERY_POLL_S)
        waited += QUERY_POLL_S
    if answer["status"] != "Complete":
        raise QueryError(f"the query ended {answer['status']}")
    rows: Rows = answer["results"]
    return rows


def of_sale(
    logs: Any, log_group: str, coupon_id: int, span_s: tuple[int, int], *, detail: int, sleep: Callable[[float], None]
) -> tuple[Fairness, list[dict[str, str]]]:
    """A finished sale's figures from the intake's lines, and up to ``detail`` answers behind its
    inversion window (none if it has none)."""
    by_outcome = run_query(logs, log_group, by_outcome_query(coupon_id), span_s, sleep)
    figures = from_insights(by_outcome)
    if figures.last_winner_at is not None:
        early = run_query(logs, log_group, early_losers_query(coupon_id, figures.last_winner_at), span_s, sleep)
        figures = from_insights(by_outcome, early)
    if not detail or not figures.inversion_window_ms:
        return figures, []
    return figures, rows_of(run_query(logs, log_group, detail_query(coupon_id, figures, detail), span_s, sleep))
