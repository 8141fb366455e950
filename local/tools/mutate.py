"""``make mutate``: mutation testing of the clients' decisions, each held to 85 % of its mutants
killed (a timeout counts as killed: the mutant made a loop endless, and the run caught it).

- the browser client, ``web/coupon-client.js``, by Stryker under Node's test runner
  (``web/stryker.config.json``; its own threshold breaks the run);
- the Python client's retry module, the fairness figures and the table of the API's refusals
  (``coupon_client/retry.py``, ``coupon_client/fairness.py``, ``functions/http_api/answers.py``),
  by mutmut under their unit tests (``[tool.mutmut]`` in ``pyproject.toml``);
- the domain's decisions in the layer (``LAYER_SOURCES``: the issue service, its answers and
  memory, the fenced release; the reconcile's and a build's), by mutmut under the domain's unit
  tests, in a workspace (``WORKSPACE``) whose ``src/`` holds the layers' packages: mutmut names
  a mutant by its file's path under ``.``, ``src`` or ``source``, which a layer's is not.

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
LAYERS = ("layers/lua_redis/python", "layers/coupon_core/python")  # as pyproject.toml's pythonpath lists them
LAYER_SOURCES = ("coupon_core/domain/issuing.py", "coupon_core/domain/reconcile.py")
LAYER_TESTS = ("tests/unit/domain",)
WORKSPACE = ROOT / ".local" / "mutation" / "layers"
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", ".local", "node_modules", "mutants", "cdk.out", "__pycache__", ".*_cache", ".hypothesis"
)


def mutmut(root: Path = ROOT) -> dict[str, tuple[int, int]]:
    """Killed (timeouts included) and all mutants of each Python module ``[tool.mutmut]`` names
    (``root``'s ``pyproject.toml``), from mutmut's record of each mutant (``mutants/<module>.meta``)."""
    shutil.rmtree(root / "mutants", ignore_errors=True)
    subprocess.run([str(Path(sys.executable).with_name("mutmut")), "run"], cwd=root, check=True)
    scores = {}
    for meta in sorted((root / "mutants").rglob("*.py.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"].values()
        name = f"{meta.relative_to(root / 'mutants').with_suffix('')} (mutmut)"
        scores[name] = (sum(1 for code in codes if code in KILLED), len(codes))
    return scores


def layer_workspace() -> Path:
    """The repository copied to ``WORKSPACE`` with the layers' packages in ``src/``, found there
    (mutmut puts its mutated ``src`` first on the path) and not from ``layers/``, and mutmut told
    to mutate ``LAYER_SOURCES`` under ``LAYER_TESTS``."""
    shutil.rmtree(WORKSPACE, ignore_errors=True)
    shutil.copytree(ROOT, WORKSPACE, ignore=NOT_COPIED)
    for layer in LAYERS:
        shutil.copytree(WORKSPACE / layer, WORKSPACE / "src", dirs_exist_ok=True)
    shutil.rmtree(WORKSPACE / "layers")
    project = (WORKSPACE / "pyproject.toml").read_text()
    layer_path = ", ".join(f'"{layer}"' for layer in LAYERS)
    shipped = f'pythonpath = [".", {layer_path}, "cdk"]'
    if shipped not in project:
        raise SystemExit("pyproject.toml's pythonpath changed: make local/tools/mutate.py's LAYERS say it again")
    project = project.replace(shipped, 'pythonpath = [".", "cdk"]')
    before, _, after = project.partition("[tool.mutmut]")
    rest = after.split("\n[", 1)
    project = before + "[tool.mutmut]\n" + "\n".join([
        f"source_paths = {json.dumps([f'src/{source}' for source in LAYER_SOURCES])}",
        f"pytest_add_cli_args_test_selection = {json.dumps(list(LAYER_TESTS))}",
        'also_copy = ["src", "tests", "local", "functions", "coupon_client", "cdk", "pyproject.toml"]',
    ]) + ("\n\n[" + rest[1] if len(rest) > 1 else "\n")  # fmt: skip
    (WORKSPACE / "pyproject.toml").write_text(project)
    return WORKSPACE


def main() -> int:
    scores = {"web/coupon-client.js (Stryker)": stryker(), **mutmut(), **mutmut(layer_workspace())}
    for name, (killed, total) in scores.items():
        print(f"{name}: {killed} of {total} mutants killed, {killed / total:.1%}")
    return 0 if all(killed / total >= THRESHOLD for killed, total in scores.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
