"""The report's figures: every answer counted once in each chart, and a page that nothing in the
data can break out of (the browser test draws it: tests/integration/test_demo_report.py)."""

from __future__ import annotations

import pytest

from coupon_client.fairness import Line
from local.tools.sale_report import CHARTS, Observation, SaleTimeline, charts, fairness_rows, render, series_drawn
from tests.unit.client.test_fairness import T

ANSWERS = [Observation(0.05 * i, "SUCCESS" if i < 30 else "SOLD_OUT", 10.0 + i) for i in range(200)]


def test_each_chart_counts_every_answer_once():
    figures = charts(SaleTimeline("t", 30, ANSWERS, [(11.0, 30, 12), (12.0, 30, 30)]))
    width = figures["rate"]["x"][1] - figures["rate"]["x"][0]
    answered = sum(rate * width for series in figures["rate"]["series"].values() for rate in series)
    assert answered == pytest.approx(len(ANSWERS))
    assert figures["sold"]["series"]["sold"][-1] == 30
    assert set(figures["sold"]["series"]["stock"]) == {30}
    assert sum(figures["histogram"]["counts"]) == len(ANSWERS)
    assert figures["convergence"]["series"] == {"reserved in Redis": [30, 30], "issued in PostgreSQL": [12, 30]}
    assert len(figures["rate"]["x"]) <= 60 + 1


def test_a_bucket_without_answers_has_no_latency_rather_than_zero():
    figures = charts(SaleTimeline("t", 1, [Observation(0.0, "SUCCESS", 5.0), Observation(10.0, "SOLD_OUT", 7.0)]))
    assert None in figures["latency"]["series"]["p50"]


def test_the_page_escapes_what_it_is_given():
    hostile = "</script><script>alert(1)</script>"
    page = render(SaleTimeline(hostile, 1, [Observation(0.1, hostile, 1.0)], summary=[(hostile, hostile)]))
    assert "<script" not in page  # the charts are drawn here: the page runs nothing
    assert all(f'<figure id="{name}">' in page for name in CHARTS)


def test_every_chart_shows_each_of_its_series_with_its_points():
    timeline = SaleTimeline("t", 30, ANSWERS, [(1.0, 20, 0), (5.0, 30, 12), (11.0, 30, 30)])
    shown, buckets = series_drawn(render(timeline)), len(charts(timeline)["rate"]["x"])
    assert buckets == 40  # the 10 s of the sale in quarter seconds
    assert shown["rate"] == {"SUCCESS": buckets, "SOLD_OUT": buckets}  # zero where none came, not a gap
    assert set(shown["latency"]) == {"p50", "p95", "p99"}
    assert all(points > 0 for points in shown["latency"].values())
    assert shown["sold"] == {"sold": buckets, "stock": buckets}
    assert shown["convergence"] == {"reserved in Redis": 3, "issued in PostgreSQL": 3}
    assert shown["histogram"]["latency"] > 24  # the outline of 24 bins


# Two copies, then a cancel puts one back and a late arrival takes it; a holder's second click.
STAGED = [
    Line(T + 100, T + 110, "SUCCESS", "first"),
    Line(T + 105, T + 115, "SUCCESS", "second"),
    Line(T + 120, T + 125, "SOLD_OUT", "l1"),
    Line(T + 130, T + 131, "SOLD_OUT", "l2"),
    Line(T + 150, T + 151, "DUPLICATE", "first-again"),
    Line(T + 400, T + 402, "SUCCESS", "late"),
    Line(T + 500, T + 500, "SOLD_OUT", "l3"),
]


def test_the_arrivals_chart_counts_winners_and_losers_by_arrival_around_the_sell_out():
    """Losers at +120 and +130 ms arrived before the late winner at +400; the chart shows both
    lines rising before it (a DUPLICATE is neither)."""
    timeline = SaleTimeline("t", 3, ANSWERS, lines=STAGED)
    arrivals = charts(timeline)["arrivals"]

    # +100 ms (the first arrival) to +500 (the last), in 10 ms: the sell-out's span (+120 to +400)
    # and as much again either side, clipped to the sale
    assert arrivals["x"] == [i / 100 for i in range(41)]
    assert arrivals["series"] == {
        "won (SUCCESS)": [2] * 30 + [3] * 11,  # +100, +105; the late winner at +400
        "lost (SOLD_OUT)": [0, 0, 1] + [2] * 37 + [3],  # +120 and +130 before it; +500 after
    }
    assert series_drawn(render(timeline))["arrivals"] == {"won (SUCCESS)": 41, "lost (SOLD_OUT)": 41}


def test_an_openings_burst_shows_a_loser_who_arrived_a_few_ms_before_a_winner():
    """An opening reorders requests by milliseconds: the chart's buckets go down to one."""
    outcomes = [(0, "SUCCESS"), (5, "SUCCESS"), (10, "SOLD_OUT"), (20, "SOLD_OUT"), (27, "SUCCESS"), (40, "SOLD_OUT")]
    burst = [Line(T + at, T + at, outcome, f"r{at}") for at, outcome in outcomes]
    arrivals = charts(SaleTimeline("t", 3, ANSWERS, lines=burst))["arrivals"]

    won, lost = arrivals["series"]["won (SUCCESS)"], arrivals["series"]["lost (SOLD_OUT)"]
    assert any(lost[i] > 0 and won[i] < 3 for i in range(len(won)))  # losers counted before the last winner
    assert (won[-1], lost[-1]) == (3, 3)


def test_the_report_says_the_sales_arrival_order_and_where_its_arrival_is_taken():
    rows = dict(fairness_rows(STAGED))
    assert rows["inversion window"] == "0 ms"  # the late winner took a copy put back after the losers' answers
    assert rows["late winners (a copy put back, taken later)"].startswith("1, ")
    assert rows["arrival"].startswith("when API Gateway received")
    assert "arrival to decision, SUCCESS" in rows


def test_a_sale_whose_lines_cannot_be_read_says_it_was_not_measured():
    assert fairness_rows([], " in /aws/lambda/intake") == [
        ("arrival order", "not measured: no line of the intake's in /aws/lambda/intake")
    ]


def test_a_sale_without_arrivals_draws_an_empty_arrivals_chart():
    assert charts(SaleTimeline("t", 1, ANSWERS))["arrivals"]["series"] == {}
