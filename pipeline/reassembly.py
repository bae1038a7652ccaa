"""One direction of a TCP connection put back in order, streamed.

A :class:`Stream` takes the segments of one direction in capture order and hands out the
bytes in stream order as :class:`Data` and :class:`Gap` events, each byte once:

- **retransmissions and overlaps**: the first copy of a byte wins; later copies are
  counted as ``duplicate`` bytes and compared with the recent history (the last
  ``HISTORY`` bytes delivered): a copy that differs is a *conflicting overlap*, counted;
- **out-of-order segments** wait in a buffer until the bytes before them arrive;
- **gaps** (bytes lost from the capture): when the buffer holds more than ``window_bytes``
  or ``window_segments``, or when the connection ends, the hole before the first buffered
  segment is given up as a :class:`Gap` and delivery goes on after it. A segment the
  snapshot length cut short gives its gap at once (the missing bytes were sent, and only a
  retransmission could bring them: if one does, it counts as duplicate);
- **mid-connection starts**: without a SYN the first segment seen defines offset 0; bytes
  that arrive later from before it are counted as ``before-start``.

Memory is bounded by the window (plus the history, dropped once the connection closes),
never by the length of the stream.
Sequence numbers are unwrapped into 64-bit stream offsets relative to the next expected
byte, so streams longer than 4 GiB are fine.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Final

HISTORY: Final = 65536
#: the history is kept as the segments' own bytes objects, not copied; this many payloads
#: kept as they came are joined into one (a history of tiny segments would otherwise hold
#: an object per few bytes): each byte is copied once at most
HISTORY_CHUNKS: Final = 256
WINDOW_BYTES = 4 * 1024 * 1024
WINDOW_SEGMENTS = 2048
_MASK: Final = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class Data:
    """Bytes of the stream from ``offset``; ``whole`` when they are a segment's first
    byte onwards (so a framer may try to resynchronise there)."""

    offset: int
    data: bytes
    frame: int
    whole: bool


@dataclass(frozen=True, slots=True)
class Gap:
    """Bytes of the stream that the capture does not hold."""

    offset: int
    length: int
    frame: int  # the frame at which the gap was given up


Event = Data | Gap


class Stream:
    """The bytes one end sent, in stream order. Feed segments; collect events."""

    __slots__ = (
        "base", "before_start", "captured", "conflict_frame", "conflicts", "duplicate",
        "events", "gaps", "hist", "hist_joined", "hist_start", "missing", "next",
        "pending", "pending_bytes",
        "saw_syn", "serial", "window_bytes", "window_segments",
    )  # fmt: skip

    def __init__(
        self, *, window_bytes: int = WINDOW_BYTES, window_segments: int = WINDOW_SEGMENTS
    ) -> None:
        self.base: int | None = None  # sequence number of stream offset 0
        self.saw_syn = False
        self.next = 0  # stream offset of the next byte to deliver
        self.pending: list[tuple[int, int, bytes, int, int]] = []  # heap
        self.pending_bytes = 0
        self.serial = 0  # arrival order: the first copy wins among equal offsets
        # the bytes delivered from hist_start on (the last HISTORY to 2 * HISTORY): the
        # payloads as they came (from hist_joined on) after those joined, the first from
        # at or before hist_start, the last up to next. A bytearray grown by each payload
        # copied every byte up to about eight times as it grew (about an eighth of the
        # pipeline's second-level cache misses, by cachegrind, on the synthetic captures)
        self.hist: list[bytes] = []
        self.hist_joined = 0
        self.hist_start = 0
        self.events: list[Event] = []
        self.window_bytes = window_bytes
        self.window_segments = window_segments
        self.captured = 0  # payload bytes captured in this direction
        self.duplicate = 0
        self.before_start = 0
        self.missing = 0
        self.gaps = 0
        self.conflicts = 0
        self.conflict_frame: int | None = None

    def syn(self, seq: int) -> None:
        """A SYN: the stream starts after it (the SYN takes one sequence number)."""
        if self.base is None:
            self.base = (seq + 1) & _MASK
            self.saw_syn = True

    def segment(self, seq: int, payload: bytes, payload_len: int, frame: int) -> None:
        """A segment's payload (``payload_len`` > ``len(payload)`` when the snapshot cut it)."""
        if not payload_len:
            return
        self.captured += len(payload)
        if self.base is None:
            self.base = seq
        rel = (seq - self.base - self.next) & _MASK
        offset = self.next + (rel - (1 << 32) if rel & 0x80000000 else rel)
        if offset < 0:
            cut = min(-offset, len(payload))
            self.before_start += cut
            payload, payload_len, offset = payload[cut:], payload_len - cut, offset + cut
            if not payload:
                return
        if offset <= self.next:
            self._deliver(offset, payload, payload_len, frame, True)
            self._drain()
            return
        heapq.heappush(self.pending, (offset, self.serial, payload, payload_len, frame))
        self.serial += 1
        self.pending_bytes += len(payload)
        while self.pending and (
            self.pending_bytes > self.window_bytes or len(self.pending) > self.window_segments
        ):
            # the window is full: what the first buffered segment waits for is lost
            self._gap(self.pending[0][0] - self.next, frame)
            self._drain()

    def accept(self, seq: int, payload: bytes) -> int:
        """The common case, without an event: a whole segment (not cut by the snapshot
        length, ``payload`` not empty) that starts exactly at the next byte, with nothing
        buffered. Its bytes are delivered as :meth:`segment` would deliver them, and its
        stream offset returned; the caller hands them on itself. -1, and nothing changed,
        for any other segment (:meth:`segment` takes it)."""
        base = self.base
        if base is None or self.pending or (seq - base - self.next) & _MASK:
            return -1
        offset = self.next
        self.captured += len(payload)
        self.next = offset + len(payload)
        hist = self.hist
        hist.append(payload)
        if (
            self.next - self.hist_start > 2 * HISTORY
            or len(hist) - self.hist_joined > HISTORY_CHUNKS
        ):
            self._trim()
        return offset

    def _deliver(self, offset: int, payload: bytes, full: int, frame: int, whole: bool) -> None:
        end, cut_end = offset + len(payload), offset + full
        if offset < self.next:
            overlap = min(end, self.next) - offset
            self._duplicate(offset, payload[:overlap], frame)
            if end <= self.next:
                return
            payload, offset, whole = payload[overlap:], self.next, False
        self.events.append(Data(offset, payload, frame, whole))
        self.next = end
        hist = self.hist
        hist.append(payload)
        if (
            self.next - self.hist_start > 2 * HISTORY
            or len(hist) - self.hist_joined > HISTORY_CHUNKS
        ):
            self._trim()
        if end < cut_end:
            # the snapshot length cut the segment: the rest was sent, and is lost now
            # (a retransmission of it would count as duplicate)
            self._gap(cut_end - end, frame)

    def _trim(self) -> None:
        """The history past 2 * ``HISTORY`` bytes: the last ``HISTORY`` kept (the objects
        wholly before them dropped); ``HISTORY_CHUNKS`` payloads as they came: joined."""
        if self.next - self.hist_start > 2 * HISTORY:
            self.hist_start = self.next - HISTORY
        hist, drop = self.hist, 0
        at = self.next - sum(len(chunk) for chunk in hist)  # where hist[0] starts
        while drop < len(hist) and at + len(hist[drop]) <= self.hist_start:
            at += len(hist[drop])
            drop += 1
        del hist[:drop]
        joined = max(self.hist_joined - drop, 0)
        if len(hist) - joined > HISTORY_CHUNKS:
            hist[joined:] = [b"".join(hist[joined:])]
            joined += 1
        self.hist_joined = joined

    def _history(self, lo: int, hi: int) -> bytes:
        """The bytes delivered from stream offset ``lo`` to ``hi`` (within the history)."""
        pieces: list[bytes] = []
        end = self.next
        for chunk in reversed(self.hist):  # a retransmission is mostly of recent bytes
            start = end - len(chunk)
            if start < hi:
                pieces.append(chunk[max(lo - start, 0) : hi - start])
                if start <= lo:
                    break
            end = start
        pieces.reverse()
        return b"".join(pieces)

    def _duplicate(self, offset: int, copy: bytes, frame: int) -> None:
        self.duplicate += len(copy)
        lo, hi = max(offset, self.hist_start), min(offset + len(copy), self.next)
        if lo < hi:
            seen = self._history(lo, hi)
            if seen != copy[lo - offset : hi - offset]:
                self.conflicts += 1
                if self.conflict_frame is None:
                    self.conflict_frame = frame

    def _drain(self) -> None:
        while self.pending and self.pending[0][0] <= self.next:
            offset, _, payload, full, frame = heapq.heappop(self.pending)
            self.pending_bytes -= len(payload)
            self._deliver(offset, payload, full, frame, True)

    def _gap(self, length: int, frame: int) -> None:
        if length <= 0:
            return
        self.events.append(Gap(self.next, length, frame))
        self.missing += length
        self.gaps += 1
        self.next += length
        self.hist.clear()
        self.hist_start = self.next
        self.hist_joined = 0

    def forget_history(self) -> None:
        """Drop the bytes kept to compare retransmissions with (the connection is closing:
        a copy of them arriving later is still counted as duplicate, not compared)."""
        if self.hist:
            self.hist = []
            self.hist_start = self.next
            self.hist_joined = 0

    def finish(self, frame: int) -> None:
        """The connection ended: give up every hole still open."""
        while self.pending:
            self._gap(self.pending[0][0] - self.next, frame)
            self._drain()

    def take(self) -> list[Event]:
        """The events since the last call."""
        events, self.events = self.events, []
        return events
