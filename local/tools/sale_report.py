"""One self-contained HTML page with a sale's charts: the demo's, the chaos run's, the rehearsal's.

No network is needed to open it: the figures are a JSON document inside the page and a small
script in it draws them as SVG. Five charts: answers per second by status, latency percentiles
over time, a latency histogram, copies sold against the stock, and the reservations in Redis
against the issues in PostgreSQL converging after the sale. Each chart's ``<svg>`` says how
many points it drew (``data-points``), which is what the browser test reads.
"""

from __future__ import annotations

import html
import json
import math
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
    }  # fmt: skip


def _bucket_width(end_s: float) -> float:
    """A round width that puts at most BUCKETS buckets on the sale's duration."""
    for width in (0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300):
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


def render(timeline: SaleTimeline) -> str:
    data = json.dumps(charts(timeline)).replace("<", "\\u003c")  # nothing in it can end or open a tag
    summary = "".join(
        f"<tr><th>{html.escape(name)}</th><td>{html.escape(value)}</td></tr>" for name, value in timeline.summary
    )
    checks = "".join(
        f'<li class="{"held" if held else "broken"}">[{"held" if held else "BROKEN"}] {html.escape(name)}</li>'
        for name, held in timeline.checks.items()
    )
    figures = "".join(
        f"<figure><figcaption>{html.escape(caption)}</figcaption>"
        f'<svg class="chart" id="{name}" viewBox="0 0 700 300" role="img" aria-label="{html.escape(caption)}"></svg>'
        "</figure>"
        for name, caption in CHARTS.items()
    )
    title = html.escape(timeline.title)
    return _PAGE.format(title=title, summary=summary, checks=checks, figures=figures, data=data, script=_SCRIPT)


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
    "convergence": "Reserved in Redis against issued in PostgreSQL, after the sale",
}

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 2em; color: #222; max-width: 1500px; }}
table {{ border-collapse: collapse; margin-bottom: 1em; }} th, td {{ text-align: left; padding: 2px 12px 2px 0; }}
.held {{ color: #17693a; }} .broken {{ color: #b00020; font-weight: bold; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 1.5em; }} figure {{ margin: 0; }}
figcaption {{ font-weight: 600; margin-bottom: .3em; }}
svg.chart {{ width: 700px; height: 300px; background: #fafafa; border: 1px solid #ddd; }}
svg text {{ font-size: 11px; fill: #444; }}
</style></head>
<body><h1>{title}</h1>
<table>{summary}</table>
<ul>{checks}</ul>
<div class="charts">{figures}</div>
<script type="application/json" id="data">{data}</script>
<script>{script}</script>
</body></html>
"""

# Draws every chart from the JSON above: lines for series over time, bars for the histogram.
_SCRIPT = """
const NS = "http://www.w3.org/2000/svg", W = 700, H = 300, L = 56, R = 150, T = 26, B = 36;
const COLOURS = ["#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
const NAMED = {SUCCESS: "#2ca02c", SOLD_OUT: "#7f7f7f", DUPLICATE: "#ff7f0e", UNAVAILABLE: "#d62728",
               UNCONFIRMED: "#e377c2", p50: "#1f77b4", p95: "#ff7f0e", p99: "#d62728", sold: "#2ca02c",
               stock: "#7f7f7f", "reserved in Redis": "#d62728", "issued in PostgreSQL": "#1f77b4"};
const colour = (name, i) => NAMED[name] || COLOURS[i % COLOURS.length];
const data = JSON.parse(document.getElementById("data").textContent);
function el(name, attrs, parent) {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  parent.appendChild(node);
  return node;
}
function text(parent, x, y, value, anchor) {
  el("text", {x, y, "text-anchor": anchor || "start"}, parent).textContent = value;
}
function axes(svg, xMax, yMax, xLabel, yLabel, xTicks = true) {
  el("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#888"}, svg);
  el("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#888"}, svg);
  for (let i = 0; i <= 4; i++) {
    const y = H - B - (H - B - T) * i / 4;
    text(svg, L - 4, y + 4, (yMax * i / 4).toPrecision(3).replace(/\\.0+$/, ""), "end");
    const x = L + (W - R - L) * i / 4;
    if (xTicks) text(svg, x, H - B + 14, (xMax * i / 4).toPrecision(3).replace(/\\.0+$/, ""), "middle");
  }
  text(svg, (L + W - R) / 2, H - 6, xLabel, "middle");
  text(svg, 4, 12, yLabel);
}
function lines(svg, chart) {
  const xs = chart.x, names = Object.keys(chart.series);
  const values = names.flatMap(n => chart.series[n]).filter(v => v !== null);
  const xMax = Math.max(...xs, 1e-9), yMax = Math.max(...values, 1e-9) * 1.05;
  axes(svg, xMax, yMax, chart.xLabel, chart.yLabel);
  let points = 0;
  names.forEach((name, i) => {
    let d = "";
    chart.series[name].forEach((v, j) => {
      if (v === null) return;
      const x = L + (W - R - L) * xs[j] / xMax, y = H - B - (H - B - T) * v / yMax;
      d += (d ? " L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
      points++;
    });
    const dash = (chart.dashed || []).includes(name) ? {"stroke-dasharray": "7 4"} : {};
    if (d) el("path", {d, fill: "none", stroke: colour(name, i), "stroke-width": 2, ...dash}, svg);
    el("rect", {x: W - R + 10, y: T + i * 16, width: 10, height: 10, fill: colour(name, i)}, svg);
    text(svg, W - R + 24, T + i * 16 + 9, name);
  });
  return points;
}
function bars(svg, chart) {
  const counts = chart.counts, yMax = Math.max(...counts, 1) * 1.05;
  axes(svg, counts.length, yMax, "latency (ms)", "answers", false);
  const w = (W - R - L) / Math.max(counts.length, 1);
  counts.forEach((c, i) => {
    el("rect", {x: L + i * w + 1, y: H - B - (H - B - T) * c / yMax, width: Math.max(w - 2, 1),
                height: (H - B - T) * c / yMax, fill: COLOURS[0]}, svg);
  });
  [0, Math.floor(counts.length / 2), counts.length].forEach(i => {
    if (chart.edges[i] !== undefined) text(svg, L + i * w, H - B + 14, chart.edges[i] + " ms", "middle");
  });
  return counts.filter(c => c > 0).length;
}
for (const svg of document.querySelectorAll("svg.chart")) {
  const chart = data[svg.id];
  svg.setAttribute("data-points", svg.id === "histogram" ? bars(svg, chart) : lines(svg, chart));
}
"""
