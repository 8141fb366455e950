"""A table of at most so many entries, the oldest forgotten first: what a container keeps of
Redis' answers (``issuing.AnswerMemory``) and of sales (``availability.AvailabilityService``)."""

from __future__ import annotations


def keep[Key, Value](table: dict[Key, Value], key: Key, value: Value, bound: int) -> None:
    """``table[key] = value``, the oldest entry forgotten first once ``bound`` are kept (a dict
    keeps its insertion order, and a key kept again counts as new)."""
    table.pop(key, None)
    if len(table) >= bound:
        del table[next(iter(table))]
    table[key] = value
