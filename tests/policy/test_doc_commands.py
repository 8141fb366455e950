"""Every command README.md and docs/*.md give runs as written in a checkout after ``make venv``:
each is run here in its dry form, with nothing on ``PYTHONPATH`` (the virtual environment knows
the import roots, as ``make venv`` writes them): a make target with ``make -n``, a module with
``--help``, the ``coupons`` command with ``--help``; the paths a pytest command names are checked
to be there (this run collects each of them: a second collection in a process of its own would
prove nothing more). A command of another tool (git, the AWS CLI, psql) is listed in
``OTHER_TOOLS`` with why it is not run.

The modules and the ``coupons`` command run in the virtual environment's interpreter, each in a
child forked from one that has imported the libraries they share (tests/forked.py), as
``runpy`` and the installed console script's entry point run them.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.forked import LIBRARIES, environment_without, run_forked
from tests.policy.documents import DOCUMENTS, ROOT, markdown_lines

BIN = Path(sys.executable).parent
INLINE = re.compile(r"`((?:make|python -m|\.venv/bin/python -m|coupons|\.venv/bin/pytest) [^`]*)`")
OTHER_TOOLS = {
    "git": "a checkout's own history (clone, worktree)",
    "cd": "the shell's",
    "aws": "the AWS CLI against a deployed account",
    "set": "the shell's",
    "psql": "a client of the local stack's database, once it is up",
    "openssl": "a client of the local stack's broker, once it is up",
    ".venv/bin/python": "a one-line program (-c), not a command of ours",
}
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|\|")  # <repository>, ..., make synth|diff
OURS = {"make", "python", ".venv/bin/python", "coupons", ".venv/bin/coupons", "pytest", ".venv/bin/pytest"}


def _commands() -> list[tuple[str, list[str]]]:
    """Each command the documents give, as (where, its words), comments and shell glue removed."""
    found: list[tuple[str, list[str]]] = []
    for document in DOCUMENTS:
        joined = ""
        for number, line, fenced in markdown_lines(document.read_text()):
            where = f"{document.relative_to(ROOT)}:{number}"
            if fenced:
                joined += line.removesuffix("\\")
                if line.endswith("\\"):
                    continue
                text, joined = joined, ""
                found += [(where, words) for words in _simple(text) if _is_command(words)]
            else:
                found += [(where, words) for span in INLINE.findall(line) for words in _simple(span)]
    return found


def _simple(text: str) -> list[list[str]]:
    """The simple commands of a shell line: split at ``&&`` and ``;``, comments dropped."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError:  # a diagram, not a command
        return []
    commands, current = [], []
    for word in [*words, ";"]:
        if word in ("&&", ";") or word.endswith(";"):
            current += [word.removesuffix(";")] if word.endswith(";") and word != ";" else []
            if current:
                commands.append(current)
            current = []
        else:
            current.append(word)
    return commands


def _is_command(words: list[str]) -> bool:
    """A line of a code block that is a command, not a diagram or a document."""
    program = _program(words)
    return bool(program) and (program[0] in OURS or program[0] in OTHER_TOOLS)


def _program(words: list[str]) -> list[str]:
    """The words from the program on: ``VAR=value`` assignments and ``time`` left out."""
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):  # VAR=value make demo
        words = words[1:]
    if words[:1] in (["time"], ["/usr/bin/time"]):
        words = [word for word in words[1:] if word != "-v"]
    return words


def _dry(words: list[str]) -> list[str] | None:
    """The command's dry form, or None for another tool's."""
    words = _program(words)
    program = words[0]
    if program == "make":
        return ["make", "-n", *words[1:]]
    if program in ("python", ".venv/bin/python") and words[1:2] == ["-m"]:
        return [str(BIN / "python"), *words[1:3], "--help"]
    if program in ("coupons", ".venv/bin/coupons"):
        return [str(BIN / "coupons"), *words[1:], "--help"]
    if program in ("pytest", ".venv/bin/pytest"):
        return [str(BIN / "pytest"), *words[1:]]
    return None


COMMANDS = [(where, words) for where, words in _commands() if not PLACEHOLDER.search(" ".join(words))]
DRY: dict[tuple[str, ...], list[str]] = {}  # each dry form once, with every place that gives it
for _where, _words in COMMANDS:
    if (_dry_form := _dry(_words)) is not None:
        DRY.setdefault(tuple(_dry_form), []).append(_where)


def test_the_documents_give_commands():
    programs = {words[0] for _, words in COMMANDS}
    assert {"make", "python", "coupons"} <= programs, programs


_SHARED = (*LIBRARIES, "typer")
_MODULE = "import runpy, sys\nsys.argv = {argv!r}\nrunpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
_COUPONS = (  # as its console script runs it: the working folder not on sys.path
    "import sys\nfrom importlib.metadata import entry_points\nsys.argv = {argv!r}\nsys.path.remove('')\n"
    "entry_points(group='console_scripts', name='coupons')['coupons'].load()()"
)


def _program(dry: tuple[str, ...]) -> str | None:
    """The dry form as a Python program, for one in the virtual environment's interpreter."""
    if dry[0] == str(BIN / "python"):  # python -m MODULE ... --help
        return _MODULE.format(argv=[dry[2], *dry[3:]], module=dry[2])
    if dry[0] == str(BIN / "coupons"):
        return _COUPONS.format(argv=["coupons", *dry[1:]])
    return None


def _failure(dry: tuple[str, ...], where: list[str], env: dict[str, str]) -> str | None:
    done = subprocess.run(list(dry), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    return None if done.returncode == 0 else f"{where}: {shlex.join(dry)}\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"


def test_each_command_runs_as_written():
    """The Python programs forked from one interpreter; make and pytest, each a process, as many
    at a time as the machine has cores."""
    env = environment_without(["PYTHONPATH"])
    programs = {dry: program for dry in DRY if (program := _program(dry)) is not None}
    ran = run_forked(list(programs.values()), shared=_SHARED, env=env, cwd=ROOT)
    failures = [f"{DRY[dry]}: {shlex.join(dry)}\n{run.output[-3000:]}"
                for dry, run in zip(programs, ran, strict=True) if run.code != 0]  # fmt: skip
    tests = [dry for dry in DRY if dry[0] == str(BIN / "pytest")]
    failures += [f"{DRY[dry]}: no tests at {path}" for dry in tests for path in _test_files(dry) if not path.exists()]
    others = [dry for dry in DRY if dry not in programs and dry not in tests]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures += [failure for failure in pool.map(lambda dry: _failure(dry, DRY[dry], env), others) if failure]
    assert not failures, "\n\n".join(failures)


def _test_files(dry: tuple[str, ...]) -> list[Path]:
    """The paths a pytest command names (a node id's file part): its words with a ``/``, so that
    an option's value (``-m sale``, ``-k name``) is not taken for one."""
    return [ROOT / word.split("::")[0] for word in dry[1:] if "/" in word and not word.startswith("-")]
