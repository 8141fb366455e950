/**
 * An HTTP-date (RFC 9110, 5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms a
 * recipient must accept) as epoch ms; null for anything else.
 * @param {string} text
 * @param {number} nowMs for an RFC 850 date's two-digit year
 * @returns {number | null}
 */
export function httpDateMs(text: string, nowMs: number): number | null;
/**
 * The wait a Retry-After header asks for, in ms (RFC 9110, 10.2.3): delay-seconds (one or more
 * digits) or an HTTP-date; null without one, or for one that is neither ("1.5", "-1", "soon").
 * @param {string | null | undefined} value
 * @param {number} nowMs
 * @returns {number | null}
 */
export function retryAfterMs(value: string | null | undefined, nowMs: number): number | null;
/**
 * How long to wait before asking again after `answer`: its Retry-After, else WAIT_MS, times 1
 * to JITTER, at most MAX_WAIT_MS.
 * @param {number | null} askedMs
 * @param {number} random 0 to 1
 * @returns {number}
 */
export function waitMs(askedMs: number | null, random: number): number;
/**
 * What an answer to the claim means (docs/frontend.md, The retry contract).
 * @param {Answer} answer
 * @returns {"success" | "refused" | "refresh" | "retry" | "lost"}
 */
export function afterClaim(answer: Answer): "success" | "refused" | "refresh" | "retry" | "lost";
/**
 * What an answer of the status route means after a lost answer.
 * @param {Answer} answer
 * @returns {"none" | "held" | "pending" | "released" | "ask again"}
 */
export function afterStatus(answer: Answer): "none" | "held" | "pending" | "released" | "ask again";
/**
 * A sale's state at `serverNowMs` (the server's clock): the answer's, moved on by the window's
 * edges it has crossed since (an answer kept at the edge may be a second old).
 * @param {Sale} sale
 * @param {number} serverNowMs
 * @returns {SaleState}
 */
export function saleStateAt(sale: Sale, serverNowMs: number): SaleState;
/**
 * How long watch waits before asking again: not at all once the window has ended, whatever the
 * state (a closed sale too); WATCH_FAR_MS while its opening is further than WATCH_NEAR_MS away
 * (but never past WATCH_NEAR_MS before it), `periodMs` otherwise.
 * @param {Sale} sale
 * @param {number} serverNowMs
 * @param {number} periodMs
 * @returns {number | null} null: stop
 */
export function nextWatchMs(sale: Sale, serverNowMs: number, periodMs: number): number | null;
/** How many times one click's request is sent at most. */
export const MAX_SENDS: 5;
/** The wait before sending again when the answer names none (no Retry-After, or one RFC 9110 does not allow). */
export const WAIT_MS: 1000;
/** A wait is the asked one times 1 to this (jitter: refused clients do not all come back at once)... */
export const JITTER: 1.5;
/** ...and never longer than this, jitter included. */
export const MAX_WAIT_MS: 5000;
/** How many times one click asks the status route at most (a lost answer settled, PENDING polled). */
export const STATUS_ASKS: 10;
/** How long one request may go unanswered before it counts as a lost answer. */
export const TIMEOUT_MS: 10000;
/**
 * How often keepWarm asks for the claim's preflight again: just past Safari's cap on a kept
 * preflight (600 s), so each warm-up there finds the last one expired and asks anew, and a kept
 * preflight is missing for at most a second of every ten minutes (a warm-up within the cap would
 * find the old one kept and ask nothing). Where the API's Max-Age (7,200 s) holds, as in
 * Chromium (its cap) and Firefox, the warm-up after it expires is at most 12 s late.
 */
export const PREFLIGHT_REFRESH_MS: 601000;
/** How often watch asks a sale's availability near and during its window: the edge's period. */
export const WATCH_MS: 1000;
/** ...and while its opening is further than WATCH_NEAR_MS away (the countdown runs on the kept offset). */
export const WATCH_FAR_MS: 10000;
export const WATCH_NEAR_MS: 60000;
/** How many of the last answers the server clock's offset is taken from. */
export const OFFSET_SAMPLES: 30;
export class CouponClient {
    /** @param {ClientOptions} options */
    constructor(options: ClientOptions);
    /**
     * One click: POST /coupon-issues with one Idempotency-Key, sent again with the same key until
     * the answer is known. A click on a coupon whose claim is still running joins it (the same
     * promise, under the first click's signal), so two clicks never take two keys.
     * @param {number} couponId
     * @param {number} userId
     * @param {{ signal?: AbortSignal }} [options] aborting rejects the claim with the signal's reason
     * @returns {Promise<ClaimResult>}
     */
    claim(couponId: number, userId: number, { signal }?: {
        signal?: AbortSignal;
    }): Promise<ClaimResult>;
    /**
     * Have the browser ask and keep the claim's preflight now, before the sale opens: one POST
     * /coupon-issues with an empty body, which API Gateway refuses at the edge (422, no function
     * runs). The browser keeps the preflight's answer for its Max-Age (capped by the browser), so
     * the first click of the opening second sends no OPTIONS.
     * @param {{ signal?: AbortSignal }} [options]
     * @returns {Promise<number>} the answer's HTTP status (422), 0 without one
     */
    warmUp({ signal }?: {
        signal?: AbortSignal;
    }): Promise<number>;
    /**
     * warmUp now, and again every PREFLIGHT_REFRESH_MS in the background until `signal` aborts: a
     * page that waits longer than a browser keeps a preflight (Safari: ten minutes) still finds it
     * kept at the opening.
     * @param {{ signal?: AbortSignal }} [options]
     * @returns {Promise<number>} the first warm-up's HTTP status, once it is answered
     */
    keepWarm({ signal }?: {
        signal?: AbortSignal;
    }): Promise<number>;
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
    watch(couponId: number, onSale: (sale: Sale) => void, { signal, periodMs }?: {
        signal?: AbortSignal;
        periodMs?: number;
    }): Promise<number>;
    /**
     * Where the user's request stands: GET /coupons/{couponId}/issues/{userId}.
     * @param {number} couponId
     * @param {number} userId
     * @param {{ signal?: AbortSignal }} [options]
     * @returns {Promise<Answer>}
     */
    status(couponId: number, userId: number, { signal }?: {
        signal?: AbortSignal;
    }): Promise<Answer>;
    #private;
}
/**
 * success: reserved and durably queued (202).
 * held: after a lost answer, the status route says the user holds the copy (PENDING, ISSUED) or
 * held it (USED, EXPIRED).
 * released: after a lost answer, the status route says the request was accepted and its copy is
 * no longer the user's (FAILED: recorded as a failure and released; CANCELED).
 * refused: the API's final word (409 SOLD_OUT, DUPLICATE, NOT_OPEN, ENDED, CLOSED; 404; 422; 403; ...).
 * unavailable: still 429 or 503 UNAVAILABLE after every send: nothing was reserved.
 * unknown: the answer was lost and the status route could not settle it: the request may have
 * been accepted.
 */
export type ClaimKind = "success" | "held" | "released" | "refused" | "unavailable" | "unknown";
export type ClaimResult = {
    kind: ClaimKind;
    /**
     * the last answer's status (SUCCESS, SOLD_OUT, ...; the status route's
     * state for held and released), or "" without one
     */
    status: string;
    /**
     * the last answer's HTTP status, 0 without one
     */
    httpStatus: number;
    /**
     * how many times the click's request was sent
     */
    attempts: number;
    /**
     * the API's error message, or why no answer could be read
     */
    error?: string | undefined;
    /**
     * the request's id (success)
     */
    requestId?: string | undefined;
    /**
     * when the copy was reserved (success)
     */
    reservedAt?: string | undefined;
    /**
     * the wait the last answer asked for (Retry-After)
     */
    retryAfterMs?: number | undefined;
};
export type Answer = {
    /**
     * 0 when nothing came back
     */
    httpStatus: number;
    body: Record<string, any>;
    retryAfterMs: number | null;
    error?: string | undefined;
};
export type Wait = {
    /**
     * how long the client waits
     */
    ms: number;
    /**
     * the answer it waits after (THROTTLED, UNAVAILABLE, PENDING, ...; "" for none)
     */
    status: string;
    /**
     * that answer's HTTP status, 0 for none
     */
    httpStatus: number;
};
export type SaleState = "NOT_OPEN" | "OPEN" | "SOLD_OUT" | "ENDED" | "CLOSED";
/**
 * a sale as watch reports it (GET /coupons/{couponId}/availability)
 */
export type Sale = {
    /**
     * the server's answer, moved on by the server's clock (saleStateAt)
     */
    state: SaleState;
    /**
     * epoch ms (null: a coupon whose state expired long ago)
     */
    startsAt: number | null;
    /**
     * epoch ms
     */
    endsAt: number | null;
    total: number | null;
    /**
     * the copies left at asOf: Redis' count then, never more
     */
    left: number | null;
    /**
     * epoch ms, the server's time of that count
     */
    asOf: number | null;
    /**
     * the server's clock minus this page's (serverNow = Date.now() + offsetMs)
     */
    offsetMs: number;
};
export type ClientOptions = {
    /**
     * the API's URL with its stage, e.g. https://ID.execute-api.REGION.amazonaws.com/prod
     */
    baseUrl: string;
    /**
     * where watch reads a sale: the environment's edge (the stack's EdgeUrl
     * output), else baseUrl
     */
    edgeUrl?: string | undefined;
    /**
     * the user's Cognito ID token (prod), asked before every request and sent as Authorization;
     * asked with forceRefresh after a 401 (Amplify: fetchAuthSession({ forceRefresh }))
     */
    getToken?: ((options: {
        forceRefresh: boolean;
    }) => (string | undefined | Promise<string | undefined>)) | undefined;
    /**
     * told of every wait, so that a page can show it
     */
    onWait?: ((wait: Wait) => void) | undefined;
    /**
     * how long one request may go unanswered
     */
    timeoutMs?: number | undefined;
    fetch?: typeof fetch | undefined;
    sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
    /**
     * 0 to 1, for the jitter
     */
    random?: (() => number) | undefined;
    /**
     * epoch ms
     */
    now?: (() => number) | undefined;
    /**
     * a new Idempotency-Key
     */
    newKey?: (() => string) | undefined;
};
