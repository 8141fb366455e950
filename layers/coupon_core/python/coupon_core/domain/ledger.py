"""The database's writes of the worker and the DLQ handler (``adapters.postgres.ledger.SqlLedger``
implements both ports): a group of records issued, or failures recorded, each in one
transaction on the coupon's row, so that a request is never both issued and failed.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # in annotations only
    from coupon_core.domain.delivery import Position
    from coupon_core.domain.records import IssueRecord
    from coupon_core.domain.reservations import ReleaseOutcome


class GroupOutcome(StrEnum):
    """What the database said about one record of a coupon's group."""

    ISSUED = "ISSUED"
    ALREADY_ISSUED = "ALREADY_ISSUED"
    ALREADY_FAILED = "ALREADY_FAILED"  # the request has a recorded failure: it must never be issued
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"
    NO_STOCK = "NO_STOCK"


class IssueLedger(Protocol):
    """The worker's writes; raises ``DatabaseUnavailableError``."""

    def record_group(self, coupon_id: int, messages: Sequence[IssueRecord]) -> list[GroupOutcome]: ...


@dataclass(frozen=True)
class Failure:
    """A request that ended without an issue: its record, why, and where the record sits in Kafka."""

    record: IssueRecord
    reason: str
    source: Position


class FailureOutcome(StrEnum):
    RECORDED = "RECORDED"
    ALREADY_RECORDED = "ALREADY_RECORDED"
    ALREADY_ISSUED = "ALREADY_ISSUED"


class FailureLedger(Protocol):
    """The DLQ handler's writes; raises ``DatabaseUnavailableError``."""

    def record_failures(self, coupon_id: int, failures: Sequence[Failure]) -> list[FailureOutcome]:
        """Record each failure of one coupon unless its user holds an issue, in one transaction
        serialised with the worker's (so a request is never both issued and failed)."""
        ...

    def note_releases(self, releases: Mapping[uuid.UUID, ReleaseOutcome]) -> None:
        """Keep what the release of each recorded request found, where it is not kept yet."""
        ...
