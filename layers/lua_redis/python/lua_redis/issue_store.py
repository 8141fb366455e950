"""The intake's Redis: reserve a copy, release it after a failed produce, wait for replicas, and
ask the registry of coupons about a state reserve found missing (docs/design.md, Redis state).

``reserve`` is the intake's one Redis call per request. Everything else done to a coupon's state
(build, reconcile, change) is ``store.ReservationStore``'s and ``reconcile.ReconcileStore``'s.
"""

from __future__ import annotations

import uuid
from typing import Any

import redis
from redis.client import NEVER_DECODE

from coupon_core.domain.reservations import IssueOutcome, MissingState, ReleaseOutcome, Reservation
from lua_redis import holders, keys
from lua_redis.client import redis_unavailable, register

# The scripts' codes, each mapped once to the domain's value: reserve.lua answers an index of
# RESERVE_CODES, registry_lookup.lua one of LOOKUP_CODES (release.lua answers the names).
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
LOOKUP_CODES = (MissingState.BUILD, MissingState.COUPON_NOT_FOUND, MissingState.ENDED, MissingState.BUILDING)

_TIMED = (IssueOutcome.SUCCESS, IssueOutcome.DUPLICATE)
NO_EDGE_MS = 2**31  # reserve.lua's -1: a refusal no edge of the window ends (ENDED, CLOSED)
FILTERS_KEPT = 64  # the holders' filters a store keeps, one per sold-out coupon (300 KB at 100,000 copies)

# NEVER_DECODE is redis-py's own option for a reply read as bytes on a decoding client (DUMP,
# SLOWLOG): the filter is binary. redis is pinned, and a services test reads a filter through it.
_AS_BYTES: dict[str, Any] = {NEVER_DECODE: []}


class IssueStore:
    """A coupon's reservations as the intake uses them (the ``issuing`` module's ports).

    Its arguments come checked (ids by the request's model, ``functions/intake/request.py``;
    times from Redis' own ``TIME``; counts and bounds from validated settings), so it does not
    check them again. Every method raises :class:`StateUnavailableError` when Redis cannot be
    reached.
    """

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._reserve = register(client, "holders", "reserve")
        self._release = register(client, "release")
        self._lookup = register(client, "registry_lookup")
        self._confirm = register(client, "confirm")
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
        coupon_keys = [
            keys.reserved_key(coupon_id),
            keys.meta_key(coupon_id),
            keys.requests_key(coupon_id),
            keys.idempotency_key(coupon_id),
            keys.holders_key(coupon_id),
        ]
        with redis_unavailable:
            code, reserved_at, decided_at, *standing = self._reserve(
                keys=coupon_keys, args=[user_id, str(request_id or uuid.uuid4()), idempotency_key]
            )
        outcome, decided_at = RESERVE_CODES[code], int(decided_at)
        if outcome in _TIMED:
            return Reservation(outcome, int(reserved_at), stands_ms=int(standing[0]), decided_at=decided_at)
        if standing:
            return self._standing(coupon_id, outcome, standing, decided_at)
        return Reservation(outcome, decided_at=decided_at)

    def _standing(self, coupon_id: int, outcome: IssueOutcome, standing: list[Any], decided_at: int) -> Reservation:
        """A refusal that stands: ``[ms until the window's edge (-1: none)]``, and for SOLD_OUT
        the filter's version ``epoch, added`` (no epoch: the state keeps no filter)."""
        stands_ms = NO_EDGE_MS if standing[0] < 0 else int(standing[0])
        if outcome is not IssueOutcome.SOLD_OUT:
            return Reservation(outcome, stands_ms=stands_ms, decided_at=decided_at)
        epoch, added = standing[1], int(standing[2])
        filter_ = self._holders_filter(coupon_id, (epoch, added)) if epoch else None
        if filter_ is None:  # nobody's refusal but this caller's
            return Reservation(outcome, decided_at=decided_at)
        return Reservation(outcome, stands_ms=stands_ms, holders=filter_, decided_at=decided_at)

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
        args = [user_id, reserved_at]
        (code,) = self._release(keys=[keys.reserved_key(coupon_id), keys.requests_key(coupon_id)], args=args)
        return ReleaseOutcome(code)

    @redis_unavailable
    def wait_for_replicas(self, coupon_id: int, user_id: int, reserved_at: int, replicas: int, timeout_ms: int) -> int:
        """How many replicas have the user's reservation made at ``reserved_at``, waiting up to
        ``timeout_ms`` for ``replicas`` of them (``WAIT``); 0 if the primary no longer holds it.

        One round trip: ``confirm.lua`` and ``WAIT`` pipelined on one connection, so that the
        WAIT counts a write of its own connection that follows the reservation (``confirm.lua``
        says why), whatever connection made the reservation.
        """
        args = [user_id, reserved_at]
        with self._client.pipeline(transaction=False) as pipe:
            self._confirm(keys=[keys.reserved_key(coupon_id), keys.replicated_key(coupon_id)], args=args, client=pipe)
            pipe.wait(replicas, timeout_ms)
            held, acknowledged = pipe.execute()
        return int(acknowledged) if int(held) else 0

    @redis_unavailable
    def lookup(self, coupon_id: int, claim_ms: int) -> MissingState:
        """What the registry of coupons says of a coupon whose state reserve found missing: BUILD
        to one caller per ``claim_ms`` (the claim), BUILDING to the others, or COUPON_NOT_FOUND
        or ENDED without a build (``registry_lookup.lua``)."""
        code = self._lookup(keys=[keys.REGISTRY_KEY, keys.build_claim_key(coupon_id)], args=[coupon_id, claim_ms])
        return LOOKUP_CODES[int(code)]
