// The reference browser client of the coupon API: claim a coupon the way the API asks a client to
// (docs/frontend.md, The retry contract), with no dependency. An ES module; types as JSDoc.
//
//   import { CouponClient } from "./coupon-client.js";
//   const client = new CouponClient({ baseUrl: "https://ID.execute-api.REGION.amazonaws.com/prod", token });
//   const result = await client.claim(couponId, userId);   // one click
//   // result.kind: "success" | "held" | "refused" | "unavailable" | "unreachable"

/** How often a click is sent at most, and how long one wait may be. */
export const MAX_ATTEMPTS = 5;
export const MAX_WAIT_MS = 5_000;
/** A wait is Retry-After times 1 to this: refused clients do not all come back at once. */
export const JITTER = 1.5;
/** How often, and how many times, a PENDING request's status is asked again. */
export const PENDING_POLL_MS = 1_000;
export const PENDING_POLLS = 10;

/** Answers after which the click is over: the API's word is final. */
const FINAL = new Set([400, 401, 403, 404, 409, 413, 415, 422]);

/**
 * @typedef {object} ClaimResult
 * @property {"success" | "held" | "refused" | "unavailable" | "unreachable"} kind
 *   success: reserved and durably queued (202); held: the user holds a copy, found by the status
 *   route after a lost answer (status PENDING or ISSUED, ...); refused: the API said no (409
 *   DUPLICATE, SOLD_OUT, NOT_OPEN, ENDED, CLOSED, 404, 422, 403, ...); unavailable: still 429 or
 *   503 after every attempt (nothing reserved); unreachable: no answer could be read (the
 *   network, or a page whose origin the API does not allow).
 * @property {string} status the body's status (SUCCESS, SOLD_OUT, PENDING, ...), or "" without one
 * @property {number} httpStatus the last answer's HTTP status, 0 without one
 * @property {string} [error] the API's error message, or why nothing could be read
 * @property {string} [requestId] the request's id (success; held when the status route says it)
 * @property {string} [reservedAt] when the copy was reserved (success)
 * @property {number} [retryAfterMs] the wait the last answer asked for (429, 503), as its Retry-After said
 * @property {number} attempts how many times the click was sent
 */

/**
 * @typedef {object} Answer
 * @property {number} httpStatus 0 when nothing came back
 * @property {Record<string, any>} body
 * @property {number | null} retryAfterMs
 * @property {string} [error]
 */

/**
 * The wait a Retry-After header asks for, in ms: delay-seconds ("1") or an HTTP date (RFC 9110);
 * null without one or for one that is neither.
 * @param {string | null} value
 * @param {number} nowMs
 * @returns {number | null}
 */
export function retryAfterMs(value, nowMs) {
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const when = Date.parse(text);
  return Number.isNaN(when) ? null : Math.max(when - nowMs, 0);
}

export class CouponClient {
  /**
   * @param {object} options
   * @param {string} options.baseUrl the API's URL with its stage, e.g. https://ID.execute-api.REGION.amazonaws.com/prod
   * @param {string} [options.token] a Cognito ID token (prod), sent as Authorization
   * @param {typeof fetch} [options.fetch]
   * @param {(ms: number) => Promise<void>} [options.sleep]
   * @param {() => number} [options.random] 0 to 1, for the jitter
   * @param {() => number} [options.now] epoch ms
   * @param {() => string} [options.newKey] a new Idempotency-Key
   * @param {number} [options.maxAttempts]
   * @param {number} [options.maxWaitMs]
   */
  constructor({ baseUrl, token, fetch: fetchImpl, sleep, random, now, newKey, maxAttempts, maxWaitMs }) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.token = token;
    this.fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
    this.sleep = sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = random ?? Math.random;
    this.now = now ?? Date.now;
    this.newKey = newKey ?? (() => crypto.randomUUID());
    this.maxAttempts = maxAttempts ?? MAX_ATTEMPTS;
    this.maxWaitMs = maxWaitMs ?? MAX_WAIT_MS;
  }

  /**
   * One click: POST /coupon-issues with one Idempotency-Key, sent again with the same key until
   * the answer is known.
   * @param {number} couponId
   * @param {number} userId
   * @returns {Promise<ClaimResult>}
   */
  async claim(couponId, userId) {
    const key = this.newKey();
    const body = JSON.stringify({ couponId, userId });
    /** @type {Answer} */
    let answer = { httpStatus: 0, body: {}, retryAfterMs: null };
    for (let attempt = 1; attempt <= this.maxAttempts; attempt += 1) {
      if (attempt > 1) await this.#wait(answer);
      answer = await this.#send("POST", "/coupon-issues", body, key);
      if (answer.httpStatus === 202) return result("success", answer, attempt);
      if (FINAL.has(answer.httpStatus)) return result("refused", answer, attempt);
      if (mayHaveBeenAccepted(answer)) {
        const held = await this.#held(couponId, userId);
        if (held) return { ...result("held", held, attempt), attempts: attempt };
      }
    }
    if (answer.httpStatus === 0) return result("unreachable", answer, this.maxAttempts);
    return result("unavailable", answer, this.maxAttempts);
  }

  /**
   * Have the browser ask and keep the claim's preflight now, when the page loads, before the
   * sale opens: one POST /coupon-issues with an empty body, which API Gateway refuses at the
   * edge (422, no function runs). The browser keeps the preflight's answer for its Max-Age (two
   * hours in Chromium), so the first click of the opening second sends no OPTIONS.
   * @returns {Promise<number>} the answer's HTTP status (422), 0 without one
   */
  async warmUp() {
    return (await this.#send("POST", "/coupon-issues", "{}", "warm-up")).httpStatus;
  }

  /**
   * Where the user's request stands: GET /coupons/{couponId}/issues/{userId}.
   * @param {number} couponId
   * @param {number} userId
   * @returns {Promise<Answer>}
   */
  status(couponId, userId) {
    return this.#send("GET", `/coupons/${couponId}/issues/${userId}`);
  }

  /** The status route's answer when the user holds a copy (PENDING polled until it settles); null when not. */
  async #held(couponId, userId) {
    let answer = await this.status(couponId, userId);
    for (let poll = 0; answer.body.status === "PENDING" && poll < PENDING_POLLS; poll += 1) {
      await this.sleep(PENDING_POLL_MS);
      answer = await this.status(couponId, userId);
    }
    const held = answer.httpStatus === 200 && answer.body.status && answer.body.status !== "NONE";
    return held ? answer : null;
  }

  async #wait(answer) {
    const asked = answer.retryAfterMs ?? 1_000;
    await this.sleep(Math.min(asked, this.maxWaitMs) * (1 + (JITTER - 1) * this.random()));
  }

  /** @returns {Promise<Answer>} */
  async #send(method, path, body, key) {
    const headers = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (key !== undefined) headers["Idempotency-Key"] = key;
    if (this.token) headers.Authorization = this.token;
    let response;
    try {
      response = await this.fetch(this.baseUrl + path, { method, headers, body });
    } catch (error) {
      return { httpStatus: 0, body: {}, retryAfterMs: null, error: String(error) };
    }
    let parsed = {};
    try {
      parsed = await response.json();
    } catch {
      parsed = {};
    }
    const retryAfter = retryAfterMs(response.headers.get("Retry-After"), this.now());
    return { httpStatus: response.status, body: parsed ?? {}, retryAfterMs: retryAfter };
  }
}

/** No answer, 503 UNCONFIRMED or a gateway's 5xx: the request may have been accepted. */
function mayHaveBeenAccepted(answer) {
  if (answer.httpStatus === 0) return true;
  if (answer.httpStatus === 503) return answer.body.status === "UNCONFIRMED";
  return answer.httpStatus >= 500;
}

/** @returns {ClaimResult} */
function result(kind, answer, attempts) {
  const { body } = answer;
  const found = {
    kind,
    status: typeof body.status === "string" ? body.status : "",
    httpStatus: answer.httpStatus,
    attempts,
  };
  if (body.error || answer.error) found.error = body.error ?? answer.error;
  if (body.requestId) found.requestId = body.requestId;
  if (body.reservedAt) found.reservedAt = body.reservedAt;
  if (answer.retryAfterMs !== null && answer.retryAfterMs !== undefined) found.retryAfterMs = answer.retryAfterMs;
  return found;
}
