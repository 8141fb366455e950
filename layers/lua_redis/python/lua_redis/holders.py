"""The holders' filter: a Bloom filter, kept in Redis beside a coupon's reservations, of every user
who took a copy and every Idempotency-Key a copy was taken with.

An intake container that remembers a coupon sold out answers SOLD_OUT from memory only to a
request the filter proves is neither a holder's nor made with a key already used: anything else
(a holder's DUPLICATE, a keyed retry's own SUCCESS, a KEY_REUSED) still runs ``reserve.lua``. A
Bloom filter never misses a member, so the memory never refuses a holder; a false positive costs
one round trip, never a wrong answer. It only grows: a released user stays in it (a round trip
for them, no more), and a rebuilt state gets a new filter of its current holders.

Why a filter and not a copy of the holders, or a read per request (docs/design.md, the memory
of refusals): at 100,000 copies the filter is 300 KB, fetched once per container and per change,
and costs Redis one GET; a copy of the set is a ZRANGE of 100,000 members on the coupon's one
slot for every container; a read per request is the round trip the memory exists to save.

The same hash on both sides: ``reserve.lua`` and the reconcile's script that adds holders set
the bits with ``holders.lua``, from the SHA-1 of the member's text (five 32-bit words, each modulo the size);
:func:`positions` is its Python twin, and a test holds the two to the same bits on real Valkey.
A filter is sized and built whole by the state's install (``store.size_bits``, ``store.build_filter``).
"""

from __future__ import annotations

import hashlib
import struct

HASHES = 5  # SHA-1's five 32-bit words
_WORDS = struct.Struct(f">{HASHES}I")


def positions(member: str, bits: int) -> tuple[int, ...]:
    """The bits ``member`` sets in a filter of ``bits`` bits (``holders.lua``'s twin)."""
    return tuple(word % bits for word in _WORDS.unpack(hashlib.sha1(member.encode()).digest()))


class BloomHoldersFilter:
    """A filter read from Redis (the domain's ``HoldersFilter``)."""

    __slots__ = ("_bits", "data")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._bits = len(data) * 8

    def _has(self, member: str) -> bool:
        data, bits = self.data, self._bits
        return all(data[position >> 3] & (0x80 >> (position & 7)) for position in positions(member, bits))

    def may_hold(self, user_id: int, idempotency_key: str) -> bool:
        """False only if ``user_id`` took no copy and ``idempotency_key`` (if any) took none."""
        return self._has(str(user_id)) or (idempotency_key != "" and self._has(idempotency_key))
