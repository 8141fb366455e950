// The reference client's retry contract against a scripted fetch: `node --test web/test/`
// (tests/processes/test_web_client.py runs it with the processes tier).
import assert from "node:assert/strict";
import { test } from "node:test";

import { CouponClient, JITTER, MAX_ATTEMPTS, retryAfterMs } from "../coupon-client.js";

const URL = "https://api.example.com/prod";

/** A fetch that answers each call from `script` (a function of the request, or a fixed answer). */
function scripted(...script) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, ...init });
    const step = script.length > 1 ? script.shift() : script[0];
    const answer = typeof step === "function" ? step(url, init) : step;
    if (answer === "network") throw new TypeError("Failed to fetch");
    const [status, body, headers = {}] = answer;
    return new Response(JSON.stringify(body), { status, headers });
  };
  return { fetch, calls };
}

function client(fetch, waits = []) {
  return new CouponClient({
    baseUrl: `${URL}/`,
    fetch,
    sleep: async (ms) => void waits.push(ms),
    random: () => 1,
    now: () => Date.parse("Wed, 21 Oct 2015 07:27:50 GMT"),
    newKey: (() => {
      let n = 0;
      return () => `key-${(n += 1)}`;
    })(),
  });
}

const SUCCESS = [202, { status: "SUCCESS", requestId: "r-1", reservedAt: "2026-12-24T12:00:00.123+00:00" }];
const SOLD_OUT = [409, { status: "SOLD_OUT", error: "coupon 3 is sold out" }];
const UNAVAILABLE = [503, { status: "UNAVAILABLE", error: "retry later" }, { "Retry-After": "2" }];
const THROTTLED = [429, { status: "THROTTLED", error: "too many requests" }, { "Retry-After": "1" }];
const UNCONFIRMED = [503, { status: "UNCONFIRMED", error: "may have been accepted" }, { "Retry-After": "1" }];
const status = (word) => [200, { status: word, couponId: 3, userId: 7 }];

test("Retry-After is read as delay-seconds or as an HTTP date", () => {
  const now = Date.parse("Wed, 21 Oct 2015 07:27:50 GMT");
  assert.equal(retryAfterMs("2", now), 2000);
  assert.equal(retryAfterMs(" 7 ", now), 7000);
  assert.equal(retryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT", now), 10_000);
  assert.equal(retryAfterMs("Wed, 21 Oct 2015 07:27:00 GMT", now), 0);
  assert.equal(retryAfterMs(null, now), null);
  assert.equal(retryAfterMs("soon", now), null);
});

test("a success is one POST, with the body, the key and JSON", async () => {
  const { fetch, calls } = scripted(SUCCESS);
  const result = await client(fetch).claim(3, 7);
  assert.deepEqual(result, {
    kind: "success", status: "SUCCESS", httpStatus: 202, attempts: 1,
    requestId: "r-1", reservedAt: "2026-12-24T12:00:00.123+00:00",
  });
  assert.equal(calls.length, 1);
  assert.equal(calls[0].url, `${URL}/coupon-issues`);
  assert.equal(calls[0].method, "POST");
  assert.deepEqual(JSON.parse(calls[0].body), { couponId: 3, userId: 7 });
  assert.equal(calls[0].headers["Idempotency-Key"], "key-1");
  assert.equal(calls[0].headers["Content-Type"], "application/json");
});

test("a refusal ends the click at once", async () => {
  const { fetch, calls } = scripted(SOLD_OUT);
  const result = await client(fetch).claim(3, 7);
  assert.equal(result.kind, "refused");
  assert.equal(result.status, "SOLD_OUT");
  assert.equal(result.error, "coupon 3 is sold out");
  assert.equal(calls.length, 1);
});

test("429 and 503 are sent again after Retry-After, with jitter, with the same key", async () => {
  const waits = [];
  const { fetch, calls } = scripted(UNAVAILABLE, THROTTLED, SUCCESS);
  const result = await client(fetch, waits).claim(3, 7);
  assert.equal(result.kind, "success");
  assert.equal(result.attempts, 3);
  assert.deepEqual(waits, [2000 * JITTER, 1000 * JITTER]);
  assert.deepEqual(new Set(calls.map((call) => call.headers["Idempotency-Key"])), new Set(["key-1"]));
});

test("a wait is capped", async () => {
  const waits = [];
  const { fetch } = scripted([503, { status: "UNAVAILABLE" }, { "Retry-After": "3600" }], SUCCESS);
  await client(fetch, waits).claim(3, 7);
  assert.deepEqual(waits, [5000 * JITTER]);
});

test("after a lost answer the status route is asked before sending again", async () => {
  const { fetch, calls } = scripted("network", status("NONE"), SUCCESS);
  const result = await client(fetch).claim(3, 7);
  assert.equal(result.kind, "success");
  assert.deepEqual(calls.map((call) => `${call.method} ${call.url.replace(URL, "")}`),
    ["POST /coupon-issues", "GET /coupons/3/issues/7", "POST /coupon-issues"]);
  assert.equal(calls[2].headers["Idempotency-Key"], calls[0].headers["Idempotency-Key"]);
});

test("503 UNCONFIRMED with the copy held ends the click as held, PENDING polled until it settles", async () => {
  const { fetch, calls } = scripted(UNCONFIRMED, status("PENDING"), status("PENDING"), status("ISSUED"));
  const result = await client(fetch).claim(3, 7);
  assert.equal(result.kind, "held");
  assert.equal(result.status, "ISSUED");
  assert.equal(calls.filter((call) => call.method === "POST").length, 1);
  assert.equal(calls.filter((call) => call.method === "GET").length, 3);
});

test("still unavailable after every attempt: nothing reserved, the last answer said", async () => {
  const { fetch, calls } = scripted(UNAVAILABLE);
  const result = await client(fetch).claim(3, 7);
  assert.equal(result.kind, "unavailable");
  assert.equal(result.httpStatus, 503);
  assert.equal(result.retryAfterMs, 2000);
  assert.equal(calls.length, MAX_ATTEMPTS);
});

test("no answer ever (the network, or an origin the API does not allow): unreachable", async () => {
  const { fetch } = scripted("network");
  const result = await client(fetch).claim(3, 7);
  assert.equal(result.kind, "unreachable");
  assert.equal(result.httpStatus, 0);
  assert.match(result.error, /Failed to fetch/);
});

test("each click has its own key, and a token is sent as Authorization", async () => {
  const { fetch, calls } = scripted(SUCCESS);
  const api = new CouponClient({ baseUrl: URL, fetch, token: "id-token" });
  await api.claim(3, 7);
  await api.claim(3, 8);
  const keys = calls.map((call) => call.headers["Idempotency-Key"]);
  assert.notEqual(keys[0], keys[1]);
  assert.match(keys[0], /^[0-9a-f-]{36}$/);
  assert.equal(calls[0].headers.Authorization, "id-token");
});

test("warmUp sends the claim's request shape with an empty body, so its preflight is the claim's", async () => {
  const { fetch, calls } = scripted([422, { status: "INVALID_REQUEST", error: "body: Field required" }]);
  const api = new CouponClient({ baseUrl: URL, fetch, token: "id-token" });
  assert.equal(await api.warmUp(), 422);
  assert.equal(calls[0].method, "POST");
  assert.equal(calls[0].url, `${URL}/coupon-issues`);
  assert.equal(calls[0].body, "{}");
  assert.deepEqual(Object.keys(calls[0].headers).sort(), ["Authorization", "Content-Type", "Idempotency-Key"]);
});
