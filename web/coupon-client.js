// The reference browser client of the coupon API: claim a coupon the way the API asks a client to
// (docs/frontend.md, The retry contract), with no dependency. An ES module; its types are JSDoc,
// and coupon-client.d.ts is generated from them (npm run types).
//
//   import { CouponClient } from "coupon-web";
//   const client = new CouponClient({ baseUrl: "https://ID.execute-api.REGION.amazonaws.com/prod", getToken });
//   const result = await client.claim(couponId, userId);   // one click
//   // result.kind: "success" | "held" | "released" | "refused" | "unavailable" | "unknown"
//   client.watch(couponId, (sale) => show(sale), { signal });   // the sale, polled from the edge

/** How many times one click's request is sent at most. */
export const MAX_SENDS = 5;
/** The wait before sending again when the answer names none (no Retry-After, or one RFC 9110 does not allow). */
export const WAIT_MS = 1_000;
/** A wait is the asked one times 1 to this (jitter: refused clients do not all come back at once)... */
export const JITTER = 1.5;
/** ...and never longer than this, jitter included. */
export const MAX_WAIT_MS = 5_000;
/** How many times one click asks the status route at most (a lost answer settled, PENDING polled). */
export const STATUS_ASKS = 10;
/** How long one request may go unanswered before it counts as a lost answer. */
export const TIMEOUT_MS = 10_000;
/**
 * How often keepWarm asks for the claim's preflight again: just past Safari's cap on a kept
 * preflight (600 s), so each warm-up there finds the last one expired and asks anew, and a kept
 * preflight is missing for at most a second of every ten minutes (a warm-up within the cap would
 * find the old one kept and ask nothing). Where the API's Max-Age (7,200 s) holds, as in
 * Chromium (its cap) and Firefox, the warm-up after it expires is at most 12 s late.
 */
export const PREFLIGHT_REFRESH_MS = 601_000;

/** How often watch asks a sale's availability near and during its window: the edge's period. */
export const WATCH_MS = 1_000;
/** ...and while its opening is further than WATCH_NEAR_MS away (the countdown runs on the kept offset). */
export const WATCH_FAR_MS = 10_000;
export const WATCH_NEAR_MS = 60_000;
/** How many of the last answers the server clock's offset is taken from. */
export const OFFSET_SAMPLES = 30;

/** Status route states that mean the user holds the copy (or held it: used, expired); PENDING is polled. */
const HELD = new Set(["ISSUED", "USED", "EXPIRED"]);
/** Status route states of a request accepted earlier whose copy is no longer the user's. */
const RELEASED = new Set(["CANCELED", "FAILED"]);
/** Answers that say nothing was reserved: wait, then send again with the same key. */
const RETRY_LATER = new Set([408, 429]);

/**
 * @typedef {"success" | "held" | "released" | "refused" | "unavailable" | "unknown"} ClaimKind
 *   success: reserved and durably queued (202).
 *   held: after a lost answer, the status route says the user holds the copy (PENDING, ISSUED) or
 *     held it (USED, EXPIRED).
 *   released: after a lost answer, the status route says the request was accepted and its copy is
 *     no longer the user's (FAILED: recorded as a failure and released; CANCELED).
 *   refused: the API's final word (409 SOLD_OUT, DUPLICATE, NOT_OPEN, ENDED, CLOSED; 404; 422; 403; ...).
 *   unavailable: still 429 or 503 UNAVAILABLE after every send: nothing was reserved.
 *   unknown: the answer was lost and the status route could not settle it: the request may have
 *     been accepted.
 */

/**
 * @typedef {object} ClaimResult
 * @property {ClaimKind} kind
 * @property {string} status the last answer's status (SUCCESS, SOLD_OUT, ...; the status route's
 *   state for held and released), or "" without one
 * @property {number} httpStatus the last answer's HTTP status, 0 without one
 * @property {number} attempts how many times the click's request was sent
 * @property {string} [error] the API's error message, or why no answer could be read
 * @property {string} [requestId] the request's id (success)
 * @property {string} [reservedAt] when the copy was reserved (success)
 * @property {number} [retryAfterMs] the wait the last answer asked for (Retry-After)
 */

/**
 * @typedef {object} Answer
 * @property {number} httpStatus 0 when nothing came back
 * @property {Record<string, any>} body
 * @property {number | null} retryAfterMs
 * @property {string} [error]
 */

/**
 * @typedef {object} Wait
 * @property {number} ms how long the client waits
 * @property {string} status the answer it waits after (THROTTLED, UNAVAILABLE, PENDING, ...; "" for none)
 * @property {number} httpStatus that answer's HTTP status, 0 for none
 */

/**
 * @typedef {"NOT_OPEN" | "OPEN" | "SOLD_OUT" | "ENDED" | "CLOSED"} SaleState
 */

/**
 * @typedef {object} Sale a sale as watch reports it (GET /coupons/{couponId}/availability)
 * @property {SaleState} state the server's answer, moved on by the server's clock (saleStateAt)
 * @property {number | null} startsAt epoch ms (null: a coupon whose state expired long ago)
 * @property {number | null} endsAt epoch ms
 * @property {number | null} total
 * @property {number | null} left the copies left at asOf: Redis' count then, never more
 * @property {number | null} asOf epoch ms, the server's time of that count
 * @property {number} offsetMs the server's clock minus this page's (serverNow = Date.now() + offsetMs)
 */

/**
 * @typedef {object} ClientOptions
 * @property {string} baseUrl the API's URL with its stage, e.g. https://ID.execute-api.REGION.amazonaws.com/prod
 * @property {string} [edgeUrl] where watch reads a sale: the environment's edge (the stack's EdgeUrl
 *   output), else baseUrl
 * @property {(options: { forceRefresh: boolean }) => (string | undefined | Promise<string | undefined>)} [getToken]
 *   the user's Cognito ID token (prod), asked before every request and sent as Authorization;
 *   asked with forceRefresh after a 401 (Amplify: fetchAuthSession({ forceRefresh }))
 * @property {(wait: Wait) => void} [onWait] told of every wait, so that a page can show it
 * @property {number} [timeoutMs] how long one request may go unanswered
 * @property {typeof fetch} [fetch]
 * @property {(ms: number, signal?: AbortSignal) => Promise<void>} [sleep]
 * @property {() => number} [random] 0 to 1, for the jitter
 * @property {() => number} [now] epoch ms
 * @property {() => string} [newKey] a new Idempotency-Key
 */

const DELAY_SECONDS = /^[0-9]+$/;
const DAYS = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAYS = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "([0-9]{2}):([0-9]{2}):([0-9]{2})";
const IMF_FIXDATE = new RegExp(`^${DAYS}, ([0-9]{2}) ${MONTH} ([0-9]{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAYS}, ([0-9]{2})-${MONTH}-([0-9]{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAYS} ${MONTH} ([0-9]{2}| [0-9]) ${TIME} ([0-9]{4})$`);

/**
 * An HTTP-date (RFC 9110, 5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms a
 * recipient must accept) as epoch ms; null for anything else.
 * @param {string} text
 * @param {number} nowMs for an RFC 850 date's two-digit year
 * @returns {number | null}
 */
export function httpDateMs(text, nowMs) {
  let day, month, year, hour, minute, second, match;
  if ((match = IMF_FIXDATE.exec(text))) [, day, month, year, hour, minute, second] = match;
  else if ((match = ASCTIME_DATE.exec(text))) [, month, day, hour, minute, second, year] = match;
  else if ((match = RFC850_DATE.exec(text))) {
    [, day, month, year, hour, minute, second] = match;
    // RFC 9110: a two-digit year more than 50 years ahead is the most recent past year that ends so
    const thisYear = new Date(nowMs).getUTCFullYear();
    let full = thisYear - (thisYear % 100) + Number(year);
    if (full > thisYear + 50) full -= 100;
    year = String(full);
  } else return null;
  const [d, h, m, s] = [day, hour, minute, second].map(Number);
  if (d < 1 || d > 31 || h > 23 || m > 59 || s > 60) return null;
  return Date.UTC(Number(year), MONTHS.indexOf(month), d, h, m, s);
}

/**
 * The wait a Retry-After header asks for, in ms (RFC 9110, 10.2.3): delay-seconds (one or more
 * digits) or an HTTP-date; null without one, or for one that is neither ("1.5", "-1", "soon").
 * @param {string | null | undefined} value
 * @param {number} nowMs
 * @returns {number | null}
 */
export function retryAfterMs(value, nowMs) {
  const text = String(value ?? "").trim();
  if (DELAY_SECONDS.test(text)) return Number(text) * 1000;
  const when = httpDateMs(text, nowMs);
  return when === null ? null : Math.max(when - nowMs, 0);
}

/**
 * How long to wait before asking again after `answer`: its Retry-After, else WAIT_MS, times 1
 * to JITTER, at most MAX_WAIT_MS.
 * @param {number | null} askedMs
 * @param {number} random 0 to 1
 * @returns {number}
 */
export function waitMs(askedMs, random) {
  return Math.min((askedMs ?? WAIT_MS) * (1 + (JITTER - 1) * random), MAX_WAIT_MS);
}

/**
 * What an answer to the claim means (docs/frontend.md, The retry contract).
 * @param {Answer} answer
 * @returns {"success" | "refused" | "refresh" | "retry" | "lost"}
 */
export function afterClaim(answer) {
  const { httpStatus, body } = answer;
  if (httpStatus === 202) return "success";
  if (httpStatus === 401) return "refresh";
  if (RETRY_LATER.has(httpStatus) || (httpStatus === 503 && body.status === "UNAVAILABLE")) return "retry";
  if (httpStatus >= 400 && httpStatus < 500) return "refused";
  return "lost"; // no answer, a 5xx but 503 UNAVAILABLE, or an answer the contract does not know
}

/**
 * What an answer of the status route means after a lost answer.
 * @param {Answer} answer
 * @returns {"none" | "held" | "pending" | "released" | "ask again"}
 */
export function afterStatus(answer) {
  const state = answer.httpStatus === 200 ? answer.body.status : undefined;
  if (state === "NONE") return "none";
  if (state === "PENDING") return "pending";
  if (HELD.has(state)) return "held";
  if (RELEASED.has(state)) return "released";
  return "ask again";
}

/**
 * A sale's state at `serverNowMs` (the server's clock): the answer's, moved on by the window's
 * edges it has crossed since (an answer kept at the edge may be a second old).
 * @param {Sale} sale
 * @param {number} serverNowMs
 * @returns {SaleState}
 */
export function saleStateAt(sale, serverNowMs) {
  const { state, startsAt, endsAt } = sale;
  if (state === "CLOSED" || startsAt === null || endsAt === null) return state;
  if (serverNowMs >= endsAt) return "ENDED";
  if (state === "NOT_OPEN" && serverNowMs >= startsAt) return sale.left === 0 ? "SOLD_OUT" : "OPEN";
  return state;
}

/**
 * How long watch waits before asking again: not at all once the window has ended, whatever the
 * state (a closed sale too); WATCH_FAR_MS while its opening is further than WATCH_NEAR_MS away
 * (but never past WATCH_NEAR_MS before it), `periodMs` otherwise.
 * @param {Sale} sale
 * @param {number} serverNowMs
 * @param {number} periodMs
 * @returns {number | null} null: stop
 */
export function nextWatchMs(sale, serverNowMs, periodMs) {
  const { startsAt, endsAt } = sale;
  if (sale.state === "ENDED" || (endsAt !== null && serverNowMs >= endsAt)) return null;
  if (startsAt === null) return periodMs;
  const untilNear = startsAt - WATCH_NEAR_MS - serverNowMs;
  return untilNear > 0 ? Math.max(periodMs, Math.min(WATCH_FAR_MS, untilNear)) : periodMs;
}

/**
 * `promise`, or the signal's reason once it aborts first.
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignal} signal
 * @returns {Promise<T>}
 */
function untilAborted(promise, signal) {
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) return stop();
    signal.addEventListener("abort", stop, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

/** A version 4 UUID from getRandomValues, which plain-http pages have too (randomUUID is for secure contexts only). */
function newUuid() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A sleep that ends early, rejecting with the signal's reason, when `signal` aborts.
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
function abortableSleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal?.addEventListener("abort", stop, { once: true });
  });
}

export class CouponClient {
  /** @type {Map<string, Promise<ClaimResult>>} */
  #inFlight = new Map();
  #baseUrl;
  #edgeUrl;
  #getToken;
  #onWait;
  #timeoutMs;
  #fetch;
  #sleep;
  #random;
  #now;
  #newKey;

  /** @param {ClientOptions} options */
  constructor(options) {
    const { baseUrl, edgeUrl, getToken, onWait, timeoutMs, fetch: fetchImpl, sleep, random, now, newKey } = options ?? {};
    if (typeof baseUrl !== "string") {
      throw new TypeError("new CouponClient({ baseUrl }): baseUrl is the API's URL with its stage");
    }
    this.#baseUrl = baseUrl.replace(/\/+$/, "");
    this.#edgeUrl = (edgeUrl ?? baseUrl).replace(/\/+$/, "");
    this.#getToken = getToken ?? (() => undefined);
    this.#onWait = onWait ?? (() => {});
    this.#timeoutMs = timeoutMs ?? TIMEOUT_MS;
    this.#fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
    this.#sleep = sleep ?? abortableSleep;
    this.#random = random ?? Math.random;
    this.#now = now ?? Date.now;
    this.#newKey = newKey ?? newUuid;
  }

  /**
   * One click: POST /coupon-issues with one Idempotency-Key, sent again with the same key until
   * the answer is known. A click on a coupon whose claim is still running joins it (the same
   * promise, under the first click's signal), so two clicks never take two keys.
   * @param {number} couponId
   * @param {number} userId
   * @param {{ signal?: AbortSignal }} [options] aborting rejects the claim with the signal's reason
   * @returns {Promise<ClaimResult>}
   */
  claim(couponId, userId, { signal } = {}) {
    const running = `${couponId}/${userId}`;
    let claim = this.#inFlight.get(running);
    if (!claim) {
      claim = this.#claim(couponId, userId, signal).finally(() => this.#inFlight.delete(running));
      this.#inFlight.set(running, claim);
    }
    return claim;
  }

  /**
   * Have the browser ask and keep the claim's preflight now, before the sale opens: one POST
   * /coupon-issues with an empty body, which API Gateway refuses at the edge (422, no function
   * runs). The browser keeps the preflight's answer for its Max-Age (capped by the browser), so
   * the first click of the opening second sends no OPTIONS.
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<number>} the answer's HTTP status (422), 0 without one
   */
  async warmUp({ signal } = {}) {
    return (await this.#send("POST", "/coupon-issues", { body: "{}", key: "warm-up", signal })).httpStatus;
  }

  /**
   * warmUp now, and again every PREFLIGHT_REFRESH_MS in the background until `signal` aborts: a
   * page that waits longer than a browser keeps a preflight (Safari: ten minutes) still finds it
   * kept at the opening.
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<number>} the first warm-up's HTTP status, once it is answered
   */
  async keepWarm({ signal } = {}) {
    const first = await this.warmUp({ signal });
    const again = async () => {
      for (;;) {
        try {
          await this.#sleep(PREFLIGHT_REFRESH_MS, signal);
          await this.warmUp({ signal });
        } catch {
          return; // aborted
        }
      }
    };
    again();
    return first;
  }

  /**
   * Watch a sale until `signal` aborts or it ends: GET /coupons/{couponId}/availability from the
   * edge (no token, no preflight), every `periodMs` near and during its window (nextWatchMs), and
   * `onSale` told of each answer. The server clock's offset is the largest of the last
   * OFFSET_SAMPLES answers' (server time minus arrival): an answer kept at the edge, or slow to
   * arrive, only ever makes the server look earlier, so the page opens late, never early.
   * Answers that are not a sale (a 503, no answer) are skipped, and the next asked after their
   * Retry-After if it is longer; a 404 ends the watch.
   * @param {number} couponId
   * @param {(sale: Sale) => void} onSale
   * @param {{ signal?: AbortSignal, periodMs?: number }} [options]
   * @returns {Promise<number>} the last answer's HTTP status (200 once the sale ended, 404, or 0
   *   aborted before any)
   */
  async watch(couponId, onSale, { signal, periodMs = WATCH_MS } = {}) {
    /** @type {number[]} */
    const offsets = [];
    let last = 0;
    for (;;) {
      let wait = periodMs;
      /** @type {Answer} */
      let answer;
      try {
        answer = await this.#send("GET", `/coupons/${couponId}/availability`, { signal, anonymous: true });
      } catch {
        return last; // aborted
      }
      last = answer.httpStatus;
      if (last === 404) return last;
      const { body } = answer;
      if (last === 200 && typeof body.serverTime === "string") {
        offsets.push(Date.parse(body.serverTime) - this.#now());
        if (offsets.length > OFFSET_SAMPLES) offsets.shift();
        const offsetMs = Math.max(...offsets);
        const time = (/** @type {unknown} */ value) => (typeof value === "string" ? Date.parse(value) : null);
        /** @type {Sale} */
        const sale = { state: body.status, startsAt: time(body.startsAt), endsAt: time(body.endsAt),
          total: body.total, left: body.left, asOf: time(body.asOf), offsetMs };
        const serverNow = this.#now() + offsetMs;
        onSale({ ...sale, state: saleStateAt(sale, serverNow) });
        const next = nextWatchMs(sale, serverNow, periodMs);
        if (next === null) return last;
        wait = next;
      } else {
        wait = Math.max(periodMs, answer.retryAfterMs ?? 0);
      }
      try {
        await this.#sleep(wait, signal);
      } catch {
        return last; // aborted
      }
    }
  }

  /**
   * Where the user's request stands: GET /coupons/{couponId}/issues/{userId}.
   * @param {number} couponId
   * @param {number} userId
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<Answer>}
   */
  status(couponId, userId, { signal } = {}) {
    return this.#send("GET", `/coupons/${couponId}/issues/${userId}`, { signal });
  }

  /**
   * @param {number} couponId
   * @param {number} userId
   * @param {AbortSignal} [signal]
   * @returns {Promise<ClaimResult>}
   */
  async #claim(couponId, userId, signal) {
    const request = { body: JSON.stringify({ couponId, userId }), key: this.#newKey(), signal };
    const asks = { left: STATUS_ASKS };
    let refreshed = false;
    let forceRefresh = false; // the send right after a 401 asks for a fresh token
    for (let sends = 1; ; sends += 1) {
      const answer = await this.#send("POST", "/coupon-issues", { ...request, forceRefresh });
      forceRefresh = false;
      const meaning = afterClaim(answer);
      if (meaning === "success") return result("success", answer, sends);
      if (meaning === "refresh" && !refreshed && sends < MAX_SENDS) {
        refreshed = forceRefresh = true; // the token expired while the page waited: a fresh one, sent at once
        continue;
      }
      if (meaning === "refused" || meaning === "refresh") return result("refused", answer, sends);
      if (meaning === "lost") {
        const settled = await this.#settle(couponId, userId, asks, signal);
        if (settled.kind === "unknown" || !settled.answer) return result("unknown", answer, sends);
        if (settled.kind !== "none") return result(settled.kind, settled.answer, sends, answer);
        // NONE after the last send: that request may still be running, so nothing is said of it
        if (sends >= MAX_SENDS) return result("unknown", answer, sends);
      }
      if (sends >= MAX_SENDS) return result("unavailable", answer, sends);
      await this.#wait(answer, signal);
    }
  }

  /**
   * A lost answer settled on the status route, asked again (after the same waits) while it cannot
   * say and PENDING is polled, within the click's asks.
   * @param {number} couponId
   * @param {number} userId
   * @param {{ left: number }} asks what is left of the click's asks
   * @param {AbortSignal} [signal]
   * @returns {Promise<{ kind: "none" | "held" | "released" | "unknown", answer: Answer | null }>} with no
   *   asks left, unknown without asking (and no answer)
   */
  async #settle(couponId, userId, asks, signal) {
    /** @type {Answer | null} */
    let answer = null; // the status route's last answer: none yet
    let meaning = "ask again";
    while (asks.left > 0) {
      if (answer) await this.#wait(answer, signal);
      answer = await this.status(couponId, userId, { signal });
      asks.left -= 1;
      meaning = afterStatus(answer);
      if (meaning === "none" || meaning === "held" || meaning === "released") return { kind: meaning, answer };
    }
    return { kind: meaning === "pending" ? "held" : "unknown", answer };
  }

  /**
   * @param {Answer} answer
   * @param {AbortSignal} [signal]
   */
  async #wait(answer, signal) {
    const ms = waitMs(answer.retryAfterMs, this.#random());
    const status = typeof answer.body.status === "string" ? answer.body.status : "";
    this.#onWait({ ms, status, httpStatus: answer.httpStatus });
    await this.#sleep(ms, signal);
  }

  /**
   * One request; no answer within the timeout (or none at all) is httpStatus 0. The caller's
   * abort rejects with its reason.
   * @param {string} method
   * @param {string} path
   * @param {{ body?: string, key?: string, signal?: AbortSignal, forceRefresh?: boolean, anonymous?: boolean }} request
   *   anonymous: a public read from the edge, without the token (so no preflight either)
   * @returns {Promise<Answer>}
   */
  async #send(method, path, { body, key, signal, forceRefresh = false, anonymous = false }) {
    signal?.throwIfAborted();
    /** @type {Record<string, string>} */
    const headers = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (key !== undefined) headers["Idempotency-Key"] = key;
    const deadline = new AbortController();
    const abort = () => deadline.abort(signal?.reason);
    signal?.addEventListener("abort", abort, { once: true });
    const timer = setTimeout(() => deadline.abort(new Error(`no answer in ${this.#timeoutMs} ms`)), this.#timeoutMs);
    try {
      // the token too is waited for within the timeout and the page's signal
      const token = anonymous
        ? undefined
        : await untilAborted(Promise.resolve(this.#getToken({ forceRefresh })), deadline.signal);
      signal?.throwIfAborted();
      if (token) headers.Authorization = token;
      const url = (anonymous ? this.#edgeUrl : this.#baseUrl) + path;
      const response = await this.#fetch(url, { method, headers, body, signal: deadline.signal });
      const parsed = await response.json().catch(() => null); // not JSON: an answer without a body
      const retryAfter = retryAfterMs(response.headers.get("Retry-After"), this.#now());
      return { httpStatus: response.status, body: parsed ?? {}, retryAfterMs: retryAfter };
    } catch (error) {
      signal?.throwIfAborted();
      const reason = deadline.signal.aborted ? deadline.signal.reason : error;
      return { httpStatus: 0, body: {}, retryAfterMs: null, error: reason instanceof Error ? reason.message : String(reason) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
    }
  }
}

/**
 * @param {ClaimKind} kind
 * @param {Answer} answer the answer the result reports
 * @param {number} attempts
 * @param {Answer} [claimed] the claim's own last answer, when `answer` is the status route's
 * @returns {ClaimResult}
 */
function result(kind, answer, attempts, claimed = answer) {
  const { body } = answer;
  /** @type {ClaimResult} */
  const found = {
    kind,
    status: typeof body.status === "string" ? body.status : "",
    httpStatus: answer.httpStatus,
    attempts,
  };
  const error = claimed.body.error ?? claimed.error;
  if (typeof error === "string") found.error = error;
  if (body.requestId) found.requestId = body.requestId;
  if (body.reservedAt) found.reservedAt = body.reservedAt;
  if (claimed.retryAfterMs !== null) found.retryAfterMs = claimed.retryAfterMs;
  return found;
}
