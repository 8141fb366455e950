"""The demo's report, as a person opens it: a small demo on the live stack, then its page in a
real browser (headless Chromium), whose scripts must have drawn every chart with data."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from local.testkit.browser import rendered_dom, screenshot
from local.tools import demo
from local.tools.sale_report import CHARTS


def test_the_demo_writes_a_report_whose_charts_draw_with_data_in_a_browser(live, tmp_path):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = demo.run(demo.parse_args(["--quantity", "20", "--users", "100", "--clients", "4"]),
                          live.env, demo.Phases())  # fmt: skip
    text = printed.getvalue()
    assert status == 0, text
    (page,) = re.findall(r"Report with charts: (\S+\.html)", text)
    dom = rendered_dom(Path(page))
    drawn = dict(re.findall(r'<svg class="chart" id="(\w+)"[^>]*data-points="(\d+)"', dom))
    assert set(drawn) == set(CHARTS), drawn
    assert all(int(points) > 0 for points in drawn.values()), drawn
    assert dom.count("<path") >= 4  # the lines
    assert "<rect" in dom  # the histogram's bars
    assert "[held] I1" in dom
    assert "BROKEN" not in dom
    screenshot(Path(page), Path(page).with_suffix(".png"))  # beside the page, to look at
