"""A refuted run: an expected refutation's counterexample as the system it refutes runs
it (:mod:`.refuted_runs` for the flows, :mod:`.refuted_servers` for a distribution
server), with the row where the theorem's property fails.

Rules / theory of operation: a :class:`RefutedRun` holds, per row, what the receiver's
application was delivered by then (when the replay follows one receiver), the first row
after which a property is false and which, and the system's own words for it; a trace row
that no move of the system records is :class:`NotARun`.
"""

from __future__ import annotations

from dataclasses import dataclass


class NotARun(ValueError):
    """A trace row that no move of the refuted system produces."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RefutedRun:
    """A counterexample as the refuted system runs it.

    ``delivered`` holds the payloads delivered to the receiver's application after each row
    (in order); ``failed_at`` is the index of the first row after which a property of the
    theorem is false (``None``: none fails on this trace), ``failed`` names those properties.
    """

    rows: int
    delivered: tuple[tuple[str, ...], ...]
    failed_at: int | None
    failed: tuple[str, ...]
    reason: str = ""  # what the system itself says went wrong there, when it says so
    counted: bool = True  # whether ``delivered`` follows one receiver's deliveries

    def __post_init__(self) -> None:
        if len(self.delivered) != self.rows:
            raise ValueError("one delivery record per row")
        if (self.failed_at is None) != (not self.failed):
            raise ValueError("a failure has a row and a property, or neither")

    def new_deliveries(self, index: int) -> tuple[str, ...]:
        """The payloads row ``index`` delivered."""
        before = self.delivered[index - 1] if index else ()
        return self.delivered[index][len(before) :]

    def counts(self, upto: int | None = None) -> dict[str, int]:
        """How often each payload was delivered by row ``upto`` (the last row if None)."""
        done = self.delivered[self.rows - 1 if upto is None else upto] if self.rows else ()
        return {m: done.count(m) for m in dict.fromkeys(done)}


__all__ = ["NotARun", "RefutedRun"]
