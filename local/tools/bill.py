"""What each environment of cdk.json costs a month at idle: ``make bill``.

    python -m local.tools.bill            # print the table
    python -m local.tools.bill --write    # and put it in docs/deploy.md, "What it costs"

Synthesizes every AWS environment offline (as the infra tests do: no credentials, bundling
skipped), prices each template's always-on resources (local/planner/bill.py, with the prices and
their pages in local/planner/prices.py), and prints the environments side by side. Exits 2 when a
template holds a resource the bill cannot price.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from app import synthesize_offline

from coupon_cdk.config import CONTEXT_KEY, cdk_json_context
from local.planner.bill import Line, idle_bill, markdown
from local.planner.prices import UnpricedError

ROOT = Path(__file__).resolve().parents[2]
DEPLOY_MD = ROOT / "docs" / "deploy.md"
START, END = "<!-- bill: make bill writes this table -->", "<!-- bill end -->"


def aws_environments() -> list[str]:
    """cdk.json's environments that deploy to AWS (``local`` runs on this machine)."""
    environments = cdk_json_context()[CONTEXT_KEY]
    return [name for name, values in environments.items() if "local" not in values]


def bills() -> dict[str, list[Line]]:
    found = {}
    for env in aws_environments():
        with tempfile.TemporaryDirectory(prefix=f"bill-{env}-") as outdir:
            _, template = synthesize_offline(env, outdir)
        found[env] = idle_bill(template)
    return found


def with_table(document: str, table: str) -> str:
    """``document`` with the text between the bill's markers replaced by ``table``."""
    head, start, rest = document.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"docs/deploy.md has no {START} ... {END}")
    return f"{head}{START}\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="put the table in docs/deploy.md")
    args = parser.parse_args(argv)
    try:
        table = markdown(bills())
    except UnpricedError as exc:
        print(f"make bill: {exc.args[0]}", file=sys.stderr)
        return 2
    print(table)
    if args.write:
        DEPLOY_MD.write_text(with_table(DEPLOY_MD.read_text(), table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
