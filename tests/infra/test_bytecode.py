"""The Lambda packages carry bytecode their runtime accepts (Lambda cannot write its own).

The bundlers run for real here (the stacks of the other infra tests skip bundling); a Python of
the runtime's version checks each ``.pyc`` the way its import system does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import DockerImage

from coupon_cdk import bytecode
from coupon_cdk.bytecode import CompiledCopy, runtime_python
from coupon_cdk.code import PYTHON_VERSION, ROOT

# Run by the runtime's interpreter: for every source file, what its .pyc says of itself.
CHECK = """
import importlib.util, json, pathlib, sys
report = {}
for source in pathlib.Path(sys.argv[1]).rglob("*.py"):
    cached = pathlib.Path(importlib.util.cache_from_source(str(source)))
    if not cached.exists():
        report[str(source)] = "no bytecode"
        continue
    data = cached.read_bytes()
    flags = int.from_bytes(data[4:8], "little")
    if data[:4] != importlib.util.MAGIC_NUMBER:
        report[str(source)] = "written by another Python version"
    elif flags != 0b11:
        report[str(source)] = f"not hash-checked (flags {flags})"
    elif data[8:16] != importlib.util.source_hash(source.read_bytes()):
        report[str(source)] = "stale"
print(json.dumps(report))
"""
NO_IMAGE = DockerImage.from_registry("none:never-pulled")


def _problems(python: str, tree: Path) -> dict[str, str]:
    done = subprocess.run([python, "-c", CHECK, str(tree)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize(("source", "target"), [(ROOT / "functions", "functions"), (ROOT / "layers/coupon_core", ".")])
def test_the_packages_carry_hash_checked_bytecode_of_the_runtimes_version(source, target, tmp_path):
    # A checkout's own bytecode (what its imports wrote, timestamp-checked) must not travel along.
    checkout = tmp_path / "checkout"
    shutil.copytree(source, checkout, ignore=shutil.ignore_patterns("__pycache__"))
    stray = checkout / "__pycache__" / f"stray.{sys.implementation.cache_tag}.pyc"
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"not bytecode")
    bundle = tmp_path / "bundle"
    assert CompiledCopy(checkout, target, PYTHON_VERSION).try_bundle(str(bundle), image=NO_IMAGE)

    sources = sorted(p.relative_to(bundle / target) for p in bundle.rglob("*.py"))
    assert sources == sorted(p.relative_to(source) for p in source.rglob("*.py"))
    assert _problems(runtime_python(PYTHON_VERSION), bundle) == {}
    assert len(list(bundle.rglob("*.pyc"))) == len(sources)  # one each: nothing of the checkout's own


def test_the_lua_scripts_travel_with_their_layer(tmp_path):
    source = ROOT / "layers/lua_redis"
    assert CompiledCopy(source, ".", PYTHON_VERSION).try_bundle(str(tmp_path), image=NO_IMAGE)

    lua = sorted(p.relative_to(source) for p in source.rglob("*.lua"))
    assert lua
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.lua")) == lua


def test_on_localstack_the_bytecode_is_the_hosts(tmp_path):
    """LocalStack runs the functions on the project's interpreter, not the runtime's."""
    assert CompiledCopy(ROOT / "functions", "functions", None).try_bundle(str(tmp_path), image=NO_IMAGE)

    assert _problems(sys.executable, tmp_path) == {}


def test_without_an_interpreter_of_the_runtimes_version_the_build_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv(bytecode.LAMBDA_PYTHON, sys.executable)  # runs, but is not the runtime's version

    with pytest.raises(RuntimeError, match=r"Python 3\.99 interpreter .* LAMBDA_PYTHON"):
        runtime_python("3.99")


def test_lambda_python_names_the_interpreter(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    monkeypatch.setenv(bytecode.LAMBDA_PYTHON, sys.executable)

    assert runtime_python(version) == sys.executable
