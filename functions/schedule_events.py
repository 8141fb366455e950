"""The EventBridge schedule's event, as the scheduled functions (rebuild, relay) recognise it."""

from __future__ import annotations

from typing import Any


def is_scheduled(event: Any) -> bool:
    return (
        isinstance(event, dict)
        and event.get("source") == "aws.events"
        and event.get("detail-type") == "Scheduled Event"
    )
