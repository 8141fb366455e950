"""One click's claim, as the API asks a client to make it: docs/frontend.md, The retry contract.

The same decisions as the browser's client (``web/coupon-client.js``), and held to the same
scenarios (``web/test/retry-contract.json``): one ``Idempotency-Key`` per click; an answer that
says nothing was reserved (408, 429, 503 UNAVAILABLE) is waited out (``Retry-After``, with
jitter and a cap) and sent again with the key; a lost answer (503 UNCONFIRMED, any other 5xx, no
answer) is settled on the status route before anything is sent again; a 401 is sent once more.
:func:`claim` runs it over any ``request`` function (``ApiClient.request``), so its tests need no
server.
"""

from __future__ import annotations

import random as _random
import re
import time
import uuid
from calendar import timegm
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, StrEnum, auto
from http import HTTPStatus
from typing import Any, Protocol

MAX_SENDS = 5  # how many times one click's request is sent at most
WAIT_S = 1.0  # the wait when an answer names none
JITTER = 1.5  # a wait is the asked one times 1 to this ...
MAX_WAIT_S = 5.0  # ... and never longer than this, jitter included
STATUS_ASKS = 10  # how many times one click asks the status route at most
TIMEOUT_S = 10.0  # a request of a claim unanswered this long has no answer (ApiClient.request_coupon)

HELD = frozenset({"ISSUED", "USED", "EXPIRED"})  # the user holds the copy, or held it (PENDING is polled)
RELEASED = frozenset({"CANCELED", "FAILED"})  # accepted earlier; the copy is no longer the user's
RETRY_LATER = frozenset({HTTPStatus.REQUEST_TIMEOUT, HTTPStatus.TOO_MANY_REQUESTS})


class Kind(StrEnum):
    """How a click ended (the browser client's ``ClaimKind``)."""

    SUCCESS = "success"  # reserved and durably queued (202)
    HELD = "held"  # a lost answer; the status route says the user holds the copy, or held it
    RELEASED = "released"  # a lost answer; accepted, and the copy is no longer the user's
    REFUSED = "refused"  # the API's final word
    UNAVAILABLE = "unavailable"  # still nothing reserved after every send
    UNKNOWN = "unknown"  # a lost answer the status route could not settle: it may have been accepted


class Step(Enum):
    """What an answer means to the click (docs/frontend.md, the table's last column)."""

    SUCCESS = auto()  # 202: the click ends, a success
    REFUSED = auto()  # the API's final word
    REFRESH = auto()  # 401: signed afresh and sent once more
    RETRY = auto()  # nothing was reserved: wait, send again
    LOST = auto()  # it may have been accepted: the status route settles it
    NONE = auto()  # status NONE: nothing is held
    PENDING = auto()  # status PENDING: reserved, being persisted
    HELD = auto()  # status ISSUED, USED, EXPIRED
    RELEASED = auto()  # status CANCELED, FAILED
    ASK_AGAIN = auto()  # the status route could not say


class Answer(Protocol):
    """What :func:`claim` reads of an answer (``api_client.Reply``); ``status_code`` 0: none came."""

    @property
    def status_code(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def retry_after_s(self) -> float | None: ...


Request = Callable[..., Any]  # ApiClient.request: (method, path, body=None, *, headers=None) -> Reply


@dataclass(frozen=True)
class Claim:
    """A click's end: its kind; ``reply``, the claim's own last answer (its headers name the
    request at API Gateway); ``state``, the status route's word when it settled a lost answer;
    how many times it was sent, and how long it took."""

    kind: Kind
    reply: Any
    attempts: int
    seconds: float
    state: str | None = None

    @property
    def status(self) -> str:
        """What the click came to in the API's words: the status route's state for a lost answer
        it settled, else the last answer's status."""
        return self.state if self.state is not None else str(self.reply.status)


_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_LONG_DAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH = f"({'|'.join(_MONTHS)})"
_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2})"
_IMF_FIXDATE = re.compile(rf"{_DAY}, ([0-9]{{2}}) {_MONTH} ([0-9]{{4}}) {_TIME} GMT")
_RFC850_DATE = re.compile(rf"{_LONG_DAY}, ([0-9]{{2}})-{_MONTH}-([0-9]{{2}}) {_TIME} GMT")
_ASCTIME_DATE = re.compile(rf"{_DAY} {_MONTH} ([0-9]{{2}}| [0-9]) {_TIME} ([0-9]{{4}})")
_DELAY_SECONDS = re.compile(r"[0-9]+")


def http_date(text: str, now: float) -> float | None:
    """An HTTP-date (RFC 9110, 5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms a
    recipient must accept) as epoch seconds; None for anything else. ``now`` (epoch seconds) places
    an RFC 850 date's two-digit year: one more than 50 years ahead is the most recent past one."""
    if found := _IMF_FIXDATE.fullmatch(text):
        day, month, year, hour, minute, second = found.groups()
    elif found := _ASCTIME_DATE.fullmatch(text):
        month, day, hour, minute, second, year = found.groups()
    elif found := _RFC850_DATE.fullmatch(text):
        day, month, short, hour, minute, second = found.groups()
        this_year = time.gmtime(now).tm_year
        full = this_year - this_year % 100 + int(short)
        year = str(full - 100 if full > this_year + 50 else full)
    else:
        return None
    d, h, m, s = int(day), int(hour), int(minute), int(second)
    if not 1 <= d <= 31 or h > 23 or m > 59 or s > 60:
        return None
    return float(timegm((int(year), _MONTHS.index(month) + 1, d, h, m, s)))


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds (RFC 9110, 10.2.3): delay-seconds
    (one or more ASCII digits) or an HTTP-date counted from ``now`` (epoch seconds); None without
    one, or for one that is neither ("1.5", "-1", "soon")."""
    if value is None:
        return None
    text = value.strip()
    if _DELAY_SECONDS.fullmatch(text):
        return float(text)
    when = http_date(text, now)
    return None if when is None else max(when - now, 0.0)


def wait_seconds(asked_s: float | None, random: float) -> float:
    """The wait before asking again: the asked one (``WAIT_S`` without one) times 1 to ``JITTER``
    (``random``, 0 to 1), at most ``MAX_WAIT_S``."""
    return min((WAIT_S if asked_s is None else asked_s) * (1 + (JITTER - 1) * random), MAX_WAIT_S)


def after_claim(answer: Answer) -> Step:
    """What an answer to the claim means."""
    code = answer.status_code
    if code == HTTPStatus.ACCEPTED:
        return Step.SUCCESS
    if code == HTTPStatus.UNAUTHORIZED:
        return Step.REFRESH
    if code in RETRY_LATER or (code == HTTPStatus.SERVICE_UNAVAILABLE and answer.status == "UNAVAILABLE"):
        return Step.RETRY
    if HTTPStatus.BAD_REQUEST <= code < HTTPStatus.INTERNAL_SERVER_ERROR:
        return Step.REFUSED
    return Step.LOST  # no answer, a 5xx but 503 UNAVAILABLE, or an answer the contract does not know


def after_status(answer: Answer) -> Step:
    """What the status route's answer means after a lost answer (only a 200 carries a state)."""
    state = answer.status if answer.status_code == HTTPStatus.OK else None
    if state == "NONE":
        return Step.NONE
    if state == "PENDING":
        return Step.PENDING
    if state in HELD:
        return Step.HELD
    if state in RELEASED:
        return Step.RELEASED
    return Step.ASK_AGAIN


def claim(
    request: Request,
    coupon_id: int,
    user_id: int,
    *,
    sleep: Callable[[float], None] = time.sleep,
    random: Callable[[], float] = _random.random,
    clock: Callable[[], float] = time.perf_counter,
    key: str | None = None,
) -> Claim:
    """One click: ``POST /coupon-issues`` through ``request`` with one ``Idempotency-Key`` (``key``,
    a new UUID by default), until its answer is known (the module's docstring)."""
    started = clock()
    path, body = "/coupon-issues", {"couponId": coupon_id, "userId": user_id}
    headers = {"Idempotency-Key": key or str(uuid.uuid4())}
    status_path = f"/coupons/{coupon_id}/issues/{user_id}"
    asks, refreshed, sends = STATUS_ASKS, False, 0

    def end(kind: Kind, reply: Any, state: str | None = None) -> Claim:
        return Claim(kind, reply, sends, clock() - started, state)

    def wait(answer: Answer) -> None:
        sleep(wait_seconds(answer.retry_after_s, random()))

    while True:
        reply = request("POST", path, body, headers=headers)
        sends += 1
        step = after_claim(reply)
        if step is Step.SUCCESS:
            return end(Kind.SUCCESS, reply)
        if step is Step.REFRESH and not refreshed and sends < MAX_SENDS:
            refreshed = True  # a token or credentials that expired: signed afresh, sent at once
            continue
        if step in (Step.REFUSED, Step.REFRESH):
            return end(Kind.REFUSED, reply)
        if step is Step.LOST:  # settled on the status route before anything is sent again
            said, settled = None, Step.ASK_AGAIN
            while asks > 0:
                if said is not None:
                    wait(said)
                said = request("GET", status_path)
                asks -= 1
                settled = after_status(said)
                if settled in (Step.HELD, Step.RELEASED, Step.NONE):
                    break
            if said is not None and settled in (Step.HELD, Step.PENDING):  # PENDING: when the asks ran out
                return end(Kind.HELD, reply, said.status)
            if said is not None and settled is Step.RELEASED:
                return end(Kind.RELEASED, reply, said.status)
            if settled is not Step.NONE or sends >= MAX_SENDS:  # asks spent, or the last send may still run
                return end(Kind.UNKNOWN, reply)
        if sends >= MAX_SENDS:
            return end(Kind.UNAVAILABLE, reply)
        wait(reply)
