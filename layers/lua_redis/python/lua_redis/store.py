"""The reservation store: the Redis client of the reservation path, and reserve, release and
reconcile a coupon's state in Redis.

``reserve`` is the intake's one Redis call per request, so its path is kept short: its four keys
are named once per coupon (a cache), redis-py's errors are caught in place, and a refusal's
answer is one value per code.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.client import NEVER_DECODE
from redis.credentials import CredentialProvider
from redis.retry import Retry

from coupon_core.domain.records import validate_id, validate_millis
from coupon_core.domain.reservations import CouponState, IssueOutcome, ReconcileChanges, ReleaseOutcome, Reservation
from coupon_core.errors import InvalidInputError, Reraise, StateUnavailableError
from lua_redis import holders, keys
from lua_redis.scripts import Scripts

# ElastiCache closes an IAM-authenticated connection after 12 hours; an hour's margin.
MAX_CONNECTION_AGE_S = 11 * 3600
_clock = time.monotonic  # a connection's age; tests move it

# Every call that reaches Redis runs under this (a ``with`` block, a decorator, or in place).
redis_unavailable = Reraise(
    StateUnavailableError, "Redis unavailable", (redis.ConnectionError, redis.TimeoutError, redis.OutOfMemoryError)
)


class _RenewedConnection(redis.Connection):
    """A connection that, past :data:`MAX_CONNECTION_AGE_S`, closes and opens again (with new
    credentials) before its next command, instead of being closed by the server mid-request."""

    _opened_at = 0.0

    def connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        if self._sock is None:  # opening: its age counts from here, its handshake included
            self._opened_at = _clock()
        super().connect_check_health(*args, **kwargs)

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if self._sock is not None and _clock() - self._opened_at > MAX_CONNECTION_AGE_S:
            self.disconnect()
        super().send_packed_command(command, check_health)


class _RenewedSSLConnection(_RenewedConnection, redis.SSLConnection):
    """The same over TLS."""


def connect(
    url: str,
    *,
    socket_timeout: float = 2.0,
    credential_provider: CredentialProvider | None = None,
    pinned: bool = False,
) -> redis.Redis:
    """A client for ``url`` (``redis://``, or ``rediss://`` for TLS) that fails fast.

    A broken connection (typically one that went stale while a Lambda container was frozen) is
    retried once on a new connection, right away. A timeout is never retried: the command may
    have run, and a reserve run twice would answer DUPLICATE for the caller's own reservation.
    ``credential_provider`` gives the user and password of each new connection (ElastiCache's
    IAM tokens); a connection is renewed before it is :data:`MAX_CONNECTION_AGE_S` old.

    ``pinned``: one connection, opened now (raising :class:`StateUnavailableError` if it cannot
    be), and every command sent on it: redis-py's ``single_connection_client``, for a caller
    that sends one command at a time from one thread (the intake: a Lambda container answers
    one request at a time). A pool's checkout and return per command (its bookkeeping and a
    poll of the socket) were about an eighth of a refusal's instructions (docs/benchmarks.md).
    A timeout while sending or reading closes the connection, as in the pool, so no late reply
    is ever read as the next command's.
    """
    secure = url.startswith("rediss://")
    with redis_unavailable:
        return redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_timeout,
            retry=Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,)),
            credential_provider=credential_provider,
            connection_class=_RenewedSSLConnection if secure else _RenewedConnection,
            single_connection_client=pinned,
        )


STAGING_TTL_MS = 10 * 60 * 1000  # a staging set left by a crashed rebuild disappears by itself
SENTINEL = "0"  # member of the set (score 0) and field of the requests hash: their loss shows

# The scripts' codes, each mapped once to the domain's outcome: reserve.lua answers an index of
# RESERVE_CODES, release.lua one of RELEASE_CODES' keys.
RESERVE_CODES: tuple[IssueOutcome, ...] = (
    IssueOutcome.SUCCESS,
    IssueOutcome.DUPLICATE,
    IssueOutcome.SOLD_OUT,
    IssueOutcome.NOT_OPEN,
    IssueOutcome.ENDED,
    IssueOutcome.STATE_MISSING,
    IssueOutcome.KEY_REUSED,
    IssueOutcome.CLOSED,
)
RELEASE_CODES: dict[int, ReleaseOutcome] = {
    1: ReleaseOutcome.RELEASED,
    0: ReleaseOutcome.NOT_HELD,
    -1: ReleaseOutcome.STALE,
}


# A reservation without a time (every answer but SUCCESS and DUPLICATE), one per code.
_UNTIMED: tuple[Reservation, ...] = tuple(Reservation(outcome) for outcome in RESERVE_CODES)
_TIMED = (IssueOutcome.SUCCESS, IssueOutcome.DUPLICATE)
NO_EDGE_MS = 2**31  # reserve.lua's -1: a refusal no edge of the window ends (ENDED, CLOSED)
FILTERS_KEPT = 64  # the holders' filters a store keeps, one per sold-out coupon (300 KB at 100,000 copies)

# NEVER_DECODE is redis-py's own option for a reply read as bytes on a decoding client (DUMP,
# SLOWLOG): the filter is binary. redis is pinned, and a services test reads a filter through it.
_AS_BYTES: dict[str, Any] = {NEVER_DECODE: []}


@functools.lru_cache(maxsize=4096)
def _reserve_keys(coupon_id: int) -> tuple[str, str, str, str, str]:
    """reserve.lua's KEYS, in its order."""
    return (
        keys.reserved_key(coupon_id),
        keys.meta_key(coupon_id),
        keys.requests_key(coupon_id),
        keys.idempotency_key(coupon_id),
        keys.holders_key(coupon_id),
    )


def chunked[Pair: tuple[int, int] | tuple[int, str]](items: Sequence[Pair], size: int) -> Iterator[list[Pair]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def flattened(pairs: Sequence[tuple[int, int] | tuple[int, str]]) -> list[int | str]:
    return [value for pair in pairs for value in pair]


class ReservationStore:
    """A coupon's reservations in Redis (docs/design.md, Redis state).

    Every method validates its arguments before it touches Redis, and raises
    :class:`StateUnavailableError` when Redis cannot be reached.

    ``chunk_size`` bounds how many users one command or script call carries during a
    reconcile, so that no single call blocks the server for long, whatever the coupon's size.
    """

    def __init__(self, client: redis.Redis, *, chunk_size: int = 1000) -> None:
        self._client = client
        self._scripts = Scripts.register(client)
        self._chunk_size = validate_id("chunk_size", chunk_size)
        # coupon -> the version of its holders' filter last read, and the filter (None: none to read)
        self._filters: dict[int, tuple[tuple[str, int], holders.BloomHoldersFilter | None]] = {}

    def reserve(
        self, coupon_id: int, user_id: int, request_id: uuid.UUID | None = None, *, idempotency_key: str = ""
    ) -> Reservation:
        """Reserve one copy for one user: exactly one Redis command (EVALSHA).

        Idempotent per request: the same ``request_id`` sent again (the client's retry after a
        connection dropped once the script had run) gets its own SUCCESS back, same time.
        Without one, the call is a request of its own. An ``idempotency_key`` already used for
        another user of the coupon answers KEY_REUSED and changes nothing.

        An answer says how long it stands (``stands_ms``: for every caller, or for this one); a
        SOLD_OUT comes with the coupon's holders' filter, read again (one GET more) only when
        the script reports a version this store has not read.
        """
        validate_id("couponId", coupon_id)
        validate_id("userId", user_id)
        try:
            code, reserved_at, *standing = self._scripts.reserve(
                keys=_reserve_keys(coupon_id), args=[user_id, str(request_id or uuid.uuid4()), idempotency_key]
            )
        except redis_unavailable.causes as exc:
            raise redis_unavailable.mapped(exc) from exc
        outcome = RESERVE_CODES[code]
        if outcome in _TIMED:
            return Reservation(outcome, int(reserved_at), stands_ms=int(standing[0]))
        if standing:
            return self._standing(coupon_id, outcome, standing)
        untimed: Reservation = _UNTIMED[code]
        return untimed

    def _standing(self, coupon_id: int, outcome: IssueOutcome, standing: list[Any]) -> Reservation:
        """A refusal that stands: ``[ms until the window's edge (-1: none)]``, and for SOLD_OUT
        the filter's version ``epoch, added`` (no epoch: the state keeps no filter)."""
        stands_ms = NO_EDGE_MS if standing[0] < 0 else int(standing[0])
        if outcome is not IssueOutcome.SOLD_OUT:
            return Reservation(outcome, stands_ms=stands_ms)
        epoch, added = standing[1], int(standing[2])
        filter_ = self._holders_filter(coupon_id, (epoch, added)) if epoch else None
        if filter_ is None:  # nobody's refusal but this caller's
            return Reservation(outcome)
        return Reservation(outcome, stands_ms=stands_ms, holders=filter_)

    def _holders_filter(self, coupon_id: int, version: tuple[str, int]) -> holders.BloomHoldersFilter | None:
        """The coupon's filter at ``version`` or later (bits are only ever added within an epoch);
        ``None`` if Redis has none, or cannot be asked now (the refusal is then not remembered)."""
        kept = self._filters.get(coupon_id)
        if kept is not None and kept[0] == version:
            return kept[1]
        try:
            data = self._client.execute_command("GET", keys.holders_key(coupon_id), **_AS_BYTES)
        except redis_unavailable.causes:
            return None
        filter_ = None if data is None else holders.BloomHoldersFilter(data)
        self._filters.pop(coupon_id, None)
        if len(self._filters) >= FILTERS_KEPT:
            del self._filters[next(iter(self._filters))]
        self._filters[coupon_id] = (version, filter_)
        return filter_

    @redis_unavailable
    def release(self, coupon_id: int, user_id: int, reserved_at: int) -> ReleaseOutcome:
        """Release a reservation only if it is the one made at ``reserved_at`` (fenced)."""
        (outcome,) = self.release_all(coupon_id, [(user_id, reserved_at)])
        return outcome

    @redis_unavailable
    def release_all(self, coupon_id: int, reservations: Sequence[tuple[int, int]]) -> list[ReleaseOutcome]:
        """Release many (user, reservation time) pairs of one coupon, fenced, in bounded calls."""
        validate_id("couponId", coupon_id)
        pairs = [(validate_id("userId", user), validate_millis("reservedAt", at)) for user, at in reservations]
        outcomes: list[ReleaseOutcome] = []
        for chunk in chunked(pairs, self._chunk_size):
            codes = self._scripts.release(
                keys=[keys.reserved_key(coupon_id), keys.requests_key(coupon_id)], args=flattened(chunk)
            )
            outcomes.extend(RELEASE_CODES[code] for code in codes)
        return outcomes

    @redis_unavailable
    def reservation_time(self, coupon_id: int, user_id: int) -> int | None:
        """The user's reservation time in ms, or ``None`` if the user holds no reservation."""
        validate_id("couponId", coupon_id)
        validate_id("userId", user_id)
        score = self._client.zscore(keys.reserved_key(coupon_id), user_id)
        return None if score is None else int(score)

    @redis_unavailable
    def reserved_count(self, coupon_id: int) -> int:
        """How many reservations the coupon holds."""
        validate_id("couponId", coupon_id)
        return int(self._client.zcount(keys.reserved_key(coupon_id), 1, "+inf"))  # not the sentinel (score 0)

    @redis_unavailable
    def has_state(self, coupon_id: int) -> bool:
        """Whether the coupon's state is whole: its meta hash, and the sentinels of its set and its
        requests hash (reserve answers STATE_MISSING otherwise)."""
        validate_id("couponId", coupon_id)
        pipe = self._client.pipeline(transaction=False)
        pipe.exists(keys.meta_key(coupon_id))
        pipe.zscore(keys.reserved_key(coupon_id), SENTINEL)
        pipe.hexists(keys.requests_key(coupon_id), SENTINEL)
        meta, member, field = pipe.execute()
        return bool(meta) and member is not None and bool(field)

    @redis_unavailable
    def update_state(self, state: CouponState) -> bool:
        """Write the coupon's meta (total, window, closed) and its keys' expiry, leaving the
        reservations as they are; False if the state is missing (nothing written: the next
        reserve rebuilds it whole from the database)."""
        coupon_id = state.coupon_id
        coupon_keys = [
            keys.meta_key(coupon_id),
            keys.reserved_key(coupon_id),
            keys.requests_key(coupon_id),
            keys.idempotency_key(coupon_id),
            keys.holders_key(coupon_id),
        ]
        return bool(self._scripts.update_state(keys=coupon_keys, args=[*_meta_args(state)]))

    @redis_unavailable
    def rebuild_wait_ms(self, coupon_id: int, wait_ms: int) -> int:
        """Milliseconds before a lost state may be rebuilt; the first call starts a wait of ``wait_ms``."""
        validate_id("couponId", coupon_id)
        validate_millis("waitMs", wait_ms)
        return int(self._scripts.rebuild_gate(keys=[keys.rebuild_key(coupon_id)], args=[wait_ms]))

    @redis_unavailable
    def wait_for_replicas(self, replicas: int, timeout_ms: int) -> int:
        """``WAIT``: block until the writes so far reached ``replicas`` replicas, or ``timeout_ms``.

        Returns how many replicas have them. A reservation they have survives a failover.
        """
        validate_id("replicas", replicas)
        validate_id("timeoutMs", timeout_ms)
        return int(self._client.wait(replicas, timeout_ms))

    @redis_unavailable
    def server_time_ms(self) -> int:
        """The Redis server's clock, the one every reservation time comes from (epoch ms)."""
        seconds, micros = self._client.time()
        return int(seconds) * 1000 + int(micros) // 1000

    @redis_unavailable
    def reconcile(
        self,
        state: CouponState,
        holders: Mapping[int, int],
        *,
        release_before: int | None,
        request_ids: Mapping[int, str] | None = None,
    ) -> ReconcileChanges:
        """Make a coupon's reservations agree with who holds the coupon.

        ``holders`` maps each user who holds a copy to its reservation time (ms): the users the
        database has issued, and those whose record is still in Kafka, not yet persisted. A
        member of the set that is not a holder is *stray*: its request was released, failed, or
        never reached Kafka. Stray members reserved before ``release_before`` are released
        (fenced by their time): the caller has made sure that the record of a reservation that
        old is either among the holders or will never be written. Younger stray members may
        still be on their way to Kafka and stay; with no ``release_before`` none is released.

        When the state is missing (any of its keys lost) and the set is gone, it is built from the
        holders in a staging set in chunks and swapped in with one atomic RENAME (the seed's
        rebuild). Otherwise the meta hash and the sentinels are rewritten, stray members are
        released, and missing holders are added back (never past the total). Either way a holder
        whose request id Redis lost gets it back from ``request_ids`` (user -> the request id that
        holds its copy), so that a retry of that request still answers its own SUCCESS. Safe to run twice,
        and concurrently with reserves; callers serialise reconciles of one coupon with the state
        lock.
        """
        holder_pairs = self._validated_holders(state.coupon_id, holders)
        requests = [(validate_id("userId", user), _request_id(rid)) for user, rid in (request_ids or {}).items()]
        if release_before is not None:
            validate_millis("releaseBefore", release_before)
        if self._install(state, None if self.has_state(state.coupon_id) else holder_pairs):
            self._restore_requests(state.coupon_id, requests)
            return ReconcileChanges(
                coupon_id=state.coupon_id,
                installed=True,
                added=len(holder_pairs),
                released=0,
                deferred=0,
                stray=0,
                reserved=self.reserved_count(state.coupon_id),
            )
        snapshot = self._snapshot(state.coupon_id)
        stray = [(user, at) for user, at in snapshot.items() if user not in holders]
        released = 0
        if release_before is not None:
            released = self._release_many(state.coupon_id, [(user, at) for user, at in stray if at < release_before])
        missing = [(user, at) for user, at in holder_pairs if user not in snapshot]
        added, deferred = self._add_holders(state.coupon_id, missing)
        self._restore_requests(state.coupon_id, requests)
        return ReconcileChanges(
            coupon_id=state.coupon_id,
            installed=False,
            added=added,
            released=released,
            deferred=deferred,
            stray=len(stray),
            reserved=self.reserved_count(state.coupon_id),
        )

    @staticmethod
    def _validated_holders(coupon_id: int, holders: Mapping[int, int]) -> list[tuple[int, int]]:
        validate_id("couponId", coupon_id)
        return [(validate_id("userId", user), validate_millis("reservedAt", at)) for user, at in holders.items()]

    def _install(self, state: CouponState, holder_pairs: list[tuple[int, int]] | None) -> bool:
        """Build the set from ``holder_pairs`` and swap it in, unless a set exists; either way write
        the meta hash, the sentinels and the expiry. True if the set was built here.

        A new set gets a new holders' filter: its holders and the keys the idempotency hash still
        has (a reserve adds none while the state is missing). ``None``: the state was whole when
        looked at, nothing is staged (a set lost since then is made empty, without a filter)."""
        coupon_id = state.coupon_id
        token = uuid.uuid4().hex
        staging, staging_filter = keys.staging_key(coupon_id, token), keys.staging_holders_key(coupon_id, token)
        bits = holders.size_bits(state.total)
        for chunk in chunked(holder_pairs or [], self._chunk_size):
            pipe = self._client.pipeline(transaction=False)
            pipe.zadd(staging, {str(user): at for user, at in chunk})
            pipe.pexpire(staging, STAGING_TTL_MS)
            pipe.execute()
        if holder_pairs is not None:
            used_keys = (
                key for key, _ in self._client.hscan_iter(keys.idempotency_key(coupon_id), count=self._chunk_size)
            )
            members = [*(str(user) for user, _ in holder_pairs), *used_keys]
            self._client.set(staging_filter, holders.build(members, bits), px=STAGING_TTL_MS)
        installed = self._scripts.install(
            keys=[
                keys.meta_key(coupon_id),
                keys.reserved_key(coupon_id),
                staging,
                keys.requests_key(coupon_id),
                keys.rebuild_key(coupon_id),
                keys.holders_key(coupon_id),
                staging_filter,
            ],
            args=[*_meta_args(state), token, bits],
        )
        return bool(installed)

    def _snapshot(self, coupon_id: int) -> dict[int, int]:
        members = self._client.zscan_iter(keys.reserved_key(coupon_id), count=self._chunk_size)
        return {int(user): int(at) for user, at in members if user != SENTINEL}

    def _release_many(self, coupon_id: int, pairs: list[tuple[int, int]]) -> int:
        return sum(1 for outcome in self.release_all(coupon_id, pairs) if outcome is ReleaseOutcome.RELEASED)

    def _restore_requests(self, coupon_id: int, pairs: list[tuple[int, str]]) -> None:
        keys_of = [keys.reserved_key(coupon_id), keys.requests_key(coupon_id)]
        for chunk in chunked(pairs, self._chunk_size):
            self._scripts.restore_requests(keys=keys_of, args=flattened(chunk))

    def _add_holders(self, coupon_id: int, pairs: list[tuple[int, int]]) -> tuple[int, int]:
        added = deferred = 0
        for chunk in chunked(pairs, self._chunk_size):
            chunk_added, chunk_deferred = self._scripts.add_holders(
                keys=[keys.reserved_key(coupon_id), keys.meta_key(coupon_id), keys.holders_key(coupon_id)],
                args=flattened(chunk),
            )
            added += chunk_added
            deferred += chunk_deferred
        return added, deferred


def _request_id(value: str) -> str:
    """A request id as the intake makes them (a UUID), in its canonical text."""
    try:
        return str(uuid.UUID(value))
    except (ValueError, TypeError, AttributeError):
        raise InvalidInputError(f"requestId must be a UUID, got {value!r}") from None


def _meta_args(state: CouponState) -> tuple[int, int, int, int, str]:
    """The meta hash's values, in the order install.lua and update_state.lua take them."""
    return state.total, state.starts_at, state.ends_at, state.expires_at, "1" if state.closed else "0"
