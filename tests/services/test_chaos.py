"""``make chaos`` at a small size: a flash sale under random faults ends with I1-I5 held.

In a process of its own (it wires the functions through its environment, as Lambda would), with
a fixed seed so that a failure can be replayed with ``make chaos CHAOS_ARGS="... --seed N"``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def test_a_small_flash_sale_under_random_faults_keeps_every_invariant():
    command = [sys.executable, "-m", "local.tools.chaos", "--users", "40", "--quantity", "15", "--seed", "11"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for name in ("REDIS_URL", "DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS"):  # its own servers, behind fault proxies
        env.pop(name, None)
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False)
    report = "\n".join(line for line in done.stdout.splitlines() if not line.startswith('{"_aws"'))
    assert done.returncode == 0, report + done.stderr[-3000:]
    verdicts = re.findall(r"^  \[(held|BROKEN)\] I\d", report, flags=re.MULTILINE)
    assert verdicts == ["held"] * 5, report
    assert "faults injected" in report
    (page,) = re.findall(r"^Report with charts: (\S+\.html)$", report, flags=re.MULTILINE)
    shown = Path(page).read_text()
    assert "inversion window" in shown
    # each click's decision found in the intake's printed lines, by API Gateway's request id; which
    # outcomes there are depends on when the faults land (after each flush the coupon answers 503
    # while its lost state waits out the produces under way, rebuild_gate.lua: on a loaded
    # machine a run can end with no SUCCESS at all)
    assert re.search(r"arrival to decision, [A-Z_]+</th><td>min -?\d", shown), "no line of the intake read"
