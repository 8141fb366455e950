"""Benchmark: how soon the ``coupons`` command answers (``python -m bench.command_start``).

Each alternative runs ``--runs`` times as a fresh process, round-robin so that the machine's
noise falls on all of them alike; prints the median and the 90th percentile wall time of each,
and its median against a bare interpreter's and against the AWS CLI's ``aws --version`` (the
localstack venv's, else the one on PATH). ``coupons --env local list`` runs only while the
local stack is up (``make up``): a call, signed, through LocalStack's CloudFormation and API.
``--before PATH`` adds the command of another checkout (``git worktree add PATH REV``) beside
this one's: the same help and usage error, from that commit's ``coupon_client``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COUPONS = str(Path(sys.executable).parent / "coupons")


def from_checkout(path: Path, *args: str) -> list[str]:
    """The command as ``path``'s commit has it, run by this venv's interpreter."""
    code = f"import sys; sys.path.insert(0, {str(path)!r}); sys.argv = ['coupons', *sys.argv[1:]]; "
    code += "from coupon_client.cli import app; app()"
    return [sys.executable, "-c", code, *args]


def alternatives(with_stack: bool, before: Path | None) -> dict[str, list[str]]:
    found = {
        "python -c pass (a bare interpreter)": [sys.executable, "-c", "pass"],
        "coupons --help": [COUPONS, "--help"],
        "coupons list --help": [COUPONS, "list", "--help"],
        "coupons top-up 1 -5 (a usage error)": [COUPONS, "top-up", "1", "-5"],
        "coupons --version": [COUPONS, "--version"],
        "import what a call loads (the session, Rich's table)": [
            sys.executable, "-c", "import coupon_client.session, rich.table",
        ],
    }  # fmt: skip
    if before is not None:
        found["before: coupons --help"] = from_checkout(before, "--help")
        found["before: coupons list --help"] = from_checkout(before, "list", "--help")
        found["before: coupons top-up 1 -5"] = from_checkout(before, "top-up", "1", "-5")
    aws = ROOT / ".local" / "localstack-venv" / "bin" / "aws"
    aws_cli = str(aws) if aws.exists() else shutil.which("aws")
    if aws_cli:
        found["aws --version"] = [aws_cli, "--version"]
    if with_stack:
        found["coupons --env local list (a call)"] = [COUPONS, "--env", "local", "list"]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", type=Path, help="a checkout of another commit, run beside this one")
    args = parser.parse_args()
    with_stack = (ROOT / ".local" / "stack.env").exists()
    commands = alternatives(with_stack, args.before)
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():
            started = time.perf_counter()
            subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
            seconds[name].append(time.perf_counter() - started)
    bare = statistics.median(seconds[next(iter(commands))])
    aws = statistics.median(seconds["aws --version"]) if "aws --version" in seconds else None
    print(f"{args.runs} runs each, round-robin; wall time of a fresh process")
    print(f"{'':56} {'median':>8} {'p90':>8} {'/bare':>7} {'/aws':>6}")
    for name, times in seconds.items():
        median, p90 = statistics.median(times), statistics.quantiles(times, n=10)[-1]
        against_aws = f"{median / aws:6.2f}" if aws else "     -"
        print(f"{name:56} {median * 1000:6.0f}ms {p90 * 1000:6.0f}ms {median / bare:7.1f} {against_aws}")
    if not with_stack:
        print("(coupons --env local list left out: the local stack is not up; make up, then run again)")


if __name__ == "__main__":
    main()
