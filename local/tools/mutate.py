"""``make mutate``: mutation testing of the clients' decisions, each held to 85 % of its mutants
killed (a timeout counts as killed: the mutant made a loop endless, and the run caught it).

- the browser client, ``web/coupon-client.js``, by Stryker under Node's test runner
  (``web/stryker.config.json``; its own threshold breaks the run);
- the Python client's retry module, ``coupon_client/retry.py``, by mutmut under its contract
  tests (``[tool.mutmut]`` in ``pyproject.toml``).

Not part of ``make test``: it takes minutes. Its scores and every surviving mutant, with why it
is equivalent, are in docs/benchmarks.md (Mutation testing).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
THRESHOLD = 0.85
STRYKER_REPORT = ROOT / ".local" / "mutation" / "coupon-client.json"


def stryker() -> tuple[int, int]:
    """Killed (timeouts included) and all mutants of the browser client."""
    subprocess.run([str(ROOT / "node_modules" / ".bin" / "stryker"), "run"], cwd=ROOT / "web", check=True)
    mutants = json.loads(STRYKER_REPORT.read_text())["files"]["coupon-client.js"]["mutants"]
    killed = sum(1 for mutant in mutants if mutant["status"] in ("Killed", "Timeout"))
    return killed, len(mutants)


def mutmut() -> tuple[int, int]:
    """Killed (timeouts included) and all mutants of the Python client's retry module."""
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    subprocess.run([mutmut, "run"], cwd=ROOT, check=True)
    subprocess.run([mutmut, "export-cicd-stats"], cwd=ROOT, check=True)
    stats = json.loads((ROOT / "mutants" / "mutmut-cicd-stats.json").read_text())
    return stats["killed"] + stats["timeout"], stats["total"]


def main() -> int:
    scores = {"web/coupon-client.js (Stryker)": stryker(), "coupon_client/retry.py (mutmut)": mutmut()}
    for name, (killed, total) in scores.items():
        print(f"{name}: {killed} of {total} mutants killed, {killed / total:.1%}")
    return 0 if all(killed / total >= THRESHOLD for killed, total in scores.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
