"""A coupon's whole state in Redis, as the functions that build, reconcile and change it use it:
``ReservationStore`` adds to the intake's :class:`~lua_redis.issue_store.IssueStore` the reads,
the releases in bulk, the rebuild's gate, the meta's update and the reconcile.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice

import redis

from coupon_core.domain.coupons import CouponState, ReconcileChanges
from coupon_core.domain.records import validate_id, validate_millis
from coupon_core.domain.reservations import ReleaseOutcome
from coupon_core.errors import InvalidInputError
from lua_redis import holders, keys
from lua_redis.client import redis_unavailable, register
from lua_redis.issue_store import RELEASE_CODES, IssueStore

STAGING_TTL_MS = 10 * 60 * 1000  # a staging set left by a crashed rebuild disappears by itself
SENTINEL = "0"  # member of the set (score 0) and field of the requests hash: their loss shows


def chunked[Pair: tuple[int, int] | tuple[int, str]](items: Sequence[Pair], size: int) -> Iterator[list[Pair]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def flattened(pairs: Sequence[tuple[int, int] | tuple[int, str]]) -> list[int | str]:
    return [value for pair in pairs for value in pair]


class ReservationStore(IssueStore):
    """A coupon's reservations in Redis (docs/design.md, Redis state).

    Every method validates its arguments before it touches Redis, and raises
    :class:`StateUnavailableError` when Redis cannot be reached.

    ``chunk_size`` bounds how many users one command or script call carries during a
    reconcile, so that no single call blocks the server for long, whatever the coupon's size.
    """

    def __init__(self, client: redis.Redis, *, chunk_size: int = 1000) -> None:
        super().__init__(client)
        self._chunk_size = validate_id("chunk_size", chunk_size)
        self._add_holders_script = register(client, "holders", "add_holders")
        self._restore_requests_script = register(client, "restore_requests")
        self._install_script = register(client, "install")
        self._rebuild_gate = register(client, "rebuild_gate")
        self._update_state = register(client, "update_state")

    @redis_unavailable
    def release_all(self, coupon_id: int, reservations: Sequence[tuple[int, int]]) -> list[ReleaseOutcome]:
        """Release many (user, reservation time) pairs of one coupon, fenced, in bounded calls."""
        validate_id("couponId", coupon_id)
        pairs = [(validate_id("userId", user), validate_millis("reservedAt", at)) for user, at in reservations]
        outcomes: list[ReleaseOutcome] = []
        for chunk in chunked(pairs, self._chunk_size):
            codes = self._release(
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
        return bool(self._update_state(keys=coupon_keys, args=[*_meta_args(state)]))

    @redis_unavailable
    def rebuild_wait_ms(self, coupon_id: int, wait_ms: int) -> int:
        """Milliseconds before a lost state may be rebuilt; the first call starts a wait of ``wait_ms``."""
        validate_id("couponId", coupon_id)
        validate_millis("waitMs", wait_ms)
        return int(self._rebuild_gate(keys=[keys.rebuild_key(coupon_id)], args=[wait_ms]))

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
        installed = self._install_script(
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
            self._restore_requests_script(keys=keys_of, args=flattened(chunk))

    def _add_holders(self, coupon_id: int, pairs: list[tuple[int, int]]) -> tuple[int, int]:
        added = deferred = 0
        for chunk in chunked(pairs, self._chunk_size):
            chunk_added, chunk_deferred = self._add_holders_script(
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
