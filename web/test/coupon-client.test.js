// The reference client against a scripted fetch: `node --test web/test/` (tests/processes/
// test_web_client.py runs it with the processes tier). Every scenario of the retry contract
// (retry-contract.json, which the Python client runs too), then what only a browser client has:
// the token, the timeout and abort, one claim per coupon in flight, the warm-ups.
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  CouponClient,
  afterClaim,
  afterStatus,
  MAX_SENDS,
  OFFSET_SAMPLES,
  PREFLIGHT_REFRESH_MS,
  TIMEOUT_MS,
  WATCH_FAR_MS,
  WATCH_MS,
  WATCH_NEAR_MS,
  httpDateMs,
  nextWatchMs,
  retryAfterMs,
  saleStateAt,
} from "../coupon-client.js";

const URL = "https://api.example.com/prod";
const CONTRACT = JSON.parse(readFileSync(new globalThis.URL("./retry-contract.json", import.meta.url), "utf8"));
const NOW = Date.parse(CONTRACT.now);

/** A fetch that answers the n-th call with `answers[n]` (the last one once they run out): "no answer",
 *  a Response, or [status, body (sent as JSON), headers]. */
function scripted(answers) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, ...init });
    const answer = answers[Math.min(calls.length, answers.length) - 1];
    if (answer === "no answer") throw new TypeError("Failed to fetch");
    if (answer instanceof Response) return answer;
    const [status, body, headers = {}] = answer;
    return new Response(JSON.stringify(body), { status, headers });
  };
  return { fetch, calls };
}

function client(fetch, waits = [], options = {}) {
  let n = 0;
  return new CouponClient({
    baseUrl: `${URL}/`,
    fetch,
    sleep: async (ms) => void waits.push(ms),
    random: () => 1,
    now: () => NOW,
    newKey: () => `key-${(n += 1)}`,
    ...options,
  });
}

for (const scenario of CONTRACT.scenarios) {
  test(`contract (${scenario.row}): ${scenario.name}`, async () => {
    const waits = [];
    const { fetch, calls } = scripted(scenario.answers);
    const result = await client(fetch, waits).claim(3, 7);

    assert.deepEqual(calls.map((call) => call.method), scenario.requests);
    assert.deepEqual(waits, scenario.waits);
    assert.equal(result.kind, scenario.kind);
    assert.equal(result.status, scenario.status);
    assert.equal(result.attempts, scenario.attempts);
    if ("retryAfterMs" in scenario) assert.equal(result.retryAfterMs, scenario.retryAfterMs);
    const posts = calls.filter((call) => call.method === "POST");
    assert.deepEqual(new Set(posts.map((call) => call.headers["Idempotency-Key"])), new Set(["key-1"]));
    for (const post of posts) {
      assert.equal(post.url, `${URL}/coupon-issues`);
      assert.deepEqual(JSON.parse(post.body), { couponId: 3, userId: 7 });
      assert.equal(post.headers["Content-Type"], "application/json");
    }
    for (const get of calls.filter((call) => call.method === "GET")) {
      assert.equal(get.url, `${URL}/coupons/3/issues/7`);
      assert.equal(get.body, undefined);
      assert.deepEqual(get.headers, {});
    }
  });
}

test("contract: Retry-After is read as RFC 9110 allows and nothing else", () => {
  for (const [value, ms] of CONTRACT.retryAfter) assert.equal(retryAfterMs(value, NOW), ms, `Retry-After: ${value}`);
  assert.equal(retryAfterMs(undefined, NOW), null);
});

test("contract: an HTTP-date of every month", () => {
  for (const [text, ms] of CONTRACT.httpDates) assert.equal(httpDateMs(text, NOW), ms, text);
});

test("an RFC 850 date's two-digit year more than 50 years ahead is the most recent past one", () => {
  const now = Date.parse("Sun, 06 Dec 2026 00:00:00 GMT");
  assert.equal(new Date(httpDateMs("Sunday, 06-Nov-94 08:49:37 GMT", now)).getUTCFullYear(), 1994);
  assert.equal(new Date(httpDateMs("Sunday, 06-Nov-76 08:49:37 GMT", now)).getUTCFullYear(), 2076);
  assert.equal(new Date(httpDateMs("Sunday, 06-Nov-77 08:49:37 GMT", now)).getUTCFullYear(), 1977);
});

test("a success reports its request id and reservation time", async () => {
  const { fetch } = scripted(CONTRACT.scenarios[0].answers);
  const result = await client(fetch).claim(3, 7);
  assert.deepEqual(result, {
    kind: "success", status: "SUCCESS", httpStatus: 202, attempts: 1,
    requestId: "6f1c1f9e-0000-4000-8000-000000000001", reservedAt: "2026-12-24T12:00:00.123+00:00",
  });
});

test("a held copy reports the status route's state and the lost answer's error", async () => {
  const { fetch } = scripted([[503, { status: "UNCONFIRMED", error: "timed out" }], [200, { status: "ISSUED" }]]);
  const result = await client(fetch).claim(3, 7);
  assert.deepEqual(result, { kind: "held", status: "ISSUED", httpStatus: 200, attempts: 1, error: "timed out" });
});

test("the token is asked before every request, the status route's included, and afresh once after a 401", async () => {
  const asked = [];
  const getToken = async ({ forceRefresh }) => {
    asked.push(forceRefresh);
    return forceRefresh ? "fresh" : "stale";
  };
  const { fetch, calls } = scripted([[401, { status: "UNAUTHORIZED", error: "Unauthorized" }], "no answer",
    [200, { status: "NONE" }], CONTRACT.scenarios[0].answers[0]]);
  const result = await client(fetch, [], { getToken }).claim(3, 7);
  assert.equal(result.kind, "success");
  // a fresh token for the send right after the 401 only: a burst's resends do not each refresh it
  assert.deepEqual(calls.map((call) => call.headers.Authorization), ["stale", "fresh", "stale", "stale"]);
  assert.deepEqual(asked, [false, true, false, false]);
});

test("a token that never comes is a request without an answer, and an abort while it is asked rejects", async () => {
  const { fetch, calls } = scripted([[200, { status: "ISSUED" }]]);
  let asks = 0;
  const getToken = () => (asks++ === 0 ? new Promise(() => {}) : "token");
  const result = await client(fetch, [], { getToken, timeoutMs: 5 }).claim(3, 7);
  assert.equal(result.kind, "held"); // the POST never went: no answer, then the status route said ISSUED
  assert.deepEqual(calls.map((call) => call.method), ["GET"]);

  const controller = new AbortController();
  const slow = () => new Promise((resolve) => setTimeout(() => resolve("token"), 50));
  const claimed = client(fetch, [], { getToken: slow }).claim(3, 8, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error("left while signing in")), 10);
  await assert.rejects(claimed, /left while signing in/);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(calls.length, 1); // nothing sent after the abort
});

test("a token that fails to come is a request without an answer", async () => {
  const { fetch, calls } = scripted([[200, { status: "NONE" }], CONTRACT.scenarios[0].answers[0]]);
  let asks = 0;
  const getToken = async () => {
    if (asks++ === 0) throw new Error("network error refreshing the token");
    return "token";
  };
  const result = await client(fetch, [], { getToken }).claim(3, 7);
  assert.equal(result.kind, "success");
  assert.deepEqual(calls.map((call) => call.method), ["GET", "POST"]);
});

test("without a token no Authorization is sent", async () => {
  const { fetch, calls } = scripted(CONTRACT.scenarios[0].answers);
  await client(fetch).claim(3, 7);
  assert.equal("Authorization" in calls[0].headers, false);
});

test("each click has its own key, a UUID by default", async () => {
  const { fetch, calls } = scripted(CONTRACT.scenarios[0].answers);
  const api = new CouponClient({ baseUrl: URL, fetch });
  await api.claim(3, 7);
  await api.claim(3, 7);
  const keys = calls.map((call) => call.headers["Idempotency-Key"]);
  assert.notEqual(keys[0], keys[1]);
  for (const key of keys) assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test("a plain-http page, without crypto.randomUUID, still makes version 4 UUIDs", async () => {
  const randomUUID = crypto.randomUUID;
  Object.defineProperty(crypto, "randomUUID", { value: undefined, configurable: true });
  try {
    const { fetch, calls } = scripted(CONTRACT.scenarios[0].answers);
    const api = new CouponClient({ baseUrl: URL, fetch });
    await api.claim(3, 7);
    await api.claim(3, 8);
    const [first, second] = calls.map((call) => call.headers["Idempotency-Key"]);
    assert.match(first, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(first, second);
  } finally {
    Object.defineProperty(crypto, "randomUUID", { value: randomUUID, configurable: true });
  }
});

test("a second click while the first is running joins it: one key, one answer", async () => {
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const calls = [];
  const fetch = async (url, init) => {
    calls.push(init);
    await gate;
    return new Response(JSON.stringify(CONTRACT.scenarios[0].answers[0][1]), { status: 202 });
  };
  const api = client(fetch);
  const first = api.claim(3, 7);
  const second = api.claim(3, 7);
  const other = api.claim(4, 7);
  release();
  assert.equal(first, second);
  assert.deepEqual(await first, await second);
  await other;
  assert.equal(calls.length, 2);
  assert.notEqual(calls[0].headers["Idempotency-Key"], calls[1].headers["Idempotency-Key"]);
  await api.claim(3, 7); // once settled, a new click is a new claim
  assert.equal(calls.length, 3);
});

test("a request with no answer within the timeout is a lost answer", async () => {
  const calls = [];
  const fetch = (url, init) => {
    calls.push(init);
    if (calls.length > 1) return Promise.resolve(new Response(JSON.stringify({ status: "ISSUED" }), { status: 200 }));
    return new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason)));
  };
  const result = await client(fetch, [], { timeoutMs: 5 }).claim(3, 7);
  assert.equal(result.kind, "held");
  assert.equal(result.error, "no answer in 5 ms");
  assert.deepEqual(calls.map((call) => call.method), ["POST", "GET"]);
  assert.equal(TIMEOUT_MS, 10_000);
});

test("aborting a claim aborts its request in flight, the status route's too, and rejects the claim", async () => {
  for (const [answers, aborted] of [[[], "POST"], [["no answer"], "GET"]]) {
    const controller = new AbortController();
    const calls = [];
    const fetch = (url, init) => {
      calls.push(init);
      if (calls.length <= answers.length) return Promise.reject(new TypeError("Failed to fetch"));
      return new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason)));
    };
    const claimed = client(fetch, [], { timeoutMs: 60_000 }).claim(3, 7, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error("the shopper left"));
    assert.equal(calls.at(-1).method, aborted);
    assert.equal(calls.at(-1).signal.aborted, true);
    await assert.rejects(claimed, /the shopper left/);
  }
});

// The waits here are 5 s; the test's timeout fails it if an abort does not cut them short.
test("a wait is a real timer by default, cut short by an abort", { timeout: 2_000 }, async () => {
  const controller = new AbortController();
  const { fetch, calls } = scripted([[429, { status: "THROTTLED" }, { "Retry-After": "0" }],
    [503, { status: "UNAVAILABLE" }, { "Retry-After": "3600" }]]);
  const claimed = new CouponClient({ baseUrl: URL, fetch }).claim(3, 7, { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(calls.length, 2); // the 0 ms wait ran; the second is 5 s
  controller.abort(new Error("gone"));
  await assert.rejects(claimed, /gone/);
  const aborted = new AbortController();
  aborted.abort(new Error("already gone"));
  await assert.rejects(new CouponClient({ baseUrl: URL, fetch }).claim(3, 8, { signal: aborted.signal }), /already gone/);
  assert.equal(calls.length, 2);
  const late = new AbortController(); // aborted as the page is told of the wait, before it starts
  const onWait = () => late.abort(new Error("left while told"));
  await assert.rejects(new CouponClient({ baseUrl: URL, fetch, onWait }).claim(3, 9, { signal: late.signal }), /left/);
});

test("a real timer needs no signal", async () => {
  const { fetch, calls } = scripted([[429, { status: "THROTTLED" }, { "Retry-After": "0" }], CONTRACT.scenarios[0].answers[0]]);
  assert.equal((await new CouponClient({ baseUrl: URL, fetch }).claim(3, 7)).kind, "success");
  assert.equal(calls.length, 2);
});

test("keepWarm's first warm-up carries the page's signal", async () => {
  const controller = new AbortController();
  const calls = [];
  const fetch = (url, init) => {
    calls.push(init);
    return new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason)));
  };
  const warming = new CouponClient({ baseUrl: URL, fetch }).keepWarm({ signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 5));
  controller.abort(new Error("the page closed"));
  await assert.rejects(warming, /the page closed/);
  assert.equal(calls.length, 1);
});

test("a fetch that fails with something other than an Error is no answer, said as text", async () => {
  const fetch = async () => {
    throw "offline"; // eslint-disable-line no-throw-literal
  };
  const result = await client(fetch).claim(3, 7);
  assert.equal(result.kind, "unknown");
  assert.equal(result.error, "offline");
});

test("aborting a claim rejects it with the signal's reason, and sends nothing more", async () => {
  const controller = new AbortController();
  const calls = [];
  const fetch = async (url, init) => {
    calls.push(init);
    controller.abort(new Error("the shopper left"));
    return new Response(JSON.stringify({ status: "UNAVAILABLE" }), { status: 503 });
  };
  const api = new CouponClient({ baseUrl: URL, fetch, random: () => 0 });
  await assert.rejects(api.claim(3, 7, { signal: controller.signal }), /the shopper left/);
  assert.equal(calls.length, 1);
  await assert.rejects(api.claim(3, 7, { signal: controller.signal }), /the shopper left/);
  assert.equal(calls.length, 1);
});

test("every wait is told to the page before it starts", async () => {
  const told = [];
  const { fetch } = scripted([[429, { status: "THROTTLED" }, { "Retry-After": "2" }], "no answer",
    [200, { status: "NONE" }], CONTRACT.scenarios[0].answers[0]]);
  await client(fetch, [], { onWait: (wait) => told.push(wait) }).claim(3, 7);
  assert.deepEqual(told, [{ ms: 3000, status: "THROTTLED", httpStatus: 429 }, { ms: 1500, status: "", httpStatus: 0 }]);
});

test("the jitter spreads a wait from once to half as long again", async () => {
  for (const [random, expected] of [[0, 2000], [0.5, 2500]]) {
    const waits = [];
    const { fetch } = scripted([[429, { status: "THROTTLED" }, { "Retry-After": "2" }], CONTRACT.scenarios[0].answers[0]]);
    await client(fetch, waits, { random: () => random }).claim(3, 7);
    assert.deepEqual(waits, [expected]);
  }
});

test("an answer that is not JSON is read as one without a body", async () => {
  const fetch = async () => new Response("<html>Bad gateway</html>", { status: 502 });
  const waits = [];
  const result = await client(fetch, waits).claim(3, 7);
  assert.equal(result.kind, "unknown");
  assert.equal(result.httpStatus, 502);
  assert.equal(result.status, "");
});

test("new CouponClient() without a baseUrl says what it needs", () => {
  assert.throws(() => new CouponClient(), { name: "TypeError", message: /baseUrl is the API's URL/ });
  assert.throws(() => new CouponClient({}), /baseUrl/);
});

test("warmUp sends the claim's request shape with an empty body, so its preflight is the claim's", async () => {
  const { fetch, calls } = scripted([[422, { status: "INVALID_REQUEST", error: "body: Field required" }]]);
  const api = new CouponClient({ baseUrl: `${URL}//`, fetch, getToken: () => "id-token" });
  assert.equal(await api.warmUp(), 422);
  assert.equal(calls[0].method, "POST");
  assert.equal(calls[0].url, `${URL}/coupon-issues`);
  assert.match(calls[0].headers["Idempotency-Key"], /^[!-~]{1,255}$/); // a valid key: only the body is refused
  assert.equal(calls[0].body, "{}");
  assert.deepEqual(Object.keys(calls[0].headers).sort(), ["Authorization", "Content-Type", "Idempotency-Key"]);
});

test("keepWarm warms up now, then again just past Safari's ten minutes, each with the page's signal", async () => {
  const controller = new AbortController();
  const calls = [];
  let second;
  const reached = new Promise((resolve) => (second = resolve));
  const fetch = (url, init) => {
    calls.push({ url, ...init });
    if (calls.length === 1) return Promise.resolve(new Response("{}", { status: 422 }));
    second();
    return new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason)));
  };
  const slept = [];
  const sleep = async (ms) => void slept.push(ms);
  assert.equal(await new CouponClient({ baseUrl: URL, fetch, sleep }).keepWarm({ signal: controller.signal }), 422);
  await reached;
  controller.abort(new Error("the page closed"));
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(calls.length, 2);
  assert.equal(calls[1].signal.aborted, true);
  assert.deepEqual(slept, [PREFLIGHT_REFRESH_MS]);
  assert.ok(PREFLIGHT_REFRESH_MS > 600_000 && PREFLIGHT_REFRESH_MS <= 610_000);
});

test("afterClaim names what each answer to a claim means", () => {
  const meanings = [
    [202, {}, "success"], [401, {}, "refresh"], [408, {}, "retry"], [429, {}, "retry"],
    [503, { status: "UNAVAILABLE" }, "retry"], [503, { status: "UNCONFIRMED" }, "lost"], [409, {}, "refused"],
    [400, {}, "refused"], [499, {}, "refused"], [500, {}, "lost"], [502, { status: "UNAVAILABLE" }, "lost"],
    [0, {}, "lost"], [200, {}, "lost"], [399, {}, "lost"],
  ];
  for (const [httpStatus, body, meaning] of meanings) {
    assert.equal(afterClaim({ httpStatus, body }), meaning, `${httpStatus} ${JSON.stringify(body)}`);
  }
});

test("afterStatus names what each status-route answer means after a lost answer", () => {
  const meanings = [
    [200, "NONE", "none"], [200, "PENDING", "pending"], [200, "ISSUED", "held"], [200, "USED", "held"],
    [200, "EXPIRED", "held"], [200, "CANCELED", "released"], [200, "FAILED", "released"],
    [200, "SOMETHING_NEW", "ask again"], [503, "NONE", "ask again"], [0, undefined, "ask again"],
  ];
  for (const [httpStatus, status, meaning] of meanings) {
    assert.equal(afterStatus({ httpStatus, body: { status } }), meaning, `${httpStatus} ${status}`);
  }
});

test("the contract's numbers are the client's", () => {
  assert.equal(MAX_SENDS, 5);
});

// watch: a sale polled from the edge, on the server's clock.
const OPENS = Date.parse("2026-12-24T12:00:00.000Z");
const sale = (overrides = {}) => [200, {
  status: "NOT_OPEN", couponId: 3, serverTime: "2026-12-24T11:59:50.000Z", startsAt: "2026-12-24T12:00:00.000Z",
  endsAt: "2026-12-24T13:00:00.000Z", total: 100, left: 100, asOf: "2026-12-24T11:59:50.000Z", ...overrides,
}];

/** A client watching with a page clock at `pageNow()`, its sleeps moving that clock. */
function watching(answers, { pageOffsetMs = -5_000, edgeUrl = "https://edge.example.com" } = {}) {
  const { fetch, calls } = scripted(answers);
  const waits = [];
  let page = Date.parse("2026-12-24T11:59:50.000Z") + pageOffsetMs; // the page's clock: 5 s slow
  const tokens = [];
  const watcher = new CouponClient({
    baseUrl: URL, edgeUrl, fetch, now: () => page,
    getToken: (options) => void tokens.push(options),
    sleep: async (ms) => { waits.push(ms); page += ms; },
  });
  return { watcher, calls, waits, tokens, pageNow: () => page };
}

test("watch reads the sale from the edge, without a token (no preflight), and reports its offset", async () => {
  const { watcher, calls, tokens } = watching([sale(), [404, { status: "COUPON_NOT_FOUND" }]]);
  const seen = [];
  assert.equal(await watcher.watch(3, (s) => seen.push(s)), 404);
  assert.deepEqual(calls.map((call) => [call.method, call.url, call.headers]), [
    ["GET", "https://edge.example.com/coupons/3/availability", {}],
    ["GET", "https://edge.example.com/coupons/3/availability", {}],
  ]);
  assert.deepEqual(tokens, []);
  assert.deepEqual(seen, [{ state: "NOT_OPEN", startsAt: OPENS, endsAt: OPENS + 3_600_000, total: 100, left: 100,
    asOf: OPENS - 10_000, offsetMs: 5_000 }]);
});

test("an answer kept at the edge never lowers the offset: the page opens late, never early", async () => {
  const stale = sale({ serverTime: "2026-12-24T11:59:50.400Z" }); // asked 1 s later, answered as of 0.6 s before
  const { watcher } = watching([sale(), stale, sale({ serverTime: "2026-12-24T11:59:52.000Z" }), [404, {}]]);
  const offsets = [];
  await watcher.watch(3, (s) => offsets.push(s.offsetMs), { periodMs: 1_000 });
  assert.deepEqual(offsets, [5_000, 5_000, 5_000]); // 5,000, then 4,400 and 5,000 seen: the largest kept
});

test("the sale opens on the server's clock to the millisecond, and reads sold out if nothing is left", () => {
  const at = { state: "NOT_OPEN", startsAt: OPENS, endsAt: OPENS + 60_000, total: 5, left: 5, asOf: 0, offsetMs: 0 };
  assert.equal(saleStateAt(at, OPENS - 1), "NOT_OPEN");
  assert.equal(saleStateAt(at, OPENS), "OPEN");
  assert.equal(saleStateAt({ ...at, left: 0 }, OPENS), "SOLD_OUT");
  assert.equal(saleStateAt({ ...at, state: "OPEN" }, OPENS + 59_999), "OPEN");
  assert.equal(saleStateAt({ ...at, state: "SOLD_OUT" }, OPENS + 60_000), "ENDED");
  assert.equal(saleStateAt({ ...at, state: "CLOSED" }, OPENS), "CLOSED");
  assert.equal(saleStateAt({ ...at, state: "ENDED", startsAt: null, endsAt: null }, OPENS), "ENDED");
});

test("watch asks every WATCH_FAR_MS while the opening is far, never sleeping past its last minute", () => {
  const at = { state: "NOT_OPEN", startsAt: OPENS, endsAt: OPENS + 60_000, total: 5, left: 5, asOf: 0, offsetMs: 0 };
  assert.equal(nextWatchMs(at, OPENS - WATCH_NEAR_MS - 60_000, WATCH_MS), WATCH_FAR_MS);
  assert.equal(nextWatchMs(at, OPENS - WATCH_NEAR_MS - 3_000, WATCH_MS), 3_000);
  assert.equal(nextWatchMs(at, OPENS - WATCH_NEAR_MS - 10, WATCH_MS), WATCH_MS);
  assert.equal(nextWatchMs(at, OPENS - WATCH_NEAR_MS, WATCH_MS), WATCH_MS);
  assert.equal(nextWatchMs({ ...at, state: "SOLD_OUT" }, OPENS + 1, WATCH_MS), WATCH_MS); // a give-back may come
  assert.equal(nextWatchMs(at, OPENS + 60_000, WATCH_MS), null);
  assert.equal(nextWatchMs({ ...at, state: "ENDED", startsAt: null, endsAt: null }, OPENS, WATCH_MS), null); // long expired
  // a closed sale: asked rarely while its opening is far, never after its window (it may reopen within it)
  const closed = { ...at, state: "CLOSED" };
  assert.equal(nextWatchMs(closed, OPENS - WATCH_NEAR_MS - 60_000, WATCH_MS), WATCH_FAR_MS);
  assert.equal(nextWatchMs(closed, OPENS + 59_999, WATCH_MS), WATCH_MS);
  assert.equal(nextWatchMs(closed, OPENS + 60_000, WATCH_MS), null);
});

test("watch skips what is not a sale, after its Retry-After, and stops once the sale has ended", async () => {
  const ended = sale({ status: "ENDED", serverTime: "2026-12-24T13:00:01.000Z" });
  const busy = [503, { status: "UNAVAILABLE" }, { "Retry-After": "3" }];
  const { watcher, calls, waits } = watching([busy, "no answer", [429, {}, { "Retry-After": "0" }], ended, sale()]);
  const states = [];
  assert.equal(await watcher.watch(3, (s) => states.push(s.state)), 200);
  assert.deepEqual(states, ["ENDED"]);
  assert.equal(calls.length, 4);
  assert.deepEqual(waits, [3_000, WATCH_MS, WATCH_MS]);
});

test("watch stops when the page aborts it", async () => {
  const controller = new AbortController();
  const { watcher, calls } = watching([sale({ serverTime: "2026-12-24T11:59:59.000Z" })]);
  let seen = 0;
  const status = await watcher.watch(3, () => { seen += 1; if (seen === 3) controller.abort(); },
    { signal: controller.signal });
  assert.equal(status, 200);
  assert.equal(calls.length, 3);
});

test("a UUID spells every byte in two hex digits, a small one too", async () => {
  const own = Object.getOwnPropertyDescriptor(crypto, "getRandomValues");
  Object.defineProperty(crypto, "getRandomValues", { value: (bytes) => bytes.fill(0x0a), configurable: true });
  try {
    const { fetch, calls } = scripted(CONTRACT.scenarios[0].answers);
    await new CouponClient({ baseUrl: URL, fetch }).claim(3, 7);
    assert.equal(calls[0].headers["Idempotency-Key"], "0a0a0a0a-0a0a-4a0a-8a0a-0a0a0a0a0a0a");
  } finally {
    if (own) Object.defineProperty(crypto, "getRandomValues", own);
    else delete crypto.getRandomValues;
  }
});

test("a page that aborts the claim as its token is asked (signing the shopper out) has it rejected at once", async () => {
  const controller = new AbortController();
  const { fetch, calls } = scripted(CONTRACT.scenarios[0].answers);
  const getToken = () => {
    controller.abort(new Error("signed out"));
    return new Promise(() => {}); // the page went to sign in: no token comes
  };
  const claimed = client(fetch, [], { getToken, timeoutMs: 50 }).claim(3, 7, { signal: controller.signal });
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, 500, "still running after 500 ms")));
  const outcome = await Promise.race([claimed.then(() => "resolved", (error) => error), late]);
  clearTimeout(timer);
  assert.match(String(outcome), /signed out/);
  assert.equal(calls.length, 0);
});

test("neither a claim nor a watch leaves a listener on the page's signal, which lives as long as the page", async () => {
  const page = new AbortController();
  const { fetch } = scripted([[429, { status: "THROTTLED" }, { "Retry-After": "0" }], CONTRACT.scenarios[0].answers[0],
    [503, { status: "UNAVAILABLE" }], [503, { status: "UNAVAILABLE" }], [404, { status: "COUPON_NOT_FOUND" }]]);
  const api = new CouponClient({ baseUrl: URL, fetch }); // the real timer
  assert.equal((await api.claim(3, 7, { signal: page.signal })).kind, "success");
  assert.equal(await api.watch(3, () => {}, { signal: page.signal, periodMs: 1 }), 404);
  assert.deepEqual(getEventListeners(page.signal, "abort"), []);
});

test("a closed sale stays closed past its window; an ended one stays ended", () => {
  const at = { state: "CLOSED", startsAt: OPENS, endsAt: OPENS + 60_000, total: 5, left: 5, asOf: 0, offsetMs: 0 };
  assert.equal(saleStateAt(at, OPENS + 60_000), "CLOSED"); // the server says CLOSED before ENDED
  assert.equal(saleStateAt({ ...at, state: "ENDED" }, OPENS + 59_999), "ENDED");
});

test("a window edge an answer leaves out (null) is never crossed on the page's clock", () => {
  const at = { state: "NOT_OPEN", startsAt: null, endsAt: OPENS + 60_000, total: 5, left: 5, asOf: 0, offsetMs: 0 };
  assert.equal(saleStateAt(at, OPENS), "NOT_OPEN");
  assert.equal(nextWatchMs(at, OPENS, WATCH_MS), WATCH_MS);
  const open = { ...at, state: "OPEN", startsAt: OPENS, endsAt: null };
  assert.equal(saleStateAt(open, OPENS + 60_000), "OPEN");
  assert.equal(nextWatchMs(open, OPENS + 60_000, WATCH_MS), WATCH_MS);
});

test("watch's edge URL loses its trailing slashes", async () => {
  const { watcher, calls } = watching([[404, { status: "COUPON_NOT_FOUND" }]], { edgeUrl: "https://edge.example.com//" });
  assert.equal(await watcher.watch(3, () => {}), 404);
  assert.equal(calls[0].url, "https://edge.example.com/coupons/3/availability");
});

test("a sale whose state expired long ago is reported without a window, and ends the watch", async () => {
  const expired = [200, { status: "ENDED", couponId: 3, serverTime: "2026-12-24T11:59:50.000Z", startsAt: null,
    endsAt: null, total: null, left: null, asOf: null }];
  const { watcher, calls } = watching([expired, sale()]);
  const seen = [];
  assert.equal(await watcher.watch(3, (s) => seen.push(s)), 200);
  assert.equal(calls.length, 1);
  assert.deepEqual(seen, [{ state: "ENDED", startsAt: null, endsAt: null, total: null, left: null, asOf: null,
    offsetMs: 5_000 }]);
});

test("an answer kept at the edge still opens the sale on the server's clock: the page's plus the offset", async () => {
  const kept = sale({ serverTime: "2026-12-24T11:59:59.500Z", asOf: "2026-12-24T11:59:59.500Z" });
  const { watcher, waits } = watching([kept, kept, [404, { status: "COUPON_NOT_FOUND" }]]); // page 14.5 s slow
  const seen = [];
  await watcher.watch(3, (s) => seen.push([s.state, s.offsetMs]));
  // the second answer is the first, a second old: the server's clock is then 12:00:00.5
  assert.deepEqual(seen, [["NOT_OPEN", 14_500], ["OPEN", 14_500]]);
  assert.deepEqual(waits, [WATCH_MS, WATCH_MS]);
});

test("the offset is the largest of the last OFFSET_SAMPLES answers' only", async () => {
  const page = OPENS + 600_000; // the sale is open: asked every period
  const at = (offsetMs) => sale({ status: "OPEN", serverTime: new Date(page + offsetMs).toISOString() });
  const answers = [at(9_000), at(8_000), ...Array(OFFSET_SAMPLES).fill(at(5_000)), [404, {}]];
  const { fetch } = scripted(answers);
  const watcher = new CouponClient({ baseUrl: URL, fetch, now: () => page, sleep: async () => {} });
  const offsets = [];
  await watcher.watch(3, (s) => offsets.push(s.offsetMs));
  assert.deepEqual(offsets, [...Array(OFFSET_SAMPLES).fill(9_000), 8_000, 5_000]);
});

test("only a 200 with the server's time is a sale: an error answer with one, or a 200 without, is skipped", async () => {
  const notJson = new Response("<html>Welcome</html>", { status: 200, headers: { "Content-Type": "text/html" } });
  const { watcher, waits } = watching([[503, { status: "UNAVAILABLE", serverTime: "2026-12-24T11:59:50.000Z" }],
    notJson, [200, { status: "OPEN", left: 3 }], sale(), [404, { status: "COUPON_NOT_FOUND" }]]);
  const seen = [];
  await watcher.watch(3, (s) => seen.push([s.state, s.offsetMs]));
  assert.deepEqual(seen, [["NOT_OPEN", 2_000]]); // asked 3 s after the first: the page's clock moved on
  assert.deepEqual(waits, [WATCH_MS, WATCH_MS, WATCH_MS, WATCH_MS]);
});
