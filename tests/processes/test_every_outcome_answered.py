"""One outcome type from Lua to HTTP: an ``IssueOutcome`` member without an answer in the one
table of refusals fails the import of the intake (``answers.answered``), never a request. Shown
on a copy of the code with one member added."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUTCOMES = Path("layers/coupon_core/python/coupon_core/domain/reservations.py")
NEW = '    REFUNDED = "REFUNDED"  # an outcome added without its answer\n'


@pytest.fixture(scope="module")
def with_a_new_outcome(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("code")
    for part in ("functions", "layers"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    outcomes = copy / OUTCOMES
    text = outcomes.read_text()
    anchor = '    CLOSED = "CLOSED"'
    assert anchor in text
    outcomes.write_text(text.replace(anchor, NEW + anchor, 1))
    return copy


def _python_path(root: Path) -> str:
    return os.pathsep.join(str(root / p) for p in (".", "layers/lua_redis/python", "layers/coupon_core/python"))


def test_the_code_as_it_is_imports_and_type_checks():
    done = subprocess.run([sys.executable, "-c", "import functions.intake.app"], capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": _python_path(ROOT)}, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_an_unanswered_outcome_fails_the_intakes_import(with_a_new_outcome):
    done = subprocess.run([sys.executable, "-c", "import functions.intake.app"], capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": _python_path(with_a_new_outcome)}, check=False)  # fmt: skip
    assert done.returncode != 0
    assert "ImportError: IssueOutcome REFUNDED: no answer in functions/http_api/answers.py" in done.stderr
