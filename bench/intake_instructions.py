"""Instructions per answer, counted by Valgrind: ``python -m bench.intake_instructions``.

CPU time on this shared machine moves by tens of µs from run to run; the instructions a handler
executes do not. Each handler module (the bare handler, the intake, or any module with a
``handler`` given on the command line) runs in a fresh interpreter under Valgrind's cachegrind
(``--cache-sim=no``: instruction counts only), as Lambda loads it (its INIT), against embedded
servers started here: once answering 20 warm-up requests, once answering those and ``--requests``
SOLD_OUT requests more; the difference over ``--requests`` is one answer's instructions, the
import and the warm-up cancelled out (``PYTHONHASHSEED`` fixed, so that both runs hash alike).
User-space instructions only: a system call counts as the few instructions that make it, so a
poll of a socket costs more CPU than it adds here. Needs ``valgrind`` on the PATH
(``apt-get install valgrind``); a run takes about a minute a handler.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys
from contextlib import ExitStack

WARM_UP = 20
HANDLERS = ("bench.bare_intake", "functions.intake.app")


def _answer(module: str, coupon_id: int, requests: int, first_user: int) -> None:
    """In the counted interpreter: the handler's INIT, the warm-up, then ``requests`` answers."""
    os.environ["AWS_LAMBDA_INITIALIZATION_TYPE"] = "on-demand"
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the metrics lines, for the process's life
    from local.testkit.lambda_events import InProcessContext, api_event  # noqa: PLC0415

    handler, context = importlib.import_module(module).handler, InProcessContext()
    users = range(first_user, first_user + WARM_UP + requests)
    events = [api_event("POST", "/coupon-issues", {"couponId": coupon_id, "userId": user}) for user in users]
    for event in events:
        handler(event, context)


def _instructions(module: str, coupon_id: int, requests: int, first_user: int) -> int:
    command = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
        sys.executable, "-m", "bench.intake_instructions", "--answer", module, str(coupon_id), str(requests),
        str(first_user),
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"}
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    assert found, done.stderr[-2000:]
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", default=list(HANDLERS), help="handler modules to count")
    parser.add_argument("--requests", type=int, default=1_000)
    parser.add_argument("--answer", nargs=4, help=argparse.SUPPRESS)  # the counted interpreter's part
    args = parser.parse_args()
    if args.answer:
        module, coupon_id, requests, first_user = args.answer
        _answer(module, int(coupon_id), int(requests), int(first_user))
        return
    from bench.intake import create_coupon, emit, quiet_intake_servers  # noqa: PLC0415 - sets the environment

    with ExitStack() as stack:
        quiet_intake_servers(stack, "bench-instructions-")
        coupon_id = create_coupon(total=1)  # its warm-up takes the one copy: every answer is SOLD_OUT
        emit(f"\nSOLD_OUT, instructions per answer ({args.requests:,} answers, Valgrind)\n")
        emit("| handler | instructions/answer |\n|---|---:|")
        for number, module in enumerate(args.modules):
            first_user = 10**9 * (number + 1)
            base = _instructions(module, coupon_id, 0, first_user)
            loaded = _instructions(module, coupon_id, args.requests, first_user + 10**6)
            emit(f"| `{module}` | {(loaded - base) // args.requests:,} |")


if __name__ == "__main__":
    main()
