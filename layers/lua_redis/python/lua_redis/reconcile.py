"""A coupon's state made to agree with who holds its copies, as the reconcile does it (the
rebuild and builder functions, ``coupon_core.domain.reconcile``): the stray members released,
the missing holders added back, the lost request ids restored, and the wait before a lost
state's rebuild (docs/design.md, Redis state).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import redis

from coupon_core.domain.coupons import CouponState, ReconcileChanges
from coupon_core.domain.ids import validate_id, validate_millis
from coupon_core.domain.reservations import ReleaseOutcome
from coupon_core.errors import InvalidInputError
from lua_redis import keys
from lua_redis.client import redis_unavailable, register
from lua_redis.store import SENTINEL, ReservationStore, chunked, flattened, rebuild_key, reservation_pairs


class ReconcileStore(ReservationStore):
    """:class:`ReservationStore` and the reconcile's repairs."""

    def __init__(self, client: redis.Redis, *, chunk_size: int = 1000) -> None:
        super().__init__(client, chunk_size=chunk_size)
        self._add_holders_script = register(client, "holders", "add_holders")
        self._restore_requests_script = register(client, "restore_requests")
        self._rebuild_gate = register(client, "rebuild_gate")

    @redis_unavailable
    def rebuild_wait_ms(self, coupon_id: int, wait_ms: int) -> int:
        """Milliseconds before a lost state may be rebuilt; the first call starts a wait of ``wait_ms``."""
        validate_id("couponId", coupon_id)
        validate_millis("waitMs", wait_ms)
        return int(self._rebuild_gate(keys=[rebuild_key(coupon_id)], args=[wait_ms]))

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
        validate_id("couponId", state.coupon_id)
        holder_pairs = reservation_pairs(holders.items())
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
