"""A coupon's state in Redis as the functions behind the intake use it: its reads, its releases
(one, or many in bounded calls), the update of its meta, and its install from a list of holders.
The intake's own calls are ``issue_store.IssueStore``'s; the reconcile's repairs are
``reconcile.ReconcileStore``'s.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

import redis

from coupon_core.domain.coupons import CouponState
from coupon_core.domain.ids import validate_id, validate_millis
from coupon_core.domain.reservations import ReleaseOutcome
from lua_redis import holders, keys
from lua_redis.client import redis_unavailable, register

STAGING_TTL_MS = 10 * 60 * 1000  # a staging set left by a crashed rebuild disappears by itself
BITS_PER_COPY = 24  # a user and a key per copy: 12 bits a member, 5 hashes, ~0.5 % false positives
MIN_BITS = 1024
SENTINEL = "0"  # member of the set (score 0) and field of the requests hash: their loss shows


def rebuild_key(coupon_id: int) -> str:
    """The server time from which a lost state may be rebuilt (``rebuild_gate.lua``, ``install.lua``)."""
    return f"{keys.coupon_tag(coupon_id)}:rebuild"


def staging_key(coupon_id: int, token: str) -> str:
    """Temporary set a state is built in before it is swapped in."""
    return f"{keys.coupon_tag(coupon_id)}:staging:{token}"


def staging_holders_key(coupon_id: int, token: str) -> str:
    """Temporary filter of the same holders, swapped in with the set."""
    return f"{staging_key(coupon_id, token)}:holders"


def size_bits(total: int) -> int:
    """The filter's size for a coupon of ``total`` copies, in bits (a whole number of bytes).

    A top-up past it only raises the false positives (more round trips), never an answer."""
    return max(MIN_BITS, -(-total * BITS_PER_COPY // 8) * 8)


def build_filter(members: Iterable[str], bits: int) -> bytes:
    """A filter of ``bits`` bits holding ``members``, laid out as Redis' SETBIT lays out a
    string (bit 0 is the first byte's most significant bit)."""
    data = bytearray(bits // 8)
    for member in members:
        for position in holders.positions(member, bits):
            data[position >> 3] |= 0x80 >> (position & 7)
    return bytes(data)


def chunked[Pair: tuple[int, int] | tuple[int, str]](items: Sequence[Pair], size: int) -> Iterator[list[Pair]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def reservation_pairs(pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """(user id, reservation time in ms) pairs, each checked: ``InvalidInputError`` otherwise."""
    return [(validate_id("userId", user), validate_millis("reservedAt", at)) for user, at in pairs]


def flattened(pairs: Sequence[tuple[int, int] | tuple[int, str]]) -> list[int | str]:
    return [value for pair in pairs for value in pair]


class ReservationStore:
    """A coupon's reservations in Redis (docs/design.md, Redis state).

    Every method validates its arguments before it touches Redis, and raises
    :class:`StateUnavailableError` when Redis cannot be reached.

    ``chunk_size`` bounds how many users one command or script call carries (a bulk release, an
    install, a reconcile), so that no single call blocks the server for long, whatever the
    coupon's size.
    """

    def __init__(self, client: redis.Redis, *, chunk_size: int = 1000) -> None:
        self._client = client
        self._chunk_size = validate_id("chunk_size", chunk_size)
        self._release = register(client, "release")
        self._install_script = register(client, "install")
        self._update_state = register(client, "update_state")

    def release(self, coupon_id: int, user_id: int, reserved_at: int) -> ReleaseOutcome:
        """Release a reservation only if it is the one made at ``reserved_at`` (fenced)."""
        (outcome,) = self.release_all(coupon_id, [(user_id, reserved_at)])
        return outcome

    @redis_unavailable
    def release_all(self, coupon_id: int, reservations: Sequence[tuple[int, int]]) -> list[ReleaseOutcome]:
        """Release many (user, reservation time) pairs of one coupon, fenced, in bounded calls."""
        validate_id("couponId", coupon_id)
        pairs = reservation_pairs(reservations)
        outcomes: list[ReleaseOutcome] = []
        for chunk in chunked(pairs, self._chunk_size):
            answers = self._release(
                keys=[keys.reserved_key(coupon_id), keys.requests_key(coupon_id)], args=flattened(chunk)
            )
            outcomes.extend(map(ReleaseOutcome, answers))
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
    def server_time_ms(self) -> int:
        """The Redis server's clock, the one every reservation time comes from (epoch ms)."""
        seconds, micros = self._client.time()
        return int(seconds) * 1000 + int(micros) // 1000

    @redis_unavailable
    def install(self, state: CouponState, holder_pairs: Sequence[tuple[int, int]] | None) -> bool:
        """Build the set from ``holder_pairs`` (user, reservation time) and swap it in, unless a set
        exists; either way write the meta hash, the sentinels and the expiry. True if the set was
        built here (a new coupon's state is installed from no holders).

        A new set gets a new holders' filter: its holders and the keys the idempotency hash still
        has (a reserve adds none while the state is missing). ``None``: the state was whole when
        looked at, nothing is staged (a set lost since then is made empty, without a filter)."""
        validate_id("couponId", state.coupon_id)
        return self._install(state, None if holder_pairs is None else reservation_pairs(holder_pairs))

    def _install(self, state: CouponState, holder_pairs: list[tuple[int, int]] | None) -> bool:
        """:meth:`install` with ``holder_pairs`` checked already."""
        coupon_id = state.coupon_id
        token = uuid.uuid4().hex
        staging, staging_filter = staging_key(coupon_id, token), staging_holders_key(coupon_id, token)
        bits = size_bits(state.total)
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
            self._client.set(staging_filter, build_filter(members, bits), px=STAGING_TTL_MS)
        installed = self._install_script(
            keys=[
                keys.meta_key(coupon_id),
                keys.reserved_key(coupon_id),
                staging,
                keys.requests_key(coupon_id),
                rebuild_key(coupon_id),
                keys.holders_key(coupon_id),
                staging_filter,
            ],
            args=[*_meta_args(state), token, bits],
        )
        return bool(installed)


def _meta_args(state: CouponState) -> tuple[int, int, int, int, str]:
    """The meta hash's values, in the order install.lua and update_state.lua take them."""
    return state.total, state.starts_at, state.ends_at, state.expires_at, "1" if state.closed else "0"
