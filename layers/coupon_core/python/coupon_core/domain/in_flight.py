"""What a run of Kafka records holds in flight (``InFlight``): accepted requests the worker has
not processed yet, which the reconcile and a coupon's state rebuild count as holders beside the
database's issued users.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from coupon_core.domain.coupons import IssuedUsers
    from coupon_core.domain.delivery import Delivered


@dataclass(frozen=True)
class InFlight:
    """Accepted requests whose record is in Kafka but not yet processed by the worker.

    ``holders`` maps a coupon id to its users and their reservation times (ms): together with
    the users the database has issued, they are every user who holds a copy of the coupon.
    """

    holders: dict[int, dict[int, int]]
    request_ids: dict[int, dict[int, str]] = field(default_factory=dict)  # coupon -> user -> request id

    def of(self, coupon_id: int) -> dict[int, int]:
        return self.holders.get(coupon_id, {})

    def with_issued(self, issued: IssuedUsers) -> tuple[dict[int, int], dict[int, str]]:
        """Every holder of ``issued``'s coupon, the users in flight and the database's issued users
        over them: each one's reservation time (ms), and the request id that holds its copy.

        A user whose latest record in flight is a request the database has settled holds what the
        database says, nothing more: a failed request was released by the DLQ handler and is
        never issued (ALREADY_FAILED), though the group may not have committed past its record
        yet; an issued one is the database's, and once canceled on a coupon that allows a second
        take its copy went back to stock, though a tail read before the worker wrote it still
        shows the record."""
        coupon_id = issued.coupon.coupon_id
        request_ids = self.request_ids.get(coupon_id, {})
        in_flight = {
            user: at for user, at in self.of(coupon_id).items() if request_ids.get(user) not in issued.settled_requests
        }
        holding_requests = {user: rid for user, rid in request_ids.items() if user in in_flight}
        return in_flight | issued.reserved_at, holding_requests | issued.request_ids

    @classmethod
    def of_records(cls, records: Sequence[Delivered]) -> InFlight:
        """The holders in a run of records, each with its latest record; a malformed record holds nothing."""
        holders: dict[int, dict[int, int]] = {}
        request_ids: dict[int, dict[int, str]] = {}
        for delivered in records:
            record = delivered.record
            if record is None:
                continue
            users = holders.setdefault(record.coupon_id, {})
            if record.reserved_at >= users.get(record.user_id, 0):
                users[record.user_id] = record.reserved_at
                request_ids.setdefault(record.coupon_id, {})[record.user_id] = str(record.request_id)
        return cls(holders, request_ids)


class InFlightReader(Protocol):
    """Reads the records in Kafka the worker has not processed yet; raises ``ReadBackError``.

    The worker group's committed offsets are read first, the ends of the partitions after them:
    a caller that reads the database after ``read`` returns sees every record before the
    committed offsets, and every record acknowledged before the call is in one of the two.
    """

    def read(self) -> InFlight: ...
