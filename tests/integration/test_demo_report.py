"""The demo's report, as a person opens it: a small demo on the live stack (in a process of its
own, as make demo runs it), then its page in a real browser (headless Chromium), in which every
chart shows each of its series, none empty."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from local.testkit.browser import rendered_dom, screenshot
from local.tools.sale_report import CHARTS, series_drawn


@pytest.mark.sale
def test_the_demo_writes_a_report_whose_charts_draw_with_data_in_a_browser(live):
    command = [sys.executable, "-m", "local.tools.demo", "--quantity", "20", "--users", "100", "--clients", "4"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (page,) = re.findall(r"^Report with charts: (\S+\.html)$", done.stdout, flags=re.MULTILINE)
    (trips,) = re.findall(r"Redis per request\s+(\d+\.\d{3}) round trips", done.stdout)
    assert 0 < float(trips) <= 1.1, "every request asks Redis at most once, the filter's reads aside"
    dom = rendered_dom(Path(page))
    shown = series_drawn(dom)
    assert set(shown) == set(CHARTS), shown
    assert {"SUCCESS", "SOLD_OUT", "DUPLICATE"} <= set(shown["rate"]), shown["rate"]
    assert set(shown["latency"]) == {"p50", "p95", "p99"}
    assert set(shown["sold"]) == {"sold", "stock"}
    assert set(shown["convergence"]) == {"reserved in Redis", "issued in PostgreSQL"}
    assert shown["histogram"]["latency"] > 0
    assert all(points > 0 for series in shown.values() for points in series.values()), shown
    assert min(shown["convergence"].values()) >= 3  # sampled during the sale, and after it
    assert set(shown["arrivals"]) == {"won (SUCCESS)", "lost (SOLD_OUT)"}
    assert re.search(r"arrival to decision, SOLD_OUT</th><td>min -?\d", dom), "no line of the intake's log group read"
    assert re.search(r"late winners \(a copy put back, taken later\)</th><td>[1-9]", dom), "the late users' give-backs"
    assert "opening, cold environments" in dom
    assert "opening, warmed environments" in dom
    assert "[held] I1" in dom
    assert "BROKEN" not in dom
    screenshot(Path(page), Path(page).with_suffix(".png"))  # beside the page, to look at
