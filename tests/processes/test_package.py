"""``coupon_client`` is built and installed alone (``uv tool install .``): it imports nothing of the
repository but itself, and nothing outside the standard library but its declared dependencies."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from coupon_cdk.locked import uv
from coupon_client.cli import app

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "coupon_client"
DEPENDENCY_MODULES = {"typer": {"typer"}, "rich": {"rich"}, "boto3": {"boto3", "botocore"}, "urllib3": {"urllib3"}}


def _imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_package_imports_only_itself_the_standard_library_and_its_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {requirement.split(">")[0].split("=")[0].split("<")[0] for requirement in project["dependencies"]}
    allowed = {"coupon_client"} | set(sys.stdlib_module_names) | set().union(*map(DEPENDENCY_MODULES.get, declared))
    imported = set().union(*(_imported(path) for path in PACKAGE.glob("*.py")))
    assert imported - {"__future__"} <= allowed, imported - allowed


def test_the_console_script_is_the_command():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"coupons": "coupon_client.cli:app"}
    assert app.info.name == "coupons"


def test_the_wheel_holds_the_package_alone_and_the_command(tmp_path):
    """What ``uv tool install .`` or ``pipx install .`` installs: coupon_client and its console script."""
    subprocess.run([uv(), "build", "--wheel", "--quiet", "--offline", "--python", sys.executable, "--out-dir",
                    str(tmp_path), str(ROOT)], check=True)  # fmt: skip
    (wheel,) = tmp_path.glob("coupon_system-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = next(archive.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    code = {name for name in names if not name.startswith("coupon_system-") and not name.endswith("/")}
    assert code == {f"coupon_client/{path.name}" for path in PACKAGE.glob("*.py")}
    assert "coupons = coupon_client.cli:app" in entry_points
