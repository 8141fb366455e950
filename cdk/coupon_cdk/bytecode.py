"""Python bytecode compiled into the Lambda packages, for the interpreter that will run them.

Lambda's file system is read-only outside ``/tmp``, so Python cannot cache the bytecode of what it
imports: a package without it compiles every module it imports on every cold start. Compiled
here instead, once per build, by an interpreter of the runtime's version (``python3.12`` for the
``python3.12`` runtime: a ``.pyc`` is read only by the version that wrote it). The files are
hash-checked (``checked-hash``), not timestamped: the asset zip does not keep the files'
modification times, which would make every timestamped ``.pyc`` stale.

Sources: AWS's *Security Overview of AWS Lambda* ("Lambda isolation technologies": an
execution environment holds the function's code, its layers and "a writeable /tmp directory");
the CDK CLI's ``zipDirectory`` sets every entry's time to one fixed epoch so that equal content
hashes equally.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsii
from aws_cdk import DockerImage, ILocalBundling

LAMBDA_PYTHON = "LAMBDA_PYTHON"  # names the interpreter explicitly, when it is not on PATH
INVALIDATION_MODE = "checked-hash"


def _version_of(python: str) -> str | None:
    """``"3.12"`` for a Python 3.12 interpreter; None if ``python`` does not run."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def runtime_python(version: str) -> str:
    """An interpreter of ``version`` (``"3.12"``): LAMBDA_PYTHON, ``python3.12`` on PATH, or pyenv's."""
    pyenv_root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = [
        os.environ.get(LAMBDA_PYTHON, ""),
        f"python{version}",
        *sorted(glob.glob(f"{pyenv_root}/versions/{version}.*/bin/python{version}"), reverse=True),
    ]
    for candidate in filter(None, candidates):
        if _version_of(candidate) == version:
            return candidate
    raise RuntimeError(
        f"the Lambda runtime is Python {version}, and its bytecode needs a Python {version} interpreter to "
        f"compile it: install one (apt-get install python{version}, pyenv install {version}) or name it in "
        f"{LAMBDA_PYTHON}"
    )


def compile_tree(directory: Path, python: str, shown_as: str | None = None) -> None:
    """Compile every module under ``directory`` with ``python``, hash-checked; ``shown_as`` is
    where Lambda finds the directory (``/opt/python``), the path tracebacks show. It also keeps
    the bytecode free of the build's own folder, so that the same sources compile to the same
    bytes wherever they are built.

    One process, in compileall's own (sorted) order: a ``.pyc``'s bytes depend on what the same
    process compiled before it (marshal flags an object it may meet again by its reference
    count: CPython's "Bytecode compilation output depends on order of files compiled"). redis-py's
    cluster module compiles to other bytes after its commands' core module than after its client
    module, so files dealt out to a pool of workers as each comes free compiled differently from
    one build to the next. One process costs about a second a layer here."""
    shown = ["-d", shown_as] if shown_as else []
    command = [python, "-m", "compileall", "-q", "-j", "1", "--invalidation-mode", INVALIDATION_MODE, *shown,
               str(directory)]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


@jsii.implements(ILocalBundling)
class CompiledCopy:
    """Copies ``source`` to ``<output>/<target>`` without any cached bytecode, then compiles it.

    ``version`` is the Python that will run the code: the Lambda runtime's on AWS, or None for
    this host's own (LocalStack runs the functions on the project's interpreter).
    """

    def __init__(self, source: Path, target: str, version: str | None) -> None:
        self._source, self._target, self._version = source, target, version

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        destination = Path(output_dir) / self._target
        shutil.copytree(
            self._source, destination, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        compile_tree(destination, sys.executable if self._version is None else runtime_python(self._version))
        return True
