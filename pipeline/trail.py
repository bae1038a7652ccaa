"""The evidence trail of one connection: per packet identifier, its last packets.

A finding's evidence is its packet identifier's last packets (or the packet itself), built
only when there is a finding: until then a packet is kept as a :class:`Recent`, what its
trace entry is made from. Only ``EVIDENCE_IDS`` identifiers are kept (the least recently
used is forgotten first), so a connection's memory does not grow with its length; a
finding on an identifier unused for that many others shows only its own packet.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from pubproof.pipeline.describe import evidence_from

EVIDENCE_HISTORY: Final = 8  # a finding's evidence: its packet identifier's last packets
EVIDENCE_IDS: Final = 64


class Recent:
    """A judged packet as its evidence needs it: direction, frame, offset, fields (the
    payload's hex in them, if any, the evidence replaces), payload length, and the head of
    its payload
    (:func:`~pubproof.pipeline.describe.payload_head`). Made once per judged packet and
    never changed: a plain slotted class (:mod:`pubproof.pipeline.fast.layout`)."""

    __slots__ = ("direction", "fields", "frame", "head", "offset", "payload_len")

    def __init__(
        self,
        direction: str,
        frame: int,
        offset: int,
        fields: Mapping[str, Any],
        payload_len: int | None,
        head: bytes,
    ) -> None:
        self.direction = direction
        self.frame = frame
        self.offset = offset
        self.fields = fields
        self.payload_len = payload_len
        self.head = head


class Trail:
    """The last packets of each packet identifier of one connection."""

    __slots__ = ("conn", "history")

    def __init__(self, conn: str) -> None:
        self.conn = conn
        self.history: dict[int, deque[Recent]] = {}

    def __len__(self) -> int:
        """The packet identifiers kept."""
        return len(self.history)

    def clear(self) -> None:
        """Forget every packet (nothing to come will need them)."""
        self.history.clear()

    def note(self, packet_id: int, recent: Recent) -> deque[Recent]:
        """Keep ``recent`` as its identifier's latest packet; that identifier's trail, as
        it is until the next note (the trail of an identifier forgotten is cleared and
        reused for a new one). Once per judged packet of the PUBLISH family
        (:meth:`pubproof.pipeline.connection_judging.ConnectionJudging._judge` and ``_judge5``)."""
        history = self.history
        # (get and del, not pop: the compiled build calls dict.pop as a method)
        trail = history.get(packet_id)
        if trail is not None:
            del history[packet_id]  # re-inserted last: most recent
        elif len(history) >= EVIDENCE_IDS:
            # the identifier least recently used is forgotten; its deque is reused (a new
            # one costs a call with keywords)
            oldest = next(iter(history))
            trail = history[oldest]
            del history[oldest]
            trail.clear()
        else:
            trail = deque(maxlen=EVIDENCE_HISTORY)
        history[packet_id] = trail
        trail.append(recent)
        return trail

    def entry(
        self, direction: str, frame: int, offset: int, fields: dict[str, Any]
    ) -> dict[str, Any]:
        """A trace entry of this connection."""
        return {**fields, "dir": direction, "conn": self.conn, "frame": frame, "offset": offset}

    def evidence(self, recents: deque[Recent] | tuple[Recent, ...]) -> list[dict[str, Any]]:
        """The trace entries of kept packets."""
        return [
            self.entry(
                r.direction, r.frame, r.offset, evidence_from(r.fields, r.payload_len, r.head)
            )
            for r in recents
        ]
