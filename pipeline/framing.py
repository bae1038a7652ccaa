"""One direction's reassembled bytes cut into MQTT packets by their fixed headers.

The framer reads only the fixed header (type byte, Remaining Length) with
:func:`pubproof.probe.frames.header_length`, so it delimits every packet type; what each
packet says is for :mod:`pubproof.pipeline.describe`. It holds the bytes of the current
packet only (and which frames carried them), never the stream.

States:

- ``sync``: framing. A fixed header that cannot be trusted (a reserved packet type, a
  Remaining Length of more than four bytes) ends framing for the direction: the receiver
  must close the connection [MQTT-4.8.0-1], and where the next packet would start is
  unknown. What follows is unparsed with reason ``after-malformed``.
- ``hunt``: after a gap (reason ``gap``) or at a capture that started mid-connection
  (reason ``mid-connection``) the bytes are unparsed until a segment arrives whose bytes,
  from its first, are a whole chain of plausible packets ending exactly where the segment
  ends (plausible: a first byte a sender may send, and the Remaining Length the packet
  type fixes). Senders write whole packets, so this is where framing resumes; the chain
  must hold at least ``RESYNC_MIN`` bytes so that a stray payload byte pair does not
  qualify.
- ``stopped``: everything is unparsed with the stop's reason (``not-mqtt``,
  ``encrypted-tls``, ``after-malformed``, ``unsupported-level``).

MQTT 5.0 (``v5``, set once the connection's CONNECT names level 5): type 15 is AUTH, not
reserved, and the acknowledgements, CONNACK and DISCONNECT carry Reason Codes and
properties, so their Remaining Length is a minimum, not a fixed value, when hunting.

Every byte handed in is accounted for exactly once: in a packet (``framed``) or in
``unparsed`` under a reason (``incomplete`` for a packet the stream ends inside).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from pubproof.judge.packets import (
    AUTH,
    FLAGS_0010,
    QOS_BITS,
    RL_MORE,
    FrameError,
    PacketType,
    header_length,
)
from pubproof.pipeline.reassembly import Data, Gap

RESYNC_MIN = 4
T = PacketType
#: first byte -> the Remaining Length the type fixes (None: any); PUBLISH is checked apart
_PLAUSIBLE: dict[int, int | None] = {
    T.CONNECT << 4: None, T.CONNACK << 4: 2, T.PUBACK << 4: 2, T.PUBREC << 4: 2,
    T.PUBREL << 4 | FLAGS_0010: 2, T.PUBCOMP << 4: 2, T.SUBSCRIBE << 4 | FLAGS_0010: None,
    T.SUBACK << 4: None, T.UNSUBSCRIBE << 4 | FLAGS_0010: None, T.UNSUBACK << 4: 2,
    T.PINGREQ << 4: 0, T.PINGRESP << 4: 0, T.DISCONNECT << 4: 0,
}  # fmt: skip
#: MQTT 5.0: first byte -> the least Remaining Length the type allows (PUBLISH apart):
#: CONNECT's protocol name, level, flags, Keep Alive, Property Length and Client Identifier
#: length; a packet identifier and a Property Length, and what a SUBSCRIBE (a one-character
#: filter and its options), UNSUBSCRIBE (the filter) and SUBACK or UNSUBACK (a Reason
#: Code) need at least
_PLAUSIBLE50: dict[int, int] = {
    T.CONNECT << 4: 13, T.CONNACK << 4: 2, T.PUBACK << 4: 2, T.PUBREC << 4: 2,
    T.PUBREL << 4 | FLAGS_0010: 2, T.PUBCOMP << 4: 2, T.SUBSCRIBE << 4 | FLAGS_0010: 7,
    T.SUBACK << 4: 4, T.UNSUBSCRIBE << 4 | FLAGS_0010: 6, T.UNSUBACK << 4: 4,
    T.PINGREQ << 4: 0, T.PINGRESP << 4: 0, T.DISCONNECT << 4: 0, AUTH << 4: 0,
}  # fmt: skip
_PUBLISH = int(T.PUBLISH)
#: the highest type number that is not reserved (15 is)
_LAST_TYPE: Final = int(T.DISCONNECT)


@dataclass(frozen=True, slots=True)
class Framed:
    """A whole packet: its stream offset, bytes, and the frames that carried them."""

    offset: int
    data: bytes
    first_frame: int
    frame: int  # the frame that carried its last byte
    chunks: tuple[tuple[int, int], ...]  # (stream offset, frame) of each piece

    def frame_at(self, offset: int) -> int:
        """The frame that carried the byte at stream ``offset``."""
        found = self.first_frame
        for start, frame in self.chunks:
            if start > offset:
                break
            found = frame
        return found


@dataclass(frozen=True, slots=True)
class Unframable:
    """A fixed header that cannot be trusted: framing stops here."""

    offset: int
    frame: int
    data: bytes  # the bytes of the header seen
    reason: str  # "reserved-type" | "remaining-length"
    message: str


Item = Framed | Unframable


def plausible_chain(data: bytes, v5: bool = False) -> bool:
    """Whether ``data`` is exactly a sequence of plausible whole packets (of MQTT 5.0 when
    ``v5``)."""
    if len(data) < RESYNC_MIN:
        return False
    pos = 0
    while pos < len(data):
        first = data[pos]
        try:
            header = header_length(data[pos : pos + 5])
        except FrameError:
            return False
        if header is None:
            return False
        size, length = header
        if first >> 4 == _PUBLISH:
            # QoS 3, or no topic length (and, in 5.0, no Property Length)
            if first & QOS_BITS == QOS_BITS or length < 2 + v5:
                return False
        elif v5:
            least = _PLAUSIBLE50.get(first)
            if least is None or length < least:
                return False
        elif first not in _PLAUSIBLE:
            return False
        else:
            fixed = _PLAUSIBLE[first]
            if fixed is not None and fixed != length:
                return False
        pos += size + length
    return pos == len(data)


def short_packets(data: bytes | bytearray) -> Iterator[int]:
    """Where each packet ends, from the start of ``data``, while the packets are whole and
    have a one- or two-byte Remaining Length (up to 16,383, in its shortest form) and a
    type that is not reserved (the common packet: no buffering, no
    :func:`~pubproof.probe.frames.header_length`). The first other packet ends the cut: it
    is for the general way (:meth:`Framer._cut`), from where this stopped."""
    size, pos = len(data), 0
    while pos + 1 < size:
        length = data[pos + 1]
        if not 0 < data[pos] >> 4 <= _LAST_TYPE:
            return  # a reserved type
        body = pos + 2
        if length & RL_MORE:
            # a PUBLISH of 128 bytes or more: a second byte, without a third, and not 0
            # (a longer form of a shorter length: the general way frames it)
            if body >= size:
                return
            second = data[body]
            if second & RL_MORE or not second:
                return
            length = (length & 0x7F) | second << 7
            body += 1
        end = body + length
        if end > size:
            return
        yield end
        pos = end


@dataclass(slots=True)
class Framer:
    """Cut one direction into packets. Feed events in order; read the items."""

    state: str = "sync"
    reason: str = ""
    buf: bytearray = field(default_factory=bytearray)
    start: int = 0  # stream offset of buf[0]
    chunks: list[tuple[int, int]] = field(default_factory=list)
    framed: int = 0
    unparsed: dict[str, int] = field(default_factory=dict)
    items: list[Item] = field(default_factory=list)
    resyncs: int = 0
    #: the size of the packet ``buf`` starts, once its fixed header is read (0: not yet):
    #: until ``buf`` holds that many bytes there is nothing to cut
    need: int = 0
    #: MQTT 5.0: type 15 is AUTH
    v5: bool = False

    def hunt(self, reason: str) -> None:
        """Skip bytes until a plausible packet chain starts a segment (not once stopped)."""
        if self.state == "stopped":
            return
        self._drop(reason)
        self.state, self.reason = "hunt", reason

    def stop(self, reason: str) -> None:
        """Frame nothing more: the rest is unparsed with ``reason``."""
        self._drop(reason)
        self.state, self.reason = "stopped", reason

    def _drop(self, reason: str) -> None:
        self.need = 0
        if self.buf:
            self._unparsed(reason, len(self.buf))
            self.buf.clear()
            self.chunks.clear()

    def _unparsed(self, reason: str, count: int) -> None:
        self.unparsed[reason] = self.unparsed.get(reason, 0) + count

    def event(self, event: Data | Gap) -> None:
        """The next event of the direction's stream."""
        if isinstance(event, Gap):
            if self.state != "stopped":
                self.hunt("gap")
            return
        if self.state == "stopped":
            self._unparsed(self.reason, len(event.data))
            return
        if self.state == "hunt":
            if not (event.whole and plausible_chain(event.data, self.v5)):
                self._unparsed(self.reason, len(event.data))
                return
            self.state, self.reason = "sync", ""
            self.resyncs += 1
        if not self.buf:
            self._whole(event)
            return
        self.buf += event.data
        self.chunks.append((event.offset, event.frame))
        if len(self.buf) >= self.need:  # else the packet begun is still not whole
            self._cut()

    def complete(self, offset: int, data: bytes, frame: int) -> int:
        """The stream's next bytes (``data``, at ``offset``, carried by ``frame``), when
        they finish the packet begun: only its missing bytes are taken, and it is cut as
        :meth:`event` would cut it (the same item). How many bytes of ``data`` that took;
        0, and nothing done, when its size is not known yet (its header is cut short),
        ``data`` does not finish it, or the framer is not in sync. The caller frames the
        rest, with nothing buffered."""
        need = self.need
        if not need or self.state != "sync":
            return 0
        missing = need - len(self.buf)
        if missing <= 0 or missing > len(data):
            return 0
        self.buf += data[:missing] if missing < len(data) else data
        self.chunks.append((offset, frame))
        self._cut()
        return missing

    def _whole(self, event: Data) -> None:
        """Nothing buffered: cut the packets straight out of the event's bytes (the common
        case: a segment of whole packets), then buffer the rest as :meth:`_cut` would."""
        data, offset, frame = event.data, event.offset, event.frame
        size, pos, items = len(data), 0, self.items
        for end in short_packets(data):
            at = offset + pos
            items.append(Framed(at, data[pos:end], frame, frame, ((at, frame),)))
            pos = end
        self.framed += pos
        self.start = offset + pos
        self.chunks.append((offset, frame))
        if pos < size:
            self.buf += data[pos:] if pos else data
            self._cut()
        else:
            self.chunks.clear()

    def _cut(self) -> None:
        buf, chunks = self.buf, self.chunks
        pos = 0
        first_chunk = 0  # the chunk holding buf[pos]
        while pos < len(buf):
            kind = buf[pos] >> 4
            try:
                header = header_length(buf[pos : pos + 5])
            except FrameError:
                self._unframable(
                    pos, "remaining-length", "the Remaining Length has more than four bytes"
                )
                return
            if kind == 0 or (kind == AUTH and not self.v5):
                self._unframable(pos, "reserved-type", f"packet type {kind} is reserved")
                return
            if header is None:
                self.need = 0
                break
            size = header[0] + header[1]
            if pos + size > len(buf):
                self.need = size  # buf will start at pos: nothing to cut before this
                break
            offset = self.start + pos
            end = offset + size
            while first_chunk + 1 < len(chunks) and chunks[first_chunk + 1][0] <= offset:
                first_chunk += 1
            last = first_chunk
            while last + 1 < len(chunks) and chunks[last + 1][0] < end:
                last += 1
            pieces = ((offset, chunks[first_chunk][1]), *chunks[first_chunk + 1 : last + 1])
            self.items.append(
                Framed(offset, bytes(buf[pos : pos + size]), pieces[0][1], pieces[-1][1], pieces)
            )
            self.framed += size
            pos += size
        if pos:
            del buf[:pos]
            self.start += pos
            if not buf:
                self.need = 0
                chunks.clear()
            else:
                while len(chunks) > 1 and chunks[1][0] <= self.start:
                    chunks.pop(0)

    def _unframable(self, pos: int, reason: str, message: str) -> None:
        offset = self.start + pos
        frame = self.chunks[0][1]
        for start, chunk_frame in self.chunks:
            if start <= offset:
                frame = chunk_frame
        self.items.append(
            Unframable(offset, frame, bytes(self.buf[pos : pos + 5]), reason, message)
        )
        del self.buf[:pos]
        self.start += pos
        self.stop("after-malformed")

    def finish(self) -> None:
        """The stream ended: a packet begun and not finished is ``incomplete``."""
        self._drop("incomplete")

    def take(self) -> list[Item]:
        """The items since the last call."""
        items, self.items = self.items, []
        return items
