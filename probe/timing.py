"""How long the probe waits, and the deadlines that bound every wait.

Every socket operation of a check is capped by the check's :class:`Deadline`, and every
check by the whole run's: a broker that hangs makes the probe report ``no-answer``, it never
makes the probe hang.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """The probe's waits, in seconds."""

    check: float = 3.0  # hard deadline of one check
    run: float = 120.0  # deadline of the whole run
    answer: float = 1.0  # waiting for a packet the broker owes
    quiet: float = 0.3  # a window in which nothing more should arrive
    liveness: float = 0.5  # waiting for a sign of life after a wait ran out


class Deadline:
    """A point in time (monotonic clock) that waits are capped by."""

    __slots__ = ("_end",)

    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self._end - time.monotonic())

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return time.monotonic() >= self._end

    def cap(self, seconds: float) -> float:
        """``seconds``, or what is left of the deadline if that is less."""
        return min(seconds, self.remaining())
