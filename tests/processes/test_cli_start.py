"""The command answers at once where it calls nothing: ``--help``, every subcommand's help, a usage
error, ``--version`` and shell completion run in a fresh interpreter without importing boto3 or
botocore (the help, Click's plain text, not Rich either). A command that calls the API does import
them: the probe sees what it is meant to see. Completion answers for bash, zsh and fish.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version

import pytest

from coupon_client.cli import app

HEAVY = ("boto3", "botocore", "rich", "urllib3")
PROBE = """
import sys
from coupon_client.cli import app
sys.argv = ["coupons", *sys.argv[1:]]
try:
    app()
except SystemExit:
    pass
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(HEAVY))
print("LOADED=" + ",".join(heavy), file=sys.stderr)
"""
COMMANDS = sorted(command.name or "" for command in app.registered_commands)


def probe(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Runs the command in a fresh interpreter; its output, and which heavy libraries it loaded."""
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, check=False)  # fmt: skip
    loaded = next(line for line in done.stderr.splitlines() if line.startswith("LOADED="))
    return done, set(filter(None, loaded.removeprefix("LOADED=").split(",")))


@pytest.mark.parametrize(
    "args",
    [["--help"], ["top-up", "1", "-5"], ["--api-url", "notaurl", "list"], ["--version"], ["show"]]
    + [[command, "--help"] for command in COMMANDS],
    ids=" ".join,
)
def test_what_calls_nothing_imports_neither_boto3_nor_botocore(args):
    done, loaded = probe(*args)

    assert "Traceback" not in done.stderr
    assert loaded == set(), loaded


@pytest.mark.parametrize(
    ("shell", "env", "expected"),
    [
        ("bash", {"COMP_WORDS": "coupons to", "COMP_CWORD": "1"}, "top-up"),
        ("zsh", {"_TYPER_COMPLETE_ARGS": "coupons to"}, '"top-up":"Add copies'),
        ("fish", {"_TYPER_COMPLETE_ARGS": "coupons to", "_TYPER_COMPLETE_FISH_ACTION": "get-args"}, "top-up\tAdd"),
    ],
)
def test_completion_answers_each_shell_without_loading_aws(shell, env, expected):
    done, loaded = probe(env={"_COUPONS_COMPLETE": f"complete_{shell}", **env})

    assert expected in done.stdout
    assert not loaded & {"boto3", "botocore"}  # zsh's and fish's descriptions go through Typer's Rich helpers


def test_the_output_forms_complete():
    done, _ = probe(env={"_COUPONS_COMPLETE": "complete_bash", "COMP_WORDS": "coupons --output ", "COMP_CWORD": "2"})

    assert done.stdout.split() == ["json", "table", "text"]


def test_a_call_does_load_them(monkeypatch):
    """The probe's control: a command that calls something loads botocore to sign it (the closed
    port fails it after the signing, which is all this needs)."""
    done, loaded = probe("--api-url", "http://127.0.0.1:9/dev", "--region", "eu-west-1", "show", "7",
                         env={"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x"})  # fmt: skip

    assert "could not connect" in done.stderr
    assert {"botocore", "urllib3"} <= loaded


def test_version_names_the_package_and_python():
    done, _ = probe("--version")

    assert done.stdout.startswith(f"coupons {version('coupon-system')} Python/3.")


def test_each_option_shows_its_type_and_a_flag_none():
    done, _ = probe("list", "--help")

    assert "--limit N" in done.stdout
    assert "--all " in done.stdout
    assert "every page" in done.stdout
    assert "<bool>" not in done.stdout
