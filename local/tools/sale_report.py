"""One self-contained HTML page with a sale's charts: the demo's, the chaos run's, the rehearsal's.

The charts are drawn here by matplotlib, as SVG inlined in the page: nothing is fetched, no
script runs, and the plotting library chooses round ticks and formats the numbers. Six charts:
answers per second by status, latency percentiles over time, a latency histogram, copies sold
against the stock, the reservations in Redis against the issues in PostgreSQL, sampled during
the sale and after it until they meet, and the arrivals around the sell-out: winners and losers
counted by when they arrived (``coupon_client.fairness``: where the two lines overlap, a loser
arrived before a winner). Each series is an SVG group whose id is
``<chart>:<series>``, which is what the browser test reads.
"""

from __future__ import annotations

import html
import io
import math
import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from coupon_client.fairness import LOSER, WINNER, Click, Line, clicks, measure

BUCKETS = 60  # at most this many points along a time axis
HISTOGRAM_BINS = 24


@dataclass(frozen=True)
class Observation:
    at_s: float  # when the answer came, seconds after the sale began
    status: str  # the API's status (SUCCESS, SOLD_OUT, ...) or the HTTP code
    latency_ms: float


@dataclass
class SaleTimeline:
    title: str
    stock: int
    answers: list[Observation] = field(default_factory=list)
    # (seconds after the sale began, reservations in Redis, issues in PostgreSQL)
    convergence: list[tuple[float, int, int]] = field(default_factory=list)
    summary: list[tuple[str, str]] = field(default_factory=list)  # the text report's key figures
    checks: dict[str, bool] = field(default_factory=dict)  # invariants: held or broken
    lines: list[Line] = field(default_factory=list)  # the intake's lines of the sale (the arrival order)


class Convergence:
    """Called now and then during and after a sale: ``counts()`` (reservations in Redis, issues
    in PostgreSQL) at ``elapsed()`` seconds into it, for the convergence chart."""

    def __init__(self, counts: Callable[[], tuple[int, int]], elapsed: Callable[[], float]) -> None:
        self._counts, self._elapsed = counts, elapsed
        self.samples: list[tuple[float, int, int]] = []

    def __call__(self) -> None:
        self.samples.append((self._elapsed(), *self._counts()))


def charts(timeline: SaleTimeline) -> dict[str, Any]:
    """The figures each chart draws, computed here so that the page's script only draws."""
    answers = sorted(timeline.answers, key=lambda answer: answer.at_s)
    end = max([answer.at_s for answer in answers] + [0.001])
    width = _bucket_width(end)
    count = math.floor(end / width) + 1
    xs = [round(i * width, 3) for i in range(count)]
    by_status: dict[str, list[float]] = {}
    latencies: list[list[float]] = [[] for _ in range(count)]
    for answer in answers:
        bucket = min(int(answer.at_s / width), count - 1)
        by_status.setdefault(answer.status, [0.0] * count)[bucket] += 1 / width
        latencies[bucket].append(answer.latency_ms)
    percentiles = {f"p{q}": [_cut(values, q) for values in latencies] for q in (50, 95, 99)}
    sold, running = [], 0
    successes = Counter(min(int(a.at_s / width), count - 1) for a in answers if a.status == "SUCCESS")
    for bucket in range(count):
        running += successes[bucket]
        sold.append(running)
    return {
        "rate": {"x": xs, "series": by_status, "xLabel": "seconds", "yLabel": "answers/s"},
        "latency": {"x": xs, "series": percentiles, "xLabel": "seconds", "yLabel": "ms"},
        "histogram": _histogram([answer.latency_ms for answer in answers]),
        "sold": {"x": xs, "series": {"sold": sold, "stock": [timeline.stock] * count}, "xLabel": "seconds",
                 "yLabel": "copies", "dashed": ["stock"]},
        "convergence": {"x": [round(t, 3) for t, _, _ in timeline.convergence],
                        "series": {"reserved in Redis": [r for _, r, _ in timeline.convergence],
                                   "issued in PostgreSQL": [i for _, _, i in timeline.convergence]},
                        "xLabel": "seconds", "yLabel": "copies", "dashed": ["issued in PostgreSQL"]},
        "arrivals": _arrivals(clicks(timeline.lines)),
    }  # fmt: skip


ARRIVALS_MARGIN_MS = 10  # at least, either side of the sell-out on the arrivals chart


def _arrivals(answers: list[Click]) -> dict[str, Any]:
    """Winners and losers counted by arrival around the sell-out: from the first loser's arrival
    to the last winner's (or the gap between them), with as much again either side, in buckets
    down to a millisecond (an opening's burst reorders requests by a few ms); in seconds after the
    sale's first arrival. Without winners or without losers, the whole sale."""
    ranked = sorted((a.arrived_at, a.outcome) for a in answers if a.outcome in (WINNER, LOSER))
    if not ranked:
        return {"x": [], "series": {}, "xLabel": "arrival (s)", "yLabel": "requests"}
    first, last = ranked[0][0], ranked[-1][0]
    winners = [at for at, outcome in ranked if outcome == WINNER]
    losers = [at for at, outcome in ranked if outcome == LOSER]
    low, high = first, last
    if winners and losers:
        start, end = sorted((min(losers), max(winners)))
        margin = max(end - start, ARRIVALS_MARGIN_MS)
        low, high = max(first, start - margin), min(last, end + margin)
    width_ms = round(_bucket_width(max(high - low, 1) / 1000, smallest=0.001) * 1000)  # whole ms: no float edges
    count = (high - low) // width_ms + 1
    series = {f"won ({WINNER})": [0] * count, f"lost ({LOSER})": [0] * count}
    for at, outcome in ranked:
        if at <= high:  # one before the chart's span counts in its first bucket: the lines are cumulative
            bucket = max((at - low) // width_ms, 0)
            series[f"won ({WINNER})" if outcome == WINNER else f"lost ({LOSER})"][bucket] += 1
    cumulative = {name: [sum(counts[: i + 1]) for i in range(count)] for name, counts in series.items()}
    xs = [(low - first + i * width_ms) / 1000 for i in range(count)]
    return {"x": xs, "series": cumulative, "xLabel": "arrival (s after the first request)",
            "yLabel": "requests arrived, cumulative"}  # fmt: skip


WIDTHS_S = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300)


def _bucket_width(end_s: float, smallest: float = 0.1) -> float:
    """A round width, ``smallest`` or wider, that puts at most BUCKETS buckets on ``end_s``."""
    for width in (width for width in WIDTHS_S if width >= smallest):
        if end_s / width <= BUCKETS:
            return width
    return end_s / BUCKETS


def _cut(values: list[float], q: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 2)
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 2)


def _histogram(latencies: list[float]) -> dict[str, Any]:
    """Counts of latencies in bins of equal width on a log scale (a sale spans 1 ms to seconds)."""
    if not latencies:
        return {"edges": [], "counts": []}
    low, high = math.log10(max(min(latencies), 0.01)), math.log10(max(*latencies, 0.02))
    high = max(high, low + 0.01)
    step = (high - low) / HISTOGRAM_BINS
    counts = [0] * HISTOGRAM_BINS
    for value in latencies:
        counts[min(int((math.log10(max(value, 0.01)) - low) / step), HISTOGRAM_BINS - 1)] += 1
    edges = [round(10 ** (low + i * step), 2) for i in range(HISTOGRAM_BINS + 1)]
    return {"edges": edges, "counts": counts}


ARRIVAL = "when API Gateway received each click's first request that reached the intake (the intake's lines)"


def fairness_rows(lines: list[Line], missing: str = "") -> list[tuple[str, str]]:
    """The report's rows of the sale's arrival order (``coupon_client.fairness``), measured from
    the intake's ``lines``; without any, that it was not measured, and why (``missing``)."""
    if not lines:
        return [("arrival order", f"not measured: no line of the intake's{missing}")]
    return [("arrival", ARRIVAL), *measure(lines).summary()]


def render(timeline: SaleTimeline) -> str:
    figures = charts(timeline)
    summary = "".join(
        f"<tr><th>{html.escape(name)}</th><td>{html.escape(value)}</td></tr>" for name, value in timeline.summary
    )
    checks = "".join(
        f'<li class="{"held" if held else "broken"}">[{"held" if held else "BROKEN"}] {html.escape(name)}</li>'
        for name, held in timeline.checks.items()
    )
    drawn = "".join(
        f'<figure id="{name}"><figcaption>{html.escape(caption)}</figcaption>{_svg(name, figures[name])}</figure>'
        for name, caption in CHARTS.items()
    )
    title = html.escape(timeline.title)
    return _PAGE.format(title=title, summary=summary, checks=checks, figures=drawn)


def _svg(name: str, chart: dict[str, Any]) -> str:
    """The chart drawn by matplotlib, as an ``<svg>`` element to inline."""
    from matplotlib import rc_context, ticker  # noqa: PLC0415 - only a report draws
    from matplotlib.figure import Figure  # noqa: PLC0415

    with rc_context({"svg.fonttype": "none", "svg.hashsalt": name, "font.size": 9}):
        figure = Figure(figsize=(7.5, 3.2), layout="constrained")
        axes = figure.add_subplot()
        if name == "histogram":
            if chart["counts"]:
                axes.stairs(chart["counts"], chart["edges"], fill=True, gid=f"{name}:latency", color="#1f77b4")
                axes.set_xscale("log")
                axes.xaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
                axes.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
                axes.xaxis.set_minor_formatter(ticker.NullFormatter())
            axes.set(xlabel="latency (ms)", ylabel="answers")
        else:
            for series, values in chart["series"].items():
                ys = [math.nan if value is None else value for value in values]
                style = "--" if series in chart.get("dashed", ()) else "-"
                axes.plot(
                    chart["x"], ys, style, marker="." if len(ys) < 20 else "", label=series, gid=f"{name}:{series}"
                )
            axes.set(xlabel=chart["xLabel"], ylabel=chart["yLabel"])
            axes.set_ylim(bottom=0)
            axes.yaxis.set_major_formatter(ticker.StrMethodFormatter("{x:,.0f}"))
            if chart["series"]:
                axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
        axes.grid(alpha=0.3)
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
    document = out.getvalue()
    return document[document.index("<svg") :]


def series_drawn(page: str) -> dict[str, dict[str, int]]:
    """What each chart of ``page`` shows, read back from its SVG: each series, and how many points
    its line (or the histogram's outline) passes through."""
    shown: dict[str, dict[str, int]] = {}
    for name in CHARTS:
        figure = re.search(rf'<figure id="{name}">(.*?)</figure>', page, flags=re.DOTALL)
        groups = re.findall(rf'<g id="{name}:([^"]+)">\s*<path d="([^"]*)"', figure[1] if figure else "")
        shown[name] = {html.unescape(series): len(re.findall(r"[ML] ", path)) for series, path in groups}
    return shown


REPORTS = Path(__file__).resolve().parents[2] / ".local" / "reports"


def write(timeline: SaleTimeline, kind: str, folder: Path = REPORTS) -> Path:
    """The page, as ``folder``/KIND-UTC time.html."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.html"
    path.write_text(render(timeline), encoding="utf-8")
    return path


def conclude(timeline: SaleTimeline, kind: str) -> int:
    """The text report's end (each check, held or broken), the page written and named, and the
    exit status: 1 if a check broke."""
    print("\nInvariants")
    for name, held in timeline.checks.items():
        print(f"  [{'held' if held else 'BROKEN'}] {name}")
    print(f"\nReport with charts: {write(timeline, kind)}")
    return 0 if all(timeline.checks.values()) else 1


CHARTS = {
    "rate": "Answers per second, by status",
    "latency": "Latency percentiles over time (ms)",
    "histogram": "Latency histogram (ms, log scale)",
    "sold": "Copies sold against the stock",
    "convergence": "Reserved in Redis against issued in PostgreSQL",
    "arrivals": "Arrivals around the sell-out: winners and losers, by when they arrived",
}

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 2em; color: #222; max-width: 1600px; }}
table {{ border-collapse: collapse; margin-bottom: 1em; }} th, td {{ text-align: left; padding: 2px 12px 2px 0; }}
.held {{ color: #17693a; }} .broken {{ color: #b00020; font-weight: bold; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 1.5em; }} figure {{ margin: 0; }}
figcaption {{ font-weight: 600; margin-bottom: .3em; }}
</style></head>
<body><h1>{title}</h1>
<table>{summary}</table>
<ul>{checks}</ul>
<div class="charts">{figures}</div>
</body></html>
"""
