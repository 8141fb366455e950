"""The outbox table as the changes write it: one row per event, in the change's own transaction
(``event_row``). The relay's side, claiming and marking events, is ``outbox_relay.py``."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any


def event_row(
    event_type: str, *, issue_id: int, coupon_id: int, user_id: int, request_id: uuid.UUID, **details: Any
) -> dict[str, Any]:
    """The values of one outbox row about an issued copy: what the payload of every coupon event
    carries (couponId, userId, requestId) and its own ``details`` (the time, as ISO 8601)."""
    payload = {"couponId": coupon_id, "userId": user_id, "requestId": str(request_id)}
    payload |= {name: value.isoformat() if isinstance(value, datetime) else value for name, value in details.items()}
    return {"aggregate_id": str(issue_id), "coupon_id": coupon_id, "event_type": event_type, "payload": payload}
