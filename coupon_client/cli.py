"""``coupons``: the operators' command. Every admin route of a deployed API as a subcommand, a
user's request status for support, and ``watch``, a live view of a sale.

Each call is signed with SigV4 from the operator's own AWS identity (botocore's chain); the
deployment is found by its environment's name (``--env dev``: the stack's outputs) or given as
``--api-url``. What goes wrong is said on one line of standard error, with the exit status of
its cause (``coupon_client.errors``); ``--json`` prints the API's documents on standard output
and nothing else there.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import boto3
import typer
from botocore.credentials import Credentials
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from coupon_client import arguments, environment
from coupon_client.admin import AdminApi, Body
from coupon_client.api_client import ApiClient
from coupon_client.aws_auth import id_token, sigv4
from coupon_client.errors import CouponsError, UnknownEnvironmentError
from coupon_client.metrics import StackMetrics
from coupon_client.watch import watch as watch_view
from coupon_client.watch import watch_json

app = typer.Typer(
    name="coupons",
    help="Run a coupon sale on a deployed environment, signed with your own AWS identity.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

TIMEOUT_S = 30


@dataclass
class Session:
    """The command line's target and identity, resolved on first use (``--help`` needs neither)."""

    env: str | None
    api_url: str | None
    profile: str | None
    region: str | None
    _aws: boto3.Session | None = field(default=None, init=False)
    _target: environment.Target | None = field(default=None, init=False)
    _credentials: Credentials | None = field(default=None, init=False)

    def aws(self) -> boto3.Session:
        if self._aws is None:
            self._aws = environment.aws_session(self.profile, self.region)
        return self._aws

    def credentials(self) -> Credentials:
        """The operator's credentials, checked once (an expired SSO session is said before anything is sent)."""
        if self._credentials is None:
            self._credentials = environment.credentials(self.aws())
        return self._credentials

    def target(self) -> environment.Target:
        if self._target is None:
            if self.api_url:
                self._target = environment.Target(self.api_url.rstrip("/"), environment.region_of(self.aws()))
            elif self.env:
                self.credentials()  # before the stack lookup: a missing identity is said as such
                self._target = environment.find(self.aws(), self.env)
            else:
                raise UnknownEnvironmentError(
                    "which environment? pass --env NAME (or set COUPONS_ENV) or --api-url URL"
                )
        return self._target

    def admin(self, token: str | None = None) -> AdminApi:
        target = self.target()
        sign = id_token(token) if token else sigv4(target.region, self.credentials())
        return AdminApi(ApiClient(target.api_url, timeout_s=TIMEOUT_S, connections=2, sign=sign), target.api_url,
                        target.region)  # fmt: skip


def reported[**P, R](command: Callable[P, R]) -> Callable[P, R]:
    """Runs a command; a :class:`CouponsError` becomes its one line on standard error and its exit
    status."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except CouponsError as exc:
            typer.echo(f"coupons: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None

    return run


@app.callback()
def main(
    ctx: typer.Context,
    env: Annotated[str | None, typer.Option(envvar="COUPONS_ENV", help="the environment (stack Coupons-ENV)")] = None,
    api_url: Annotated[str | None, typer.Option(envvar="COUPONS_API_URL", help="the API's URL, not --env")] = None,
    profile: Annotated[str | None, typer.Option(help="the AWS profile (default: botocore's chain)")] = None,
    region: Annotated[str | None, typer.Option(help="the AWS region (default: AWS_REGION, the profile's)")] = None,
) -> None:
    ctx.obj = Session(env, api_url, profile, region)


CouponId = Annotated[int, typer.Argument(min=1, max=arguments.MAX_ID, help="the coupon's id")]
Json = Annotated[bool, typer.Option("--json", help="print the API's JSON document, and nothing else, on stdout")]
MOMENT_HELP = "ISO 8601 with a zone, now, or from now: +10m"
Moment = Annotated[datetime, typer.Option(parser=arguments.moment, metavar="TIME", help=MOMENT_HELP)]
OptionalMoment = Annotated[datetime | None, typer.Option(parser=arguments.moment, metavar="TIME", help=MOMENT_HELP)]
Copies = Annotated[int, typer.Argument(min=1, max=arguments.MAX_COPIES, help="copies to add")]
After = Annotated[int, typer.Option(min=0, max=arguments.MAX_ID, help="the last id of the previous page")]
Limit = Annotated[int, typer.Option(min=1, max=arguments.MAX_PAGE, help="at most this many")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="do not ask for confirmation")]


@app.command()
@reported
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(parser=arguments.name, help="the coupon's name")],
    copies: Annotated[int, typer.Option(min=1, max=arguments.MAX_COPIES, help="the stock")],
    starts: Moment,
    ends: Moment,
    valid_until: OptionalMoment = None,
    valid_days: Annotated[
        int | None, typer.Option(min=1, max=arguments.MAX_VALID_DAYS, help="days a copy lasts")
    ] = None,
    reissue_after_cancel: Annotated[bool, typer.Option(help="may a user who canceled take it again?")] = False,
    as_json: Json = False,
) -> None:
    """Create a coupon: coupons create "Black Friday" --copies 5000 --starts 2026-12-24T12:00Z --ends +2h"""
    arguments.ordered(starts, ends)
    if valid_until is not None:
        arguments.ordered(starts, valid_until)
    body: Body = {"name": name, "totalQuantity": copies, "issueStartsAt": arguments.wire(starts),
                  "issueEndsAt": arguments.wire(ends), "reissueAfterCancel": reissue_after_cancel}  # fmt: skip
    if valid_until is not None:
        body["validUntil"] = arguments.wire(valid_until)
    if valid_days is not None:
        body["validDays"] = valid_days
    _show_coupon(_session(ctx).admin().create(body), as_json)


@app.command("list")
@reported
def list_coupons(
    ctx: typer.Context,
    after: After = 0,
    limit: Limit = 100,
    every: Annotated[bool, typer.Option("--all")] = False,
    as_json: Json = False,
) -> None:
    """Coupons, a page at a time (--all: every page)."""
    admin = _session(ctx).admin()
    page = admin.coupons_page(after, limit)
    coupons = list(page["coupons"])
    while every and page["next"] is not None:
        page = admin.coupons_page(page["next"], limit)
        coupons += page["coupons"]
    if as_json:
        _json({"coupons": coupons, "next": page["next"]})
        return
    table = Table("id", "name", "total", "remaining", "issued", "reserved", "starts", "ends", "closed")
    for c in coupons:
        table.add_row(str(c["couponId"]), c["name"], str(c["totalQuantity"]), str(c["remainingQuantity"]),
                      str(c["issued"]), str(c["reserved"]), c["issueStartsAt"], c["issueEndsAt"],
                      "yes" if c["closed"] else "")  # fmt: skip
    _out().print(table)
    if page["next"] is not None:
        _out().print(f"more: coupons list --after {page['next']}")


@app.command()
@reported
def show(ctx: typer.Context, coupon: CouponId, as_json: Json = False) -> None:
    """A coupon with its database and Redis counts."""
    _show_coupon(_session(ctx).admin().coupon(coupon), as_json)


@app.command()
@reported
def change(
    ctx: typer.Context,
    coupon: CouponId,
    name: Annotated[str | None, typer.Option(parser=arguments.name, help="the new name")] = None,
    starts: OptionalMoment = None,
    ends: OptionalMoment = None,
    as_json: Json = False,
) -> None:
    """Rename a coupon or move its window."""
    if name is None and starts is None and ends is None:
        raise typer.BadParameter("nothing to change: give --name, --starts or --ends")
    arguments.ordered(starts, ends)
    changes = {
        "name": name,
        "issueStartsAt": starts and arguments.wire(starts),
        "issueEndsAt": ends and arguments.wire(ends),
    }
    _show_coupon(_session(ctx).admin().change(coupon, {k: v for k, v in changes.items() if v is not None}), as_json)


@app.command()
@reported
def close(ctx: typer.Context, coupon: CouponId, yes: Yes = False, as_json: Json = False) -> None:
    """Stop a sale now: requests answer 409 CLOSED until it is reopened."""
    if not yes:
        typer.confirm(f"Close coupon {coupon} now? Requests will answer 409 CLOSED", abort=True, err=True)
    _show_coupon(_session(ctx).admin().close(coupon), as_json)


@app.command()
@reported
def reopen(ctx: typer.Context, coupon: CouponId, as_json: Json = False) -> None:
    """Reopen a closed coupon."""
    _show_coupon(_session(ctx).admin().reopen(coupon), as_json)


@app.command("top-up")
@reported
def top_up(ctx: typer.Context, coupon: CouponId, copies: Copies, as_json: Json = False) -> None:
    """Add copies to a coupon's stock."""
    _show_coupon(_session(ctx).admin().top_up(coupon, copies), as_json)


@app.command()
@reported
def reconcile(ctx: typer.Context, coupon: CouponId, as_json: Json = False) -> None:
    """Repair a coupon's Redis state from the database now, and print the report."""
    answer = _session(ctx).admin().reconcile(coupon)
    if as_json:
        _json(answer)
        return
    report = answer["report"]
    table = Table(f"reconcile of coupon {coupon}", "")
    for entry in report.get("reconciled", []):
        for key, value in entry.items():
            table.add_row(key, str(value))
    for key in ("failed", "inFlightError"):
        if report.get(key):
            table.add_row(key, json.dumps(report[key]))
    _out().print(table)


@app.command()
@reported
def issues(ctx: typer.Context, coupon: CouponId, after: After = 0, limit: Limit = 100, as_json: Json = False) -> None:
    """A coupon's issues, a page at a time."""
    page = _session(ctx).admin().issues_page(coupon, after, limit)
    if as_json:
        _json(page)
        return
    table = Table("issue", "user", "status", "issued at", "expires at", "request")
    for i in page["issues"]:
        table.add_row(str(i["issueId"]), str(i["userId"]), i["status"], i["issuedAt"], i["expiresAt"] or "",
                      i["requestId"])  # fmt: skip
    _out().print(table)
    if page["next"] is not None:
        _out().print(f"more: coupons issues {coupon} --after {page['next']}")


@app.command()
@reported
def export(
    ctx: typer.Context,
    coupon: CouponId,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="the CSV file (default: stdout)")] = None,
    page_size: Annotated[int, typer.Option(min=1, max=arguments.MAX_PAGE)] = arguments.MAX_PAGE,
    as_json: Json = False,
) -> None:
    """Every issue of a coupon as CSV, a header row first, page after page."""
    if as_json and output is None:
        raise typer.BadParameter("--json prints a summary on stdout: give the CSV a file with --output")
    admin = _session(ctx).admin()
    expected = int(admin.coupon(coupon)["issued"])
    rows = 0
    with (
        output.open("w", newline="") if output else contextlib.nullcontext(sys.stdout) as sink,
        _progress(as_json) as progress,
    ):
        task = progress.add_task(f"coupon {coupon}", total=expected or None)
        after: int | None = 0
        while after is not None:
            page = admin.issues_csv(coupon, after, page_size)
            lines = page.text.splitlines(keepends=True)
            sink.write("".join(lines if rows == 0 and after == 0 else lines[1:]))  # one header row
            rows += max(len(lines) - 1, 0)
            progress.update(task, completed=rows)
            after = page.next_after
    if as_json:
        _json({"couponId": coupon, "rows": rows, "output": str(output)})
    elif output is not None:
        _out().print(f"{rows} issues of coupon {coupon} written to {output}")


@app.command()
@reported
def status(
    ctx: typer.Context,
    coupon: CouponId,
    user: Annotated[int, typer.Argument(min=1, max=arguments.MAX_ID, help="the user's id")],
    id_token_file: Annotated[
        Path | None,
        typer.Option("--id-token-file", help="the user's Cognito ID token, where the public routes take one (prod)"),
    ] = None,
    as_json: Json = False,
) -> None:
    """Where a user's request stands: NONE, PENDING, ISSUED, USED, CANCELED, EXPIRED or FAILED."""
    token = id_token_file.read_text().strip() if id_token_file else None
    answer = _session(ctx).admin(token).status(coupon, user)
    if as_json:
        _json(answer)
    else:
        _out().print(f"user {user} on coupon {coupon}: {answer['status']}")


@app.command()
@reported
def watch(
    ctx: typer.Context,
    coupon: CouponId,
    interval: Annotated[float, typer.Option(min=0.2, max=60, help="seconds between refreshes")] = 1.0,
    frames: Annotated[int | None, typer.Option(min=1, help="stop after this many refreshes")] = None,
    as_json: Json = False,
) -> None:
    """A live view of a sale, refreshed every second: c closes, r reopens, t tops up, q or Ctrl-C quits."""
    session = _session(ctx)
    admin, target = session.admin(), session.target()
    metrics = StackMetrics(session.aws(), target)
    try:
        if as_json:
            watch_json(admin, metrics, coupon, sys.stdout, interval_s=interval, frames=frames, sleep=time.sleep)
        else:
            where = target.name or target.api_url
            watch_view(admin, metrics, coupon, _out(), where, interval_s=interval, frames=frames)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how one leaves the view: the terminal is already put back


def _session(ctx: typer.Context) -> Session:
    session = ctx.find_object(Session)
    assert session is not None  # set by main(), the callback of every command
    return session


def _show_coupon(coupon: Body, as_json: bool) -> None:
    if as_json:
        _json(coupon)
        return
    table = Table(f"coupon {coupon['couponId']}", coupon["status"])
    for key in ("name", "totalQuantity", "remainingQuantity", "issued", "reserved", "issueStartsAt", "issueEndsAt",
                "validUntil", "validDays", "reissueAfterCancel", "closed"):  # fmt: skip
        table.add_row(key, str(coupon[key]))
    _out().print(table)


def _json(document: Any) -> None:
    typer.echo(json.dumps(document))


def _out() -> Console:
    return Console()


def _progress(hidden: bool) -> Progress:
    """The export's progress, on standard error, so that the CSV on stdout stays whole."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    console=Console(stderr=True), disable=hidden, transient=True)  # fmt: skip
