"""The reference browser client's own tests (``web/test``), run by Node's test runner: the retry
contract against a scripted fetch. The shop page runs it in Chromium against the local stack
(``tests/integration/test_shop_page.py``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "web"


def test_the_reference_client_keeps_the_retry_contract():
    node = shutil.which("node")
    assert node, "Node.js is needed (the CDK needs it too)"
    done = subprocess.run([node, "--test", "test/"], cwd=WEB, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout
