"""The demo's report, as a person opens it: a small demo on the live stack (in a process of its
own, as make demo runs it), then its page in a real browser (headless Chromium), whose scripts
must have drawn every chart with data."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from local.testkit.browser import rendered_dom, screenshot
from local.tools.sale_report import CHARTS


def test_the_demo_writes_a_report_whose_charts_draw_with_data_in_a_browser(live):
    command = [sys.executable, "-m", "local.tools.demo", "--quantity", "20", "--users", "100", "--clients", "4"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (page,) = re.findall(r"^Report with charts: (\S+\.html)$", done.stdout, flags=re.MULTILINE)
    dom = rendered_dom(Path(page))
    drawn = dict(re.findall(r'<svg class="chart" id="(\w+)"[^>]*data-points="(\d+)"', dom))
    assert set(drawn) == set(CHARTS), drawn
    assert all(int(points) > 0 for points in drawn.values()), drawn
    assert dom.count("<path") >= 4  # the lines
    assert "<rect" in dom  # the histogram's bars
    assert "[held] I1" in dom
    assert "BROKEN" not in dom
    screenshot(Path(page), Path(page).with_suffix(".png"))  # beside the page, to look at
