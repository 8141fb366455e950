"""Where a rehearsal may go and how big it may be: the checks ``make rehearse`` runs before it
calls anything (``rehearse.py`` drives the sale; this module imports no load tool, so that the
checks are tested in-process).

An AWS target needs ``--url`` naming the execute-api stage of that very environment in
``--region`` (the stack's ``ApiUrl`` output); the local target is make up's stack, which must be
running. Users, copies and time are bounded.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from coupon_client.api_client import ApiClient
from coupon_client.aws_auth import id_token, sigv4
from coupon_client.fairness import coupon_pattern, read_lines
from local.stack import control as stack

MAX_USERS = 100_000
MAX_SECONDS = 900


class TargetError(ValueError):
    """The rehearsal was not pointed at exactly one environment it may call."""


@dataclass(frozen=True)
class Target:
    name: str
    url: str
    admin: ApiClient
    public: list[ApiClient]  # one shared client, or one per user (prod: each with its ID token)
    intake_log: IntakeLog | None = None  # None: not read (an AWS target without --intake-log-group)


@dataclass(frozen=True)
class IntakeLog:
    """The intake's log group, where its metrics lines are (the report's arrival order)."""

    logs: Any  # a boto3 Logs client
    group: str
    by_coupon: bool  # filter by coupon in CloudWatch Logs (LocalStack's filter patterns are not relied on)

    def lines(self, span_ms: tuple[int, int], coupon_id: int) -> Iterator[str]:
        return read_lines(self.logs, self.group, span_ms, coupon_pattern(coupon_id) if self.by_coupon else "")


def target(args: argparse.Namespace) -> Target:
    """The environment to call, checked: nothing else is ever called."""
    if args.target == "local":
        if args.url or args.id_tokens or args.intake_log_group:
            raise TargetError("--target local calls make up's stack: no --url, --id-tokens or --intake-log-group")
        if not stack.is_up():
            raise TargetError("the local stack is not running: start it with make up")
        env = stack.read_env()
        logs = boto3.client("logs", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_DEFAULT_REGION"],
                            aws_access_key_id="test", aws_secret_access_key="test")  # fmt: skip
        url, log = env["API_URL"], IntakeLog(logs, env["INTAKE_LOG_GROUP"], by_coupon=False)
        return Target("local", url, ApiClient(url, connections=64), [ApiClient(url, connections=256)], log)
    if not args.url or not args.region:
        raise TargetError(f"--target {args.target} needs --url (the stack's ApiUrl output) and --region")
    pattern = rf"https://[a-z0-9]+\.execute-api\.{re.escape(args.region)}\.amazonaws\.com/{args.target}/?"
    if not re.fullmatch(pattern, args.url):
        raise TargetError(f"--url must be the {args.target} stage's execute-api URL in {args.region}, got {args.url}")
    admin = ApiClient(args.url, connections=64, sign=sigv4(args.region))
    intake_log = (
        IntakeLog(boto3.client("logs", region_name=args.region), args.intake_log_group, by_coupon=True)
        if args.intake_log_group
        else None
    )
    if args.target == "prod":
        if not args.id_tokens:
            raise TargetError("--target prod needs --id-tokens: a Cognito ID token per user, one per line")
        tokens = [line.strip() for line in Path(args.id_tokens).read_text().splitlines() if line.strip()]
        public = [ApiClient(args.url, connections=2, sign=id_token(t)) for t in tokens]
        return Target("prod", args.url, admin, public, intake_log)
    return Target(
        args.target, args.url, admin, [ApiClient(args.url, connections=256, sign=sigv4(args.region))], intake_log
    )


def arrivals(users: int, burst: float, late_seconds: float) -> list[float]:
    """The opening's burst at 0 s, the rest evenly over ``late_seconds`` after it."""
    at_once = round(users * burst)
    late = users - at_once
    return [0.0] * at_once + [late_seconds * (i + 1) / late for i in range(late)]


def parse_args(argv: list[str] | None, description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", required=True, choices=["local", "dev", "prod"])
    parser.add_argument("--url", help="the target's ApiUrl (AWS targets)")
    parser.add_argument("--region", help="the target's AWS region (AWS targets)")
    parser.add_argument("--id-tokens", help="prod: a file of Cognito ID tokens, one per user")
    parser.add_argument("--intake-log-group", help="AWS targets: the stack's IntakeLogGroup output, for arrival order")
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--burst", type=float, default=0.8, help="the share of users at the opening second")
    parser.add_argument("--late-seconds", type=float, default=10, help="over how long the others arrive")
    parser.add_argument("--max-seconds", type=float, default=120, help="the sale stops by then")
    parser.add_argument("--drain-seconds", type=float, default=180, help="how long the pipeline may take after")
    args = parser.parse_args(argv)
    if not 1 <= args.users <= MAX_USERS or not 1 <= args.copies <= MAX_USERS:
        parser.error(f"--users and --copies must be 1 to {MAX_USERS:,}")
    if not 0 < args.max_seconds <= MAX_SECONDS or not 0 <= args.burst <= 1 or args.late_seconds < 0:
        parser.error(f"--max-seconds must be above 0 and at most {MAX_SECONDS}, --burst 0 to 1, --late-seconds >= 0")
    return args
