"""Every Redis call on a coupon's state in one object, for the tests and benchmarks that reserve
and rebuild on one server: the functions split them by job (the intake's ``IssueStore``, the
others' ``WholeStore``, the reconcile's ``ReconcileStore``)."""

from __future__ import annotations

import uuid

import redis

from coupon_core.domain.reservations import MissingState, Reservation
from lua_redis.issue_store import IssueStore
from lua_redis.reconcile import ReconcileStore


class WholeStore(ReconcileStore):
    """:class:`ReconcileStore` with the intake's calls (reserve, lookup, wait for replicas)."""

    def __init__(self, client: redis.Redis, *, chunk_size: int = 1000) -> None:
        super().__init__(client, chunk_size=chunk_size)
        self.issue_store = IssueStore(client)

    def reserve(
        self, coupon_id: int, user_id: int, request_id: uuid.UUID | None = None, *, idempotency_key: str = ""
    ) -> Reservation:
        return self.issue_store.reserve(coupon_id, user_id, request_id, idempotency_key=idempotency_key)

    def lookup(self, coupon_id: int, claim_ms: int) -> MissingState:
        return self.issue_store.lookup(coupon_id, claim_ms)

    def wait_for_replicas(self, coupon_id: int, user_id: int, reserved_at: int, replicas: int, timeout_ms: int) -> int:
        return self.issue_store.wait_for_replicas(coupon_id, user_id, reserved_at, replicas, timeout_ms)
