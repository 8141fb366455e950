"""How the command prints what the API answered, in the form ``--output`` names (the AWS CLI's):

- ``json``: the API's document as it came, one a line, and nothing else on standard output;
- ``table`` (the default): for a person. A table never cuts an id, a count or a time: a column
  that does not fit the terminal is left out whole, and a line says which and how to see it;
- ``text``: for scripts, tab-separated, no header: a list one line a record with every column of
  its table in order (times in full ISO 8601), a single document one ``key<TAB>value`` line a field.

Rich is imported only to draw a table: a script asking for JSON or text does not pay for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TextIO

from coupon_client import sale

if TYPE_CHECKING:
    from rich.console import Console

Document = dict[str, Any]


class Format(StrEnum):
    JSON = "json"
    TABLE = "table"
    TEXT = "text"


@dataclass(frozen=True)
class Column:
    """One column of a list: its header, its cell for a person and for a script, and how much it
    matters (the least first is left out when the terminal is too narrow; ``wraps``: a name,
    folded onto more lines rather than left out)."""

    header: str
    cell: Callable[[Document, datetime], str]
    keep: int
    raw: Callable[[Document], str] | None = None  # the text form's cell, when not the table's
    wraps: bool = False


def _raw(name: str) -> Callable[[Document], str]:
    return lambda document: "" if document.get(name) is None else str(document[name])


def _field(name: str) -> Callable[[Document, datetime], str]:
    raw = _raw(name)
    return lambda document, _now: raw(document)


def _time(name: str) -> Callable[[Document, datetime], str]:
    return lambda document, _now: sale.moment(document.get(name))


COUPON_COLUMNS = (
    Column("id", _field("couponId"), keep=100),
    Column("name", _field("name"), keep=90, wraps=True),
    Column("state", sale.state, keep=95),
    Column("left", lambda coupon, _now: str(sale.stock_left(coupon)), keep=80),
    Column("total", _field("totalQuantity"), keep=40),
    Column("issued", _field("issued"), keep=30),
    Column("reserved", _field("reserved"), keep=20),
    Column("starts", _time("issueStartsAt"), keep=60, raw=_raw("issueStartsAt")),
    Column("ends", _time("issueEndsAt"), keep=70, raw=_raw("issueEndsAt")),
)
ISSUE_COLUMNS = (
    Column("issue", _field("issueId"), keep=100),
    Column("user", _field("userId"), keep=95),
    Column("status", _field("status"), keep=90),
    Column("issued at", _time("issuedAt"), keep=60, raw=_raw("issuedAt")),
    Column("expires at", _time("expiresAt"), keep=40, raw=_raw("expiresAt")),
    Column("request", _field("requestId"), keep=70),
)
COUPON_FIELDS = ("name", "totalQuantity", "remainingQuantity", "issued", "reserved", "issueStartsAt", "issueEndsAt",
                 "validUntil", "validDays", "reissueAfterCancel", "closed")  # fmt: skip
BORDER = 3  # what a column adds to a Rich table's width: a space each side and a rule
NAME_AT_LEAST = 12  # a wrapping column never gets narrower


class Printer:
    """Prints each kind of answer in one ``Format``, to standard output."""

    def __init__(self, form: Format, out: TextIO | None = None) -> None:
        self.form = form
        self._out = out or sys.stdout

    def document(self, document: Any) -> None:
        """Any JSON document, in the JSON form: one line."""
        self._out.write(json.dumps(document) + "\n")
        self._out.flush()

    def coupon(self, coupon: Document, now: datetime) -> None:
        """A coupon: the API's document with what the command reads of it (its state now, the
        stock left), in every form."""
        seen = _with_state(coupon, now)
        fields = {name: seen[name] for name in ("couponId", "state", "stockLeft", *COUPON_FIELDS)}
        self.pairs(f"coupon {coupon['couponId']}", seen, fields)

    def coupons(self, page: Document, now: datetime) -> None:
        coupons = [_with_state(coupon, now) for coupon in page["coupons"]]
        self._list({**page, "coupons": coupons}, coupons, COUPON_COLUMNS, now, "coupons list")

    def issues(self, page: Document, coupon_id: int, now: datetime) -> None:
        self._list(page, page["issues"], ISSUE_COLUMNS, now, f"coupons issues {coupon_id}")

    def pairs(self, title: str, document: Document, fields: dict[str, Any], *, sentence: bool = False) -> None:
        """A document the API answered (JSON), or the ``fields`` a person or a script reads of it;
        for a person, a table under ``title``, or ``title`` alone when it says it all (``sentence``)."""
        if self.form is Format.JSON:
            self.document(document)
        elif self.form is Format.TEXT:
            self._pairs(fields)
        elif sentence:
            self._out.write(title + "\n")
        else:
            self._key_values(title, fields)

    def _list(self, page: Document, records: Sequence[Document], columns: Sequence[Column], now: datetime,
              command: str) -> None:  # fmt: skip
        if self.form is Format.JSON:
            self.document(page)
            return
        if self.form is Format.TEXT:
            for record in records:
                self._out.write("\t".join(_text_cell(column, record, now) for column in columns) + "\n")
            return
        console = _console(self._out)
        cells = [[column.cell(record, now) for column in columns] for record in records]
        shown = fitted(columns, cells, console.width)
        _draw(console, [columns[i].header for i in shown], [[row[i] for i in shown] for row in cells],
              [columns[i].wraps for i in shown])  # fmt: skip
        if left_out := [column.header for i, column in enumerate(columns) if i not in shown]:
            console.print(f"left out at {console.width} columns: {', '.join(left_out)} (a wider terminal, "
                          "or --output text or json, shows every column)", style="dim")  # fmt: skip
        if page.get("next") is not None:
            self._out.write(f"more: {command} --after {page['next']}\n")

    def _pairs(self, fields: dict[str, Any]) -> None:
        for name, value in fields.items():
            self._out.write(f"{name}\t{'' if value is None else value}\n")

    def _key_values(self, title: str, fields: dict[str, Any]) -> None:
        console = _console(self._out)
        _draw(console, [title, ""], [[name, "" if value is None else str(value)] for name, value in fields.items()],
              [False, True])  # fmt: skip


def _with_state(coupon: Document, now: datetime) -> Document:
    """The API's coupon with its state at ``now`` and the stock left, as the table shows them."""
    return {**coupon, "state": sale.state(coupon, now), "stockLeft": sale.stock_left(coupon)}


def _text_cell(column: Column, record: Document, now: datetime) -> str:
    return column.raw(record) if column.raw is not None else column.cell(record, now)


def fitted(columns: Sequence[Column], cells: Sequence[Sequence[str]], width: int) -> list[int]:
    """The indexes of the columns that fit ``width`` whole, in their order: the least kept are
    left out until the rest fit (a wrapping column counts at its narrowest)."""
    needs = []
    for i, column in enumerate(columns):
        widest = max([len(column.header), *(len(row[i]) for row in cells)])
        needs.append(min(widest, NAME_AT_LEAST) if column.wraps else widest)
    shown = list(range(len(columns)))
    while len(shown) > 1 and sum(needs[i] + BORDER for i in shown) + 1 > width:
        shown.remove(min(shown, key=lambda i: columns[i].keep))
    return shown


def _draw(console: Console, headers: list[str], rows: list[list[str]], wraps: list[bool]) -> None:
    from rich.table import Table  # noqa: PLC0415 -- only a table pays for Rich

    table = Table()
    for header, wrap in zip(headers, wraps, strict=True):
        table.add_column(header, no_wrap=not wrap, overflow="fold", min_width=min(len(header), NAME_AT_LEAST))
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _console(out: TextIO) -> Console:
    from rich.console import Console  # noqa: PLC0415 -- only a table pays for Rich

    return Console(file=out)
