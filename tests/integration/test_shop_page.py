"""The shop's page in a real browser: ``web/shop.html``, served by the local stack from its own
origin, watches a sale and claims coupons through LocalStack's API Gateway with the reference
client, in headless Chromium. Every answer a shopper meets is read by the page (CORS: the
preflight answered by API Gateway, the headers on the functions' answers, ``Retry-After``
exposed); a page from an origin the environment does not list reads none.

Most pages run on Chromium's virtual time (a wait costs none), whose clock runs ahead of the
server's; the page opened before the window runs in real time (``live_dom``), its click at the
opening on the server's clock. The opening to the millisecond is also tested in Node on a
scripted clock (web/test/). LocalStack's API Gateway caches nothing and its free
edition has no CloudFront: the pages read the API itself, and tests/infra/test_edge.py holds the
edge's settings."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from local.stack import control as stack
from local.stack.processes import free_port, port_open
from local.testkit.browser import live_dom, served_dom
from local.testkit.fault_proxy import FaultProxy
from local.testkit.stores import WholeStore
from lua_redis.keys import build_claim_key, meta_key

RESULTS = re.compile(r'<pre id="results">(.*?)</pre>', re.S)
STATES = re.compile(r'<pre id="states">(.*?)</pre>', re.S)
SALE = re.compile(r'<p id="sale"[^>]*>(.*?)</p>', re.S)
FUNCTION_CACHE_S = 1.1  # the coupons function keeps a sale's read a second (availability.AVAILABILITY_MS)


def open_coupon(live, total: int, *, opens_in: timedelta = timedelta(minutes=-1)) -> int:
    starts = datetime.now(UTC) + opens_in
    body = {"name": "shop page", "totalQuantity": total, "issueStartsAt": starts.isoformat(),
            "issueEndsAt": (starts + timedelta(hours=1)).isoformat()}  # fmt: skip
    answer = live.api.request("POST", "/coupons", body)
    assert answer.status_code == 201, answer
    return int(answer.body["couponId"])


def page(api_url: str, coupon: int, user: int, *, clicks: int = 1, origin: str = stack.SHOP_ORIGIN) -> str:
    """The DOM of the page at ``origin`` once it clicked ``clicks`` times."""
    query = urlencode({"api": api_url, "coupon": coupon, "user": user, "clicks": clicks})
    dom = served_dom(f"{origin}/shop.html?{query}")
    assert 'data-done="true"' in dom, dom[-2000:]
    return dom


def read(pattern: re.Pattern[str], dom: str) -> Any:
    found = pattern.search(dom)
    assert found, dom[-2000:]
    text = html.unescape(found[1])
    return text if pattern is SALE else json.loads(text)


def claims(api_url: str, coupon: int, user: int, *, clicks: int = 1, origin: str = stack.SHOP_ORIGIN) -> list[Any]:
    """What the page at ``origin`` read of ``clicks`` claims, one result each."""
    return list(read(RESULTS, page(api_url, coupon, user, clicks=clicks, origin=origin)))


@pytest.fixture(scope="module")
def api_url(live) -> str:
    assert port_open(urlsplit(stack.SHOP_ORIGIN).port or 80), "the shop page is not served: make down, make up"
    return live.env["API_URL"]


def test_an_open_sales_page_reads_a_success_then_the_users_duplicate_and_a_sold_out_page_sends_nothing(live, api_url):
    coupon = open_coupon(live, 1)

    opened = page(api_url, coupon, 11, clicks=2)
    time.sleep(FUNCTION_CACHE_S)  # every container's read of the sale taken after the sell-out
    sold_out = page(api_url, coupon, 12)

    first, second = read(RESULTS, opened)
    assert (first["kind"], first["status"], first["httpStatus"], first["attempts"]) == ("success", "SUCCESS", 202, 1)
    assert first["requestId"]
    assert first["reservedAt"]
    assert (second["kind"], second["status"], second["httpStatus"]) == ("refused", "DUPLICATE", 409)
    assert read(STATES, opened)[0] == "OPEN"
    assert (read(RESULTS, sold_out), read(STATES, sold_out), read(SALE, sold_out)) == (
        [{"kind": "not sent", "state": "SOLD_OUT"}], ["SOLD_OUT"], "Sold out"
    )  # fmt: skip
    store = WholeStore(live.redis)
    assert (store.reserved_count(coupon), store.reservation_time(coupon, 12)) == (1, None)


def test_a_page_before_the_window_counts_down_to_the_servers_opening_and_sends_nothing(live, api_url):
    coupon = open_coupon(live, 5, opens_in=timedelta(hours=1))

    before = page(api_url, coupon, 11)

    assert read(RESULTS, before) == [{"kind": "not sent", "state": "NOT_OPEN"}]
    assert read(STATES, before) == ["NOT_OPEN"]
    # an hour away on the server's clock, less the page's virtual minutes
    assert re.fullmatch(r"Opens in 5[6-9]:[0-5]\d\.\d \(.+\)", read(SALE, before)), read(SALE, before)
    assert WholeStore(live.redis).reservation_time(coupon, 11) is None


def test_a_page_opened_before_the_window_counts_down_and_its_click_at_the_opening_succeeds(live, api_url):
    """In real time: the page reads NOT_OPEN, counts down on the server's clock (the stack's
    Redis), enables its button at the opening and clicks then, as a shopper would; the click is
    the sale's first SUCCESS, reserved at or after the opening, never refused NOT_OPEN."""
    opens_in = timedelta(seconds=12)  # past a cold coupons function's first answer
    coupon = open_coupon(live, 5, opens_in=opens_in)
    starts_at = live.api.request("GET", f"/coupons/{coupon}/availability").body["startsAt"]
    query = urlencode({"api": api_url, "coupon": coupon, "user": 11, "clickAt": "opening"})

    dom = live_dom(f"{stack.SHOP_ORIGIN}/shop.html?{query}", ready="document.body.dataset.done === 'true'")

    (claim,) = read(RESULTS, dom)
    assert (claim["kind"], claim["status"], claim["attempts"]) == ("success", "SUCCESS", 1), claim
    assert read(STATES, dom)[:2] == ["NOT_OPEN", "OPEN"]
    reserved_at = WholeStore(live.redis).reservation_time(coupon, 11)
    assert reserved_at is not None
    assert reserved_at >= datetime.fromisoformat(starts_at).timestamp() * 1000  # Redis' clock said open


def test_the_page_reads_a_bad_request(live, api_url):
    coupon = open_coupon(live, 5)

    (invalid,) = claims(api_url, coupon, 0)  # no user 0: the request is malformed

    assert (invalid["kind"], invalid["status"], invalid["httpStatus"]) == ("refused", "INVALID_REQUEST", 422)
    assert "userId" in invalid["error"]


def test_the_page_reads_a_503_and_its_retry_after(live, api_url):
    """A coupon whose state another caller is building answers 503 with Retry-After: the client
    waits it out (the browser's timers on virtual time), tries again with the same key, and after
    its attempts says nothing was reserved; Retry-After is readable only because it is exposed.
    The page shows each wait, its button disabled while the claim runs."""
    coupon = open_coupon(live, 5)
    live.redis.delete(meta_key(coupon))  # the state lost ...
    live.redis.set(build_claim_key(coupon), "1", px=120_000)  # ... and another caller building it
    try:
        (busy,) = claims(api_url, coupon, 11)
    finally:
        live.redis.delete(build_claim_key(coupon))

    assert (busy["kind"], busy["status"], busy["httpStatus"], busy["attempts"]) == (
        "unavailable",
        "UNAVAILABLE",
        503,
        5,
    )
    assert busy["retryAfterMs"] == 1000
    assert [(wait["status"], wait["buttonDisabled"]) for wait in busy["waits"]] == [("UNAVAILABLE", True)] * 4
    assert all(1000 <= wait["ms"] <= 1500 for wait in busy["waits"])
    assert WholeStore(live.redis).reservation_time(coupon, 11) is None


def test_a_lost_answer_keeps_one_reservation(live, api_url):
    """The answer never reaches the page (the connection dropped after the intake ran; Chromium
    sends a POST again itself when a reused connection drops, as the watch's polls leave some
    to reuse, so every reply to it is lost): the client asks the status route before sending
    again, finds the user holding the copy, and stops."""
    coupon = open_coupon(live, 5)
    endpoint = urlsplit(api_url)
    with FaultProxy(endpoint.hostname or "127.0.0.1", endpoint.port or 80) as proxy:
        proxy.lose_reply_to(f'"userId":{21}}}'.encode(), times=10)
        proxied = api_url.replace(endpoint.netloc, f"127.0.0.1:{proxy.port}")

        (lost,) = claims(proxied, coupon, 21)

    assert proxy.replies_lost >= 1
    assert lost["kind"] == "held", lost
    assert lost["status"] in {"PENDING", "ISSUED"}
    assert lost["attempts"] == 1
    assert WholeStore(live.redis).reserved_count(coupon) == 1


def test_a_page_from_an_origin_not_listed_reads_nothing(live, api_url):
    """The same page served from another origin: the browser hides every answer (no CORS header
    for it), so the client sees no answer at all, and says it cannot tell: the request itself
    may have run."""
    port = free_port()
    command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(stack.WEB)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not port_open(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        coupon = open_coupon(live, 5)

        (blocked,) = claims(api_url, coupon, 31, origin=f"http://127.0.0.1:{port}")
    finally:
        server.terminate()
        server.wait(timeout=10)

    assert (blocked["kind"], blocked["httpStatus"]) == ("unknown", 0)
    assert "Failed to fetch" in blocked["error"]


def test_the_shop_origin_is_one_the_local_environment_lists():
    context = json.loads((Path(stack.ROOT) / "cdk.json").read_text())["context"]["coupon:environments"]
    assert context["local"]["api"]["corsOrigins"][0] == stack.SHOP_ORIGIN
