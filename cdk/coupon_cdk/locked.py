"""Installs from the one lock, uv.lock: every Python dependency of every group, transitive ones
included, with the hash of every file.

``make venv`` syncs ``.venv`` from it (``uv sync --frozen``); the Lambda layer, LocalStack's and
checkov's environments install a dependency group of it through :func:`install`, which exports
the group's pins with their hashes and has uv refuse any file whose hash differs
(``--require-hashes``). uv itself comes from ``requirements-uv.txt``, pinned by hash, into a
virtual environment of its own, ``.local/uv`` (the Makefile). ``make lock`` writes the lock anew after a change
to ``pyproject.toml``; a test fails while the two disagree.

uv rather than pip-tools: one universal lock for every group and platform (Linux x86_64 for the
venv and LocalStack, Linux arm64 for Lambda), groups that conflict (checkov's and LocalStack's
older pins) resolved apart in the same file, and installs ten times faster than pip's
(docs/benchmarks.md, `make demo`).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "uv.lock"
UV = ROOT / ".local" / "uv" / "bin" / "uv"


def uv() -> str:
    """The uv command that ``make venv`` installs, pinned by hash."""
    if not UV.exists():
        raise FileNotFoundError(f"{UV} is missing: run make venv (it installs the pinned uv)")
    return str(UV)


def requirements(group: str) -> str:
    """The locked pins of ``group`` and of everything they pull in, each with its files' hashes,
    as a requirements file's text."""
    done = subprocess.run(
        [uv(), "export", "--frozen", "--only-group", group, "--format", "requirements.txt", "--no-header",
         "--no-emit-project", "--no-annotate", "--quiet"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


def fingerprint(group: str, *extra: str) -> str:
    """A hash of the group's locked files (and of ``extra``): what a cached install is checked against."""
    return hashlib.sha256("\n".join([requirements(group), *extra]).encode()).hexdigest()


def environment(group: str, venv: Path, base_python: str, *, editable: Path | None = None) -> Path:
    """A virtual environment of its own at ``venv``, made from ``base_python`` with the locked
    ``group`` (and ``editable``, our own code from this checkout: nothing downloaded, so nothing
    to hash); its python. Made once, and anew when the interpreter or the group's locked files
    change."""
    python, marker = venv / "bin" / "python", venv / ".installed"
    wanted = fingerprint(group, base_python)
    if marker.exists() and marker.read_text() == wanted and python.exists():
        return python
    subprocess.run([uv(), "venv", "--quiet", "--clear", "--python", base_python, str(venv)], check=True)
    install(group, python=str(python), compile_bytecode=True)  # each process imports them as it starts
    if editable is not None:
        subprocess.run(
            [uv(), "pip", "install", "--quiet", "--python", str(python), "--no-deps", "-e", str(editable)], check=True
        )
    marker.write_text(wanted)
    return python


def install(
    group: str,
    *,
    python: str | None = None,
    target: Path | None = None,
    platform: str | None = None,
    compile_bytecode: bool = False,
) -> None:
    """Install the locked ``group`` into the environment of ``python``, or into ``target`` for
    ``platform`` (a uv ``--python-platform``, Python 3.12; binary wheels only, as nothing can be
    built here for another platform); every file, a source archive's too, is checked against its
    locked hash, and a mismatch stops the install. ``compile_bytecode``: with its bytecode for
    ``python``, not left to the first import (a layer's is compiled for the runtime instead)."""
    listed = (target or ROOT / ".local") / f".{group}-requirements.txt"
    listed.parent.mkdir(parents=True, exist_ok=True)
    listed.write_text(requirements(group))
    where = ["--python", python] if python else ["--target", str(target)]
    platform_options = (
        ["--python-platform", platform, "--python-version", "3.12", "--only-binary", ":all:"] if platform else []
    )
    try:
        subprocess.run(
            [uv(), "pip", "install", "--quiet", "--require-hashes", "--no-deps", *where, *platform_options,
             *(["--compile-bytecode"] if compile_bytecode else []), "-r", str(listed)],
            cwd=ROOT, check=True,
        )  # fmt: skip
    finally:
        listed.unlink()
