"""``make`` builds the virtual environment with the Lambda runtime's Python, and says what to do
when the machine has none."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from coupon_cdk.code import PYTHON_VERSION

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml", "uv.lock", "requirements-uv.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _make(checkout: Path, *arguments: str, path: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": path, "HOME": str(checkout / "no-home")}  # no pyenv, no LAMBDA_PYTHON
    return subprocess.run(
        ["make", "--no-print-directory", *arguments],
        cwd=checkout, env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_without_a_python_3_12_make_says_so_and_what_to_do(checkout):
    done = _make(checkout, "venv", path="/usr/bin:/bin")  # the system's Python is another version

    assert done.returncode != 0
    assert "no Python 3.12 found" in done.stderr
    assert "make PYTHON=/path/to/python3.12" in done.stderr
    assert not (checkout / ".venv").exists()


def test_the_suite_lint_and_types_target_the_runtimes_python():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = tuple(int(part) for part in PYTHON_VERSION.split("."))

    assert sys.version_info[:2] == runtime  # this very run: make test builds .venv with it
    assert project["project"]["requires-python"] == f">={PYTHON_VERSION},<3.{runtime[1] + 1}"
    assert project["tool"]["mypy"]["python_version"] == PYTHON_VERSION
    assert project["tool"]["ruff"]["target-version"] == f"py{PYTHON_VERSION.replace('.', '')}"
