"""A real browser on a page: headless Chromium (Debian's ``chromium`` package, which ``make
chromium`` installs), for the tests that check what a report's page draws.

``rendered_dom`` is the page's DOM once its scripts have run (``--dump-dom``), ``screenshot``
a PNG of it. Both run without a sandbox (this runs as root in CI) or a GPU, and with the
browser's background networking off: the page must draw with no network. ``served_dom`` is
the DOM of a page served over HTTP whose scripts call servers (the shop page and the API) once
they are done, its timers run on virtual time (a wait of a second costs none).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars")  # fmt: skip
TIMEOUT_S = 60


def chromium() -> str:
    """The browser's executable; a clear error when it is missing."""
    for name in ("chromium", "chromium-browser"):
        if found := shutil.which(name):
            return found
    raise FileNotFoundError("no Chromium on PATH: make chromium installs Debian's (apt-get install chromium)")


def rendered_dom(page: Path) -> str:
    done = subprocess.run([chromium(), *FLAGS, "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=True)  # fmt: skip
    return done.stdout


def screenshot(page: Path, png: Path, width: int = 1500, height: int = 1400) -> Path:
    subprocess.run([chromium(), *FLAGS, f"--window-size={width},{height}", f"--screenshot={png.resolve()}",
                    page.resolve().as_uri()], capture_output=True, timeout=TIMEOUT_S, check=True)  # fmt: skip
    return png


def served_dom(url: str, virtual_time_ms: int = 120_000) -> str:
    """The DOM of the page at ``url`` once its scripts, their requests and ``virtual_time_ms`` of
    their timers have run (Chromium's ``--virtual-time-budget``: timers fast-forwarded, a pending
    request waited for)."""
    done = subprocess.run([chromium(), *FLAGS, f"--virtual-time-budget={virtual_time_ms}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=TIMEOUT_S * 3, check=True)  # fmt: skip
    return done.stdout
