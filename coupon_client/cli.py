"""``coupons``: the operators' command. Every admin route of a deployed API as a subcommand, a
user's request status for support, and ``watch``, a live view of a sale.

Each call is signed with SigV4 from the operator's own AWS identity (botocore's chain); the
deployment is found by its environment's name (``--env dev``: the stack's outputs; ``--env
local``: the stack ``make up`` runs) or given as ``--api-url``. The options are the AWS CLI's
where it has one (``--output``, ``--debug``, ``--endpoint-url``, ``--profile``, ``--region``).
What goes wrong is said on one line of standard error, with the exit status of its cause
(``coupon_client.errors``).

This module imports Typer and the command's own light modules only: boto3, botocore and Rich
load when a command calls something (``Options.session``) or draws a table, so that ``--help``,
a usage error and shell completion answer at once.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from coupon_client import arguments
from coupon_client.errors import CouponsError, NothingToMeasureError, UnknownEnvironmentError
from coupon_client.output import Format, Printer

if TYPE_CHECKING:
    from coupon_client.admin import AdminApi
    from coupon_client.session import Session

DISTRIBUTION = "coupon-system"  # pyproject.toml's project name
NUMBERS = {"ignore_unknown_options": True}  # a negative number is an argument for the check to refuse, not an option


class GlobalOptionsAnywhere(TyperGroup):
    """The command's options (``--output``, ``--env``, ...) after the subcommand as well as before
    it, as the AWS CLI takes them: ``coupons show 1 --output json``. Click reads a group's options
    before its subcommand only; those found after it are moved in front, with their values."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # Typer's own Click's Context
        takes_value = {
            name: not getattr(param, "is_flag", False)
            for param in self.params
            if param.param_type_name == "option"
            for name in (*param.opts, *param.secondary_opts)
        }
        before, after, command_seen, i = [], [], False, 0
        while i < len(args):
            arg, name = args[i], args[i].split("=", 1)[0]
            width = 2 if takes_value.get(name) and "=" not in arg else 1
            if arg == "--":
                after += args[i:]
                break
            if name in takes_value:  # one of the group's options, wherever it stands
                before += args[i : i + width]
                i += width
                continue
            command_seen = command_seen or not arg.startswith("-")
            (after if command_seen else before).append(arg)
            i += 1
        return super().parse_args(ctx, before + after)


app = typer.Typer(
    cls=GlobalOptionsAnywhere,
    name="coupons",
    help="Run a coupon sale on a deployed environment, signed with your own AWS identity.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # Click's plain help: each option's type, nothing drawn, Rich not imported
    context_settings={"max_content_width": 120},
)


@dataclass
class Options:
    """The global options, as given; the session they name is made on first use."""

    env: str | None
    api_url: str | None
    endpoint_url: str | None
    profile: str | None
    region: str | None
    output: Format
    debug: bool
    read_timeout: float
    _session: Session | None = field(default=None, init=False)

    def session(self) -> Session:
        if self._session is None:
            from coupon_client.session import Session  # noqa: PLC0415 -- boto3 loads for a call only

            self._session = Session(
                env=self.env,
                api_url=self.api_url,
                endpoint_url=self.endpoint_url,
                profile=self.profile,
                region=self.region,
                debug=self.debug,
                read_timeout=self.read_timeout,
            )
        return self._session

    def printer(self) -> Printer:
        return Printer(self.output)


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


def _version(shown: bool) -> None:
    if shown:
        typer.echo(f"coupons {version(DISTRIBUTION)} Python/{sys.version.split()[0]}")
        raise typer.Exit


@app.callback()
def main(
    ctx: typer.Context,
    env: Annotated[
        str | None,
        typer.Option(
            envvar="COUPONS_ENV",
            metavar="NAME",
            help="the environment: the stack Coupons-NAME; local: the stack make up runs",
        ),
    ] = None,
    api_url: Annotated[
        str | None,
        typer.Option(
            envvar="COUPONS_API_URL", metavar="URL", callback=arguments.url, help="the API's URL, in place of --env"
        ),
    ] = None,
    endpoint_url: Annotated[
        str | None,
        typer.Option(
            envvar="AWS_ENDPOINT_URL",
            metavar="URL",
            callback=arguments.url,
            help="AWS's APIs at this endpoint (LocalStack's)",
        ),
    ] = None,
    profile: Annotated[
        str | None, typer.Option(metavar="NAME", help="the AWS profile (default: botocore's chain)")
    ] = None,
    region: Annotated[
        str | None, typer.Option(metavar="REGION", help="the AWS region (default: AWS_REGION, the profile's)")
    ] = None,
    output: Annotated[
        Format,
        typer.Option(
            envvar="COUPONS_OUTPUT",
            case_sensitive=False,
            help="json: the API's documents, one a line; table: for a person; text: tab-separated, for scripts",
        ),
    ] = Format.TABLE,
    debug: Annotated[
        bool, typer.Option("--debug", help="every request and answer on stderr, secrets redacted")
    ] = False,
    read_timeout: Annotated[
        float, typer.Option(min=0.1, max=900, metavar="SECONDS", help="how long to wait for an answer")
    ] = 30.0,
    _show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="the command's version, and exit")
    ] = False,
) -> None:
    ctx.obj = Options(env, api_url, endpoint_url, profile, region, output, debug, read_timeout)


COUPON_ID = arguments.bounded("a coupon id", 1, arguments.MAX_ID)
CouponId = Annotated[int, typer.Argument(metavar="COUPON", callback=COUPON_ID, help="the coupon's id")]
MOMENT_HELP = "ISO 8601 with a zone, now, or from now: +10m"
END_HELP = "ISO 8601 with a zone, now, or after --starts (from now without it): +2h"
Moment = Annotated[datetime, typer.Option(parser=arguments.moment, metavar="TIME", help=MOMENT_HELP)]
OptionalMoment = Annotated[datetime | None, typer.Option(parser=arguments.moment, metavar="TIME", help=MOMENT_HELP)]

After = Annotated[int, typer.Option(metavar="ID", callback=arguments.bounded("--after", 0, arguments.MAX_ID),
                                    help="the last id of the previous page")]  # fmt: skip
Limit = Annotated[int, typer.Option(metavar="N", callback=arguments.bounded("--limit", 1, arguments.MAX_PAGE),
                                    help=f"at most this many (1 to {arguments.MAX_PAGE:,})")]  # fmt: skip
Yes = Annotated[bool, typer.Option("--yes", "-y", help="do not ask for confirmation")]


@app.command(context_settings=NUMBERS)
@reported
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(parser=arguments.name, metavar="NAME", help="the coupon's name")],
    copies: Annotated[
        int,
        typer.Option(
            metavar="N",
            callback=arguments.bounded("--copies", 1, arguments.MAX_COPIES),
            help=f"the stock (1 to {arguments.MAX_COPIES:,})",
        ),
    ],
    starts: Moment,
    ends_as_given: Annotated[
        arguments.WindowEnd, typer.Option("--ends", parser=arguments.window_end, metavar="TIME", help=END_HELP)
    ],
    valid_until: OptionalMoment = None,
    valid_days: Annotated[
        int | None,
        typer.Option(
            metavar="DAYS",
            callback=arguments.bounded("--valid-days", 1, arguments.MAX_VALID_DAYS),
            help="days a copy lasts once issued",
        ),
    ] = None,
    reissue_after_cancel: Annotated[bool, typer.Option(help="may a user who canceled take it again?")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="create it even if its window has ended")] = False,
) -> None:
    """Create a coupon.

    coupons create "Black Friday" --copies 5000 --starts 2026-12-24T12:00Z --ends +2h
    """
    ends = ends_as_given.after(starts)
    arguments.ordered(starts, ends)
    arguments.not_past(ends, yes=yes)
    if valid_until is not None:
        arguments.ordered(starts, valid_until)
    body: dict[str, Any] = {
        "name": name,
        "totalQuantity": copies,
        "issueStartsAt": arguments.wire(starts),
        "issueEndsAt": arguments.wire(ends),
        "reissueAfterCancel": reissue_after_cancel,
    }
    if valid_until is not None:
        body["validUntil"] = arguments.wire(valid_until)
    if valid_days is not None:
        body["validDays"] = valid_days
    _show_coupon(ctx, _admin(ctx).create(body))


@app.command("list")
@reported
def list_coupons(
    ctx: typer.Context,
    after: After = 0,
    limit: Limit = 100,
    every: Annotated[bool, typer.Option("--all", help="every page, not only the first")] = False,
) -> None:
    """List coupons, with their state and stock left."""
    admin = _admin(ctx)
    page = admin.coupons_page(after, limit)
    coupons = list(page["coupons"])
    while every and page["next"] is not None:
        page = admin.coupons_page(page["next"], limit)
        coupons += page["coupons"]
    _options(ctx).printer().coupons({**page, "coupons": coupons}, _now())


@app.command(context_settings=NUMBERS)
@reported
def show(ctx: typer.Context, coupon: CouponId) -> None:
    """Show a coupon: its state, database and Redis counts."""
    _show_coupon(ctx, _admin(ctx).coupon(coupon))


@app.command(context_settings=NUMBERS)
@reported
def change(
    ctx: typer.Context,
    coupon: CouponId,
    name: Annotated[str | None, typer.Option(parser=arguments.name, metavar="NAME", help="the new name")] = None,
    starts: OptionalMoment = None,
    ends_as_given: Annotated[
        arguments.WindowEnd | None,
        typer.Option("--ends", parser=arguments.window_end, metavar="TIME", help=END_HELP),
    ] = None,
) -> None:
    """Rename a coupon or move its window."""
    if name is None and starts is None and ends_as_given is None:
        raise typer.BadParameter("nothing to change: give --name, --starts or --ends")
    ends = None if ends_as_given is None else ends_as_given.after(starts)
    arguments.ordered(starts, ends)
    changes = {
        "name": name,
        "issueStartsAt": starts and arguments.wire(starts),
        "issueEndsAt": ends and arguments.wire(ends),
    }
    _show_coupon(ctx, _admin(ctx).change(coupon, {k: v for k, v in changes.items() if v is not None}))


@app.command(context_settings=NUMBERS)
@reported
def close(ctx: typer.Context, coupon: CouponId, yes: Yes = False) -> None:
    """Stop a sale now (the kill switch).

    Requests answer 409 CLOSED until it is reopened.
    """
    if not yes:
        typer.confirm(f"Close coupon {coupon} now? Requests will answer 409 CLOSED", abort=True, err=True)
    _show_coupon(ctx, _admin(ctx).close(coupon))


@app.command(context_settings=NUMBERS)
@reported
def reopen(ctx: typer.Context, coupon: CouponId) -> None:
    """Reopen a closed coupon."""
    _show_coupon(ctx, _admin(ctx).reopen(coupon))


@app.command("top-up", context_settings=NUMBERS)
@reported
def top_up(
    ctx: typer.Context,
    coupon: CouponId,
    copies: Annotated[
        int,
        typer.Argument(
            metavar="COPIES",
            callback=arguments.bounded("copies", 1, arguments.MAX_COPIES),
            help=f"copies to add (1 to {arguments.MAX_COPIES:,})",
        ),
    ],
) -> None:
    """Add copies to a coupon's stock."""
    _show_coupon(ctx, _admin(ctx).top_up(coupon, copies))


@app.command(context_settings=NUMBERS)
@reported
def reconcile(ctx: typer.Context, coupon: CouponId) -> None:
    """Repair a coupon's Redis state from the database now.

    Prints the rebuild's report.
    """
    answer = _admin(ctx).reconcile(coupon)
    report = answer["report"]
    fields = {key: value for entry in report.get("reconciled", []) for key, value in entry.items()}
    fields |= {key: report[key] for key in ("failed", "inFlightError") if report.get(key)}
    _options(ctx).printer().pairs(f"reconcile of coupon {coupon}", answer, fields)


@app.command(context_settings=NUMBERS)
@reported
def issues(ctx: typer.Context, coupon: CouponId, after: After = 0, limit: Limit = 100) -> None:
    """List a coupon's issues, a page at a time."""
    _options(ctx).printer().issues(_admin(ctx).issues_page(coupon, after, limit), coupon, _now())


@app.command(context_settings=NUMBERS)
@reported
def export(
    ctx: typer.Context,
    coupon: CouponId,
    file: Annotated[
        Path | None, typer.Option("--file", "-f", metavar="PATH", help="the CSV file (default: standard output)")
    ] = None,
    page_size: Annotated[
        int,
        typer.Option(
            metavar="N",
            callback=arguments.bounded("--page-size", 1, arguments.MAX_PAGE),
            help=f"issues a request (1 to {arguments.MAX_PAGE:,})",
        ),
    ] = arguments.MAX_PAGE,
) -> None:
    """Export every issue of a coupon as CSV.

    A header row first, then page after page; with --file, a summary on standard output.
    """
    options = _options(ctx)
    admin = options.session().admin()
    expected = int(admin.coupon(coupon)["issued"])
    rows = 0
    with (
        file.open("w", newline="") if file else contextlib.nullcontext(sys.stdout) as sink,
        _progress(hidden=options.output is not Format.TABLE) as progress,
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
    if file is not None:
        summary = {"couponId": coupon, "rows": rows, "file": str(file)}
        options.printer().pairs(f"{rows} issues of coupon {coupon} written to {file}", summary, summary, sentence=True)


@app.command(context_settings=NUMBERS)
@reported
def status(
    ctx: typer.Context,
    coupon: CouponId,
    user: Annotated[
        int,
        typer.Argument(
            metavar="USER", callback=arguments.bounded("a user id", 1, arguments.MAX_ID), help="the user's id"
        ),
    ],
    id_token_file: Annotated[
        Path | None,
        typer.Option(
            "--id-token-file",
            metavar="PATH",
            help="the user's Cognito ID token, where the public routes take one (prod)",
        ),
    ] = None,
) -> None:
    """Say where a user's request stands.

    NONE, PENDING, ISSUED, USED, CANCELED, EXPIRED or FAILED.
    """
    token = id_token_file.read_text().strip() if id_token_file else None
    answer = _options(ctx).session().admin(token).status(coupon, user)
    fields = {"couponId": coupon, "userId": user, "status": answer["status"]}
    _options(ctx).printer().pairs(f"user {user} on coupon {coupon}: {answer['status']}", answer, fields, sentence=True)


@app.command(context_settings=NUMBERS)
@reported
def watch(
    ctx: typer.Context,
    coupon: CouponId,
    interval: Annotated[float, typer.Option(min=0.2, max=60, metavar="SECONDS", help="between refreshes")] = 1.0,
    frames: Annotated[
        int | None,
        typer.Option(
            metavar="N", callback=arguments.bounded("--frames", 1, 10**9), help="stop after this many refreshes"
        ),
    ] = None,
) -> None:
    """Watch a sale live; c closes it.

    r reopens it, t tops it up, q or Ctrl-C quits. With --output json or text, one line a refresh.
    """
    from coupon_client import watch as view  # noqa: PLC0415 -- Rich's live view loads for this command only

    options = _options(ctx)
    session = options.session()
    admin, target = session.admin(), session.target()
    metrics = session.metrics()
    try:
        if options.output is Format.TABLE:
            where = target.name or target.api_url
            view.watch(admin, metrics, coupon, _console(), where, interval_s=interval, frames=frames)
        else:
            line = view.Frame.line if options.output is Format.TEXT else lambda frame: json.dumps(frame.document())
            view.watch_lines(admin, metrics, coupon, sys.stdout, line, interval_s=interval, frames=frames,
                             sleep=time.sleep)  # fmt: skip
    except KeyboardInterrupt:
        pass  # Ctrl-C is how one leaves the view: the terminal is already put back
    except view.Ended as ended:
        raise typer.Exit(128 + ended.signum) from None  # the terminal is put back, as for Ctrl-C


@app.command(context_settings=NUMBERS)
@reported
def fairness(
    ctx: typer.Context,
    coupon: CouponId,
    detail: Annotated[
        int,
        typer.Option(
            metavar="N",
            callback=arguments.bounded("--detail", 0, 1_000),
            help="overtaken losers to list, the largest overtaking first (0 to 1,000)",
        ),
    ] = 20,
) -> None:
    """Say how far a sale's winners strayed from arrival order.

    From every one of the intake's metrics lines of the coupon (CloudWatch Logs' FilterLogEvents,
    over the coupon's window): one entry per click, the inversion window, the losers overtaken,
    the late winners apart, and arrival to decision by outcome (docs/operations.md, First come,
    first served).
    """
    from coupon_client import fairness as measure  # noqa: PLC0415 -- for this command only
    from coupon_client.environment import LOCAL, aws_errors  # noqa: PLC0415 -- loads botocore

    options = _options(ctx)
    session = options.session()
    target = session.target()
    group = target.intake_log_group
    if group is None:
        raise UnknownEnvironmentError("the intake's log group is unknown: give --env (its stack's IntakeLogGroup)")
    window = session.admin().coupon(coupon)
    starts = datetime.fromisoformat(window["issueStartsAt"])
    ends = min(datetime.fromisoformat(window["issueEndsAt"]), _now())
    span = (int(starts.timestamp() * 1000) - 60_000, int(ends.timestamp() * 1000) + 60_000)
    logs = session.aws().client("logs", endpoint_url=target.aws_endpoint)
    pattern = "" if target.name == LOCAL else measure.coupon_pattern(coupon)  # LocalStack's patterns: not relied on
    no_group = NothingToMeasureError(f"no log group {group}: nothing to measure (no line written yet)")
    with aws_errors("logs:FilterLogEvents", target.aws_endpoint, {"ResourceNotFoundException": no_group}):
        lines = measure.lines_of(measure.read_lines(logs, group, span, pattern), coupon)
    if not lines:
        raise NothingToMeasureError(
            f"no metrics line of coupon {coupon} in {group} from {starts:%Y-%m-%d %H:%M:%S} to "
            f"{ends:%Y-%m-%d %H:%M:%S} UTC: nothing to measure (no answer in its window, or its lines are not kept)"
        )
    figures = measure.measure(lines)
    listed = min(detail, figures.early_losers)
    fields = dict(figures.summary()) | {"overtaken losers listed": f"{listed:,} of {figures.early_losers:,}"}
    options.printer().pairs(
        f"arrival order of coupon {coupon}", {"couponId": coupon, **figures.as_json(detail)}, fields
    )
    if listed and options.output is not Format.JSON:
        for o in figures.overtaken[:listed]:
            sys.stdout.write(
                f"  loser arrived {_clock(o.loser_arrived_at)}, decided {_clock(o.loser_decided_at)}; winner arrived "
                f"{_clock(o.winner_arrived_at)} (+{o.ms:,} ms), took its copy {_clock(o.winner_took_at)}\n"
            )


def _clock(epoch_ms: int) -> str:
    """A time of the sale's, to the millisecond, UTC."""
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%H:%M:%S.%f")[:-3]


def _options(ctx: typer.Context) -> Options:
    options = ctx.find_object(Options)
    assert options is not None  # set by main(), the callback of every command
    return options


def _admin(ctx: typer.Context) -> AdminApi:
    """The admin routes of the API the global options name, signed as the operator."""
    return _options(ctx).session().admin()


def _show_coupon(ctx: typer.Context, coupon: dict[str, Any]) -> None:
    """A coupon's document as the API answered it, in the asked form, with its state now."""
    _options(ctx).printer().coupon(coupon, _now())


def _now() -> datetime:
    return datetime.now(UTC)


def _console() -> Any:
    from rich.console import Console  # noqa: PLC0415

    return Console()


def _progress(*, hidden: bool) -> Any:
    """The export's progress, on standard error, so that the CSV on stdout stays whole."""
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn  # noqa: PLC0415

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    console=Console(stderr=True), disable=hidden, transient=True)  # fmt: skip
