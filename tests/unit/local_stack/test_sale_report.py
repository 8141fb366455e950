"""The report's figures: every answer counted once in each chart, and a page that nothing in the
data can break out of (the browser test draws it: tests/integration/test_demo_report.py)."""

from __future__ import annotations

import re

import pytest

from local.tools.sale_report import CHARTS, Observation, SaleTimeline, charts, render

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
    assert "<script>alert(1)" not in page
    assert len(re.findall(r"<script", page)) == 2  # the data and the drawing, nothing else
    assert all(f'id="{name}"' in page for name in CHARTS)
