"""Many short Python programs run as children forked from one interpreter that has imported the
libraries they share: N programs cost one import of boto3, SQLAlchemy, redis-py and the rest, not
N (about 2 s of CPU each here). A child starts from the parent's state, so a program that must
see a module imported fresh (Powertools reading its variables) leaves it out of ``shared``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# What the functions, the coupons command and the tools share, and cost most to import.
LIBRARIES = ("boto3", "botocore.session", "sqlalchemy.orm", "redis.asyncio", "kafka", "pydantic")
_PARENT = """
import importlib, json, os, sys, traceback
for name in filter(None, sys.argv[1].split(",")):
    importlib.import_module(name)
children = []
for program in json.loads(sys.stdin.read()):
    read, write = os.pipe()
    if pid := os.fork():
        os.close(write)
        children.append((pid, read))
        continue
    os.close(read)
    os.dup2(write, 1)
    os.dup2(write, 2)
    code = 0
    try:
        exec(compile(program, "<forked>", "exec"), {"__name__": "__forked__"})
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
results = []
for pid, read in children:
    with os.fdopen(read, errors="replace") as out:
        output = out.read()
    results.append({"code": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), "output": output})
print(json.dumps(results))
"""


@dataclass(frozen=True)
class Ran:
    """One program's exit code and what it wrote to stdout and stderr, interleaved."""

    code: int
    output: str


def run_forked(programs: Sequence[str], *, shared: Sequence[str], env: Mapping[str, str], cwd: Path) -> list[Ran]:
    """Each of ``programs`` (Python source) in a child forked after ``shared`` was imported, all at
    once; their results in order."""
    done = subprocess.run(
        [sys.executable, "-c", _PARENT, ",".join(shared)], input=json.dumps(list(programs)),
        capture_output=True, text=True, env=dict(env), cwd=cwd, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [Ran(**result) for result in json.loads(done.stdout.splitlines()[-1])]


def environment_without(prefixes: Sequence[str]) -> dict[str, str]:
    """This process's environment without the variables that start with one of ``prefixes``."""
    return {key: value for key, value in os.environ.items() if not key.startswith(tuple(prefixes))}
