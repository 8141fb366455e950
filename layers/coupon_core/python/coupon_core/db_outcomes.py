"""What the database said about each record of a group (see ``coupon_core.db.ledger``)."""

from __future__ import annotations

from enum import StrEnum


class GroupOutcome(StrEnum):
    ISSUED = "ISSUED"
    ALREADY_ISSUED = "ALREADY_ISSUED"
    COUPON_NOT_FOUND = "COUPON_NOT_FOUND"
    NO_STOCK = "NO_STOCK"
