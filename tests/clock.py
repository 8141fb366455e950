"""A clock that moves only when a test moves it, in monotonic seconds: the injected clock of the
intake's memory of refusals (``issuing.AnswerMemory``) and of the fault proxy's connection rate."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Clock:
    now: float = 1_000.0

    def __call__(self) -> float:
        return self.now
