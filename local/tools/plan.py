"""Will a sale fit an environment? ``make plan ENV=prod SALE="copies=5000 users=300000 peak=20000/s"``

    python -m local.tools.plan --env prod --sale "copies=5000 users=300000 peak=20000/s opens=2026-12-24T12:00Z"
    python -m local.tools.plan --env prod --sale "..." --quotas "api_rps=20000 lambda_concurrency=3000"

Reads the environment from cdk.json, and prints every AWS limit the sale meets (its value and
source, the sale's demand on it, the headroom), the one that binds first and what to do about
it, the provisioned-concurrency warm-up to schedule, how long the database takes to persist
the winners, and one coupon's slot second by second with the intake's memory of refusals and
without it. ``--quotas`` gives the quotas your account has had raised (local/planner/quotas.py
lists them). Exits 1 when the sale does not fit, 2 on a malformed sale, quota or environment.
"""

from __future__ import annotations

import argparse
import sys

from coupon_cdk.config import CONTEXT_KEY, CdkContextError, cdk_json_context, load
from local.planner.quotas import QuotaError, with_raised
from local.planner.sale_plan import Plan, PlannedSale, SaleError, plan, warmup_snippet


def report(env: str, sale: PlannedSale, result: Plan) -> str:
    """The plan as text: a Markdown table of the limits, then what binds and what to do."""
    lines = [
        f"A sale of {sale.copies:,} copies to {sale.users:,} users on {env}, "
        f"{sale.peak_rps:,} requests/s at the opening",
        f"The intake keeps about {result.concurrency:,} environments busy at the peak.",
        "",
        "| limit | value | the sale's demand | headroom | source |",
        "|---|---:|---:|---:|---|",
    ]
    for limit in sorted(result.limits, key=lambda limit: limit.headroom):
        headroom = "-" if limit.demand <= 0 else f"{limit.headroom:.2f}"
        lines.append(
            f"| {limit.name} | {limit.value:,.0f} {limit.unit} | {limit.demand:,.0f} | {headroom} | {limit.source} |"
        )
    binding = result.binding
    lines.append("")
    if result.fits:
        lines.append(f"The sale fits. The tightest limit: {binding.name} (headroom {binding.headroom:.2f}).")
    else:
        lines.append(f"Binds first: {binding.name} (headroom {binding.headroom:.2f}).")
        lines.append("To do, every limit below 1:")
        lines.extend(f"- {limit.name}: {limit.action}" for limit in result.limits if limit.headroom < 1)
    if result.warmup:
        lines.append(
            f"Warm-up: {result.warmup:,} provisioned environments (concurrency.warmup.provisioned), starting at "
            f"least {result.warmup_lead_min} minutes before the opening (Lambda prepares them, then their INITs "
            "connect to the brokers at the broker's connection rate)."
        )
        if snippet := warmup_snippet(result, sale):
            lines.append(f"  cdk.json, concurrency: {snippet}")
    lines.append(f"Database: the workers persist the winners in about {result.drain_s:,.1f} s (processingLimit).")
    lines += [
        "",
        "One coupon's slot, in ECPU/s (what ElastiCache Serverless bills; one slot takes 30,000), "
        f"{result.concurrency:,} containers remembering refusals for a second each:",
        "",
        "| second | without the memory | with it | of which its refreshes | of which filter reads |",
        "|---|---:|---:|---:|---:|",
    ]
    lines.extend(
        f"| {second.second} | {second.without_memory:,.0f} | {second.with_memory:,.0f} | "
        f"{second.refreshes:,.0f} | {second.filter_reads:,.0f} |"
        for second in result.slot
    )
    lines.append("")
    lines.extend(f"Note: {note}." for note in result.notes)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", required=True, help="an environment of cdk.json (dev, prod, ...)")
    parser.add_argument("--sale", required=True, help='"copies=5000 users=300000 peak=20000/s"')
    parser.add_argument("--quotas", default="", help='raised quotas, "api_rps=20000 lambda_concurrency=3000"')
    args = parser.parse_args(argv)
    try:
        context = cdk_json_context().get(CONTEXT_KEY)
        config = load(context, args.env, deploying=False)
        sale = PlannedSale.parse(args.sale)
        quotas = with_raised(dict(part.partition("=")[::2] for part in args.quotas.split()))
        result = plan(config, sale, quotas)
    except (CdkContextError, SaleError, QuotaError) as exc:
        print(f"make plan: {exc}", file=sys.stderr)
        return 2
    print(report(args.env, sale, result))
    return 0 if result.fits else 1


if __name__ == "__main__":
    sys.exit(main())
