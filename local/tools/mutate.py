"""``make mutate``: mutation testing of the clients' decisions, each held to 85 % of its mutants
killed (a timeout counts as killed: the mutant made a loop endless, and the run caught it).

- the browser client, ``web/coupon-client.js``, by Stryker under Node's test runner
  (``web/stryker.config.json``; its own threshold breaks the run);
- the Python client's retry module, the fairness figures and the table of the API's refusals
  (``coupon_client/retry.py``, ``coupon_client/fairness.py``, ``functions/http_api/answers.py``),
  by mutmut under their unit tests (``[tool.mutmut]`` in ``pyproject.toml``).

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


KILLED = {1, 3, 36, 24, -24, 152}  # mutmut's exit codes of a mutant its tests killed or timed out


def mutmut() -> dict[str, tuple[int, int]]:
    """Killed (timeouts included) and all mutants of each Python module ``[tool.mutmut]`` names,
    from mutmut's record of each mutant (``mutants/<module>.meta``)."""
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    subprocess.run([str(Path(sys.executable).with_name("mutmut")), "run"], cwd=ROOT, check=True)
    scores = {}
    for meta in sorted((ROOT / "mutants").rglob("*.py.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"].values()
        name = f"{meta.relative_to(ROOT / 'mutants').with_suffix('')} (mutmut)"
        scores[name] = (sum(1 for code in codes if code in KILLED), len(codes))
    return scores


def main() -> int:
    scores = {"web/coupon-client.js (Stryker)": stryker(), **mutmut()}
    for name, (killed, total) in scores.items():
        print(f"{name}: {killed} of {total} mutants killed, {killed / total:.1%}")
    return 0 if all(killed / total >= THRESHOLD for killed, total in scores.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
