"""make rehearse on the local stack, as a user runs it: a small sale driven by locust through the
API, audited from outside; every invariant held, and its report written. In a process of its
own: locust's gevent patches the whole interpreter it runs in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.sale
def test_a_small_rehearsal_on_the_local_stack_holds_every_invariant_from_outside(live):
    command = [sys.executable, "-m", "local.tools.rehearse", "--target", "local", "--users", "60", "--copies", "20",
               "--late-seconds", "2", "--max-seconds", "120"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    verdicts = re.findall(r"^  \[(held|BROKEN)\] (I\d|the pipeline|every click)", done.stdout, flags=re.MULTILINE)
    assert [held for held, _ in verdicts] == ["held"] * 7, done.stdout
    assert "/coupon-issues SUCCESS" in done.stdout  # locust's statistics, per answer
    assert re.search(r"^answers: DUPLICATE 20, SOLD_OUT 80, SUCCESS 20$", done.stdout, flags=re.MULTILINE)
    (page,) = re.findall(r"^Report with charts: (\S+\.html)$", done.stdout, flags=re.MULTILINE)
    assert Path(page).is_file()
    assert re.search(r"^inversion window: \d", done.stdout, flags=re.MULTILINE)
    # measured from the intake's lines in the local stack's log group
    assert re.search(r"^arrival to decision, SUCCESS: min -?\d", done.stdout, flags=re.MULTILINE), done.stdout
