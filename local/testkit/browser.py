"""A real browser on a page: headless Chromium (Debian's ``chromium`` package, which ``make
chromium`` installs), for the tests that check what a report's page draws.

``rendered_dom`` is the page's DOM once its scripts have run (``--dump-dom``), ``screenshot``
a PNG of it. Both run without a sandbox (this runs as root in CI) or a GPU, and with the
browser's background networking off: the page must draw with no network. ``served_dom`` is
the DOM of a page served over HTTP whose scripts call servers (the shop page and the API) once
they are done, its timers run on virtual time (a wait of a second costs none); ``live_dom`` the
DOM once a condition holds, in real time (a countdown to a server's moment).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

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


def served_dom(url: str, virtual_time_ms: int = 30_000) -> str:
    """The DOM of the page at ``url`` once its scripts, their requests and ``virtual_time_ms`` of
    their timers have run (Chromium's ``--virtual-time-budget``: timers fast-forwarded, a pending
    request waited for)."""
    done = subprocess.run([chromium(), *FLAGS, f"--virtual-time-budget={virtual_time_ms}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=TIMEOUT_S * 3, check=True)  # fmt: skip
    return done.stdout


class _DevTools:
    """Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: it reads
    NUL-separated JSON messages on fd 3 and writes its own on fd 4), in real time."""

    def __init__(self) -> None:
        to_chromium, self._out_fd = os.pipe()
        self._in_fd, from_chromium = os.pipe()

        def wire() -> None:  # in the child, before exec: its fds 3 and 4 are the pipes' ends
            os.dup2(to_chromium, 3)
            os.dup2(from_chromium, 4)

        command = [chromium(), *FLAGS, "--remote-debugging-pipe", "about:blank"]
        # fds 3 and 4 kept: made by wire(), after which the child closes every fd not listed
        self._process = subprocess.Popen(command, pass_fds=(3, 4), preexec_fn=wire,  # noqa: PLW1509
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        os.close(to_chromium)
        os.close(from_chromium)
        self._buffer = b""
        self._sent = 0

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._sent += 1
        message: dict[str, Any] = {"id": self._sent, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._out_fd, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._in_fd, 65536)
                if not chunk:
                    raise RuntimeError(f"Chromium closed its pipe answering {method}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply: dict[str, Any] = json.loads(raw)
            if reply.get("id") == self._sent:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply["result"])

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self.call("Browser.close")
        os.close(self._out_fd)
        os.close(self._in_fd)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)


def live_dom(url: str, ready: str, timeout_s: float = TIMEOUT_S) -> str:
    """The DOM of the page at ``url`` once the JavaScript expression ``ready`` is true, its timers
    on real time (a page's clock is the host's, as a shopper's is: what ``served_dom``'s virtual
    time cannot give a countdown)."""
    browser = _DevTools()
    try:
        target = browser.call("Target.createTarget", {"url": url})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

        def evaluate(expression: str) -> Any:
            found = browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
            return found["result"].get("value")

        deadline = time.monotonic() + timeout_s
        while not evaluate(f"Boolean({ready})"):
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{ready} not true in {timeout_s} s: {str(evaluate('document.body.innerText'))[-2000:]}"
                )
            time.sleep(0.2)
        return str(evaluate("document.documentElement.outerHTML"))
    finally:
        browser.close()
