"""The per-connection function both engines share: segments of one 4-tuple in, rows out.

A :class:`Tracker` takes the TCP segments of one (capture, 4-tuple) in frame order, the
way both engines hand them over (the python engine as it reads, Spark after its secondary
sort), and writes rows into a :class:`Sink`. It splits the 4-tuple into connections (a
SYN with a new initial sequence number starts the next one: ``#0``, ``#1``, ...), and
runs each through reassembly (:mod:`.reassembly`), framing (:mod:`.framing`), the codec
(:mod:`.describe`) and the judges of :mod:`pubproof.judge` (the link judge, both ends, and
the close judge). Which connections are MQTT, and which end is the client, is
:mod:`.detect`'s; the evidence of a finding is :mod:`.trail`'s; the rows are :mod:`.rows`.

A :class:`Connection` is a stack of classes, one concern a module (:mod:`.connection_state`
shows the stack): this module holds its segments and its end (the connection row); the
whole packets are :mod:`.connection_packets`', the judges and their findings
:mod:`.connection_judging`'s, the state and the edition :mod:`.connection_state`'s.

A capture that starts mid-connection (no SYN): status ``started-mid-connection``; each
direction hunts for a packet boundary as :mod:`.framing` describes (resynchronise, do not
skip), bytes before it unparsed as ``mid-connection``. After a gap in either direction the
flow judge stops for the connection (what was lost could have answered anything); the
wire judgement goes on after the framer resynchronises.
"""

from __future__ import annotations

import json
from typing import Final

from pubproof.pipeline import detect
from pubproof.pipeline.connection_packets import ConnectionPackets
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.dissect import ACK, FIN, RST, SYN, Segment
from pubproof.pipeline.fast.ends import C2S, S2C
from pubproof.pipeline.framing import Framer, short_packets
from pubproof.pipeline.reassembly import Data, Gap
from pubproof.pipeline.rows import ConnectionRow, QuarantineRow, Sink

#: TCP sequence numbers are 32-bit and wrap
SEQ_MASK: Final = 0xFFFFFFFF
_SYN_FIN_RST: Final = SYN | FIN | RST


class Tracker:
    """The segments of one 4-tuple in one capture, split into connections."""

    __slots__ = ("capture", "config", "current", "reuses", "sink")

    def __init__(self, capture: str, config: Config, sink: Sink) -> None:
        self.capture = capture
        self.config = config
        self.sink = sink
        self.current: Connection | None = None
        self.reuses = 0

    def feed(self, frame: int, segment: Segment) -> None:
        """The next segment of the 4-tuple (frames in increasing order)."""
        current = self.current
        is_syn = segment.flags & SYN and not segment.flags & ACK
        if is_syn and current is not None and current.client_isn != segment.seq:
            # a new SYN with a new initial sequence number: the 4-tuple is reused
            current.finish()
            self.reuses += 1
            current = None
        if current is None:
            current = self.current = Connection(
                self.capture, self.config, self.sink, segment, self.reuses
            )
        current.feed(frame, segment)

    def finish(self) -> None:
        """No more segments."""
        if self.current is not None:
            self.current.finish()
            self.current = None


class Connection(ConnectionPackets):
    """One TCP connection: roles, reassembly, framing, description and judgement.

    Most segments take a shorter way through the same steps (``FAST``): a segment that
    starts at the next byte of its direction, with nothing waiting before or after it, is
    cut into packets right here, and the PUBLISH family is decoded straight into rows. Any
    other segment or packet goes the general way (:class:`.Stream` events, the
    :class:`.Framer`'s buffer, :func:`.describe`). The rows are the same either way
    (``tests/test_pipeline_fast_path.py`` runs both on the same captures)."""

    # -- segments ---------------------------------------------------------------------

    def feed(self, frame: int, segment: Segment) -> None:
        if not self.frames:
            self.first_frame = frame
        self.frames += 1
        self.last_frame = frame
        c2s = (segment.src, segment.sport) == self.client
        if segment.flags & SYN and c2s and not segment.flags & ACK and self.client_isn is None:
            self.client_isn = segment.seq
        if self.held is not None:
            self.held.append((frame, segment))
            self._decide(final=False)
            return
        if self.mode == "other":
            self.quarantined += len(segment.payload)
            return
        self._process(frame, segment, c2s)

    def _decide(self, *, final: bool) -> None:
        """Decide, from the client's first bytes, whether this is MQTT; then replay."""
        assert self.held is not None
        handshake = self.client_isn is not None
        first = self._first_client_bytes() if handshake and self.mode != "tls" else None
        verdict = detect.verdict(self.mode, handshake, first, final=final, held=len(self.held))
        if verdict is None:
            return
        held, self.held = self.held, None
        if verdict == "other":
            self.mode = "other"
            for _, segment in held:
                self.quarantined += len(segment.payload)
            return
        self.mode = "mqtt" if verdict in ("mqtt", "not-mqtt") else "tls"
        if verdict == "tls":
            self.flags.add("encrypted-tls")
            for framer in self.framers.values():
                framer.stop("encrypted-tls")
        elif verdict == "not-mqtt":
            self.flags.add("not-mqtt")
            for framer in self.framers.values():
                framer.stop("not-mqtt")
        for frame, segment in held:
            self._process(frame, segment, (segment.src, segment.sport) == self.client)

    def _first_client_bytes(self) -> bytes | None:
        assert self.held is not None
        if self.client_isn is None:
            return None  # without the handshake there is no first byte to look at
        start = (self.client_isn + 1) & SEQ_MASK
        for _, segment in self.held:
            mine = (segment.src, segment.sport) == self.client
            if mine and segment.payload and segment.seq == start:
                return segment.payload
        return None

    def _process(self, frame: int, segment: Segment, c2s: bool) -> None:
        self.at, self.now = frame, segment.time  # what the tap stamps its events with
        direction = C2S if c2s else S2C
        stream = self.streams[direction]
        payload = segment.payload
        if (
            self.FAST
            and payload
            and not segment.flags & _SYN_FIN_RST
            and len(payload) == segment.payload_len
        ):
            framer = self.framers[direction]
            if framer.state == "sync":
                offset = stream.accept(segment.seq, payload)
                if offset >= 0:
                    # the event the stream would have given, handed on without the stream
                    self.payload[direction] += len(payload)
                    if not framer.buf:
                        self._cut(direction, frame, offset, payload, framer)
                        return
                    taken = framer.complete(offset, payload, frame)
                    if taken:  # the packet begun is whole: the rest is cut as above
                        for item in framer.take():
                            self._item(direction, item)
                        if taken < len(payload):
                            rest = payload[taken:]
                            self._cut(direction, frame, offset + taken, rest, framer, False)
                        return
                    framer.event(Data(offset, payload, frame, True))  # a packet's next part
                    if framer.items:
                        for item in framer.take():
                            self._item(direction, item)
                    return
        if segment.flags & SYN:
            stream.syn(segment.seq)
            seq = (segment.seq + 1) & SEQ_MASK
        else:
            seq = segment.seq
        if segment.flags & (RST | FIN):
            self.tap.close_at = (frame, segment.time)
        if segment.flags & RST:
            self.closed = "rst"
        elif segment.flags & FIN:
            self.fins.add(direction)
            self.fin_seq[direction] = (seq + len(segment.payload)) & SEQ_MASK
            if self.closed is None:
                self.closed = "fin"
        self.payload[direction] += len(segment.payload)
        if stream.base is None and not segment.flags & SYN and segment.payload_len:
            self.flags.add("started-mid-connection")
            self.framers[direction].hunt("mid-connection")
        stream.segment(seq, segment.payload, segment.payload_len, frame)
        self._events(direction)
        if self.closed == "rst" or len(self.fins) == 2:
            # both ends are done sending: the bytes delivered need not be kept to compare
            # retransmissions with, so a closed connection holds no stream history (memory
            # then grows with the connections open at once, not with the capture)
            for each in self.streams.values():
                each.forget_history()
            if self.trail and self._all_delivered():
                # nor packets to come whose findings would need the evidence trail: the
                # last packets per identifier (most of what a connection holds) go too
                self.trail.clear()

    def _all_delivered(self) -> bool:
        """Whether no segment waits in either direction and each FIN's sequence number is
        where its direction's delivered bytes end (no hole before it left to fill)."""
        for direction, stream in self.streams.items():
            if stream.pending:
                return False
            fin = self.fin_seq.get(direction)
            if fin is not None and (
                stream.base is None or (stream.base + stream.next) & SEQ_MASK != fin
            ):
                return False
        return True

    def _events(self, direction: str) -> None:
        stream, framer = self.streams[direction], self.framers[direction]
        for event in stream.take():
            if isinstance(event, Gap):
                self.flags.add("gaps")
                self.tap.lost(direction, self.at, self.now)
                self.judge = None  # the lost bytes could have answered anything
                if self.declared is not None:  # ... or mapped an alias anew
                    self.declared.forget_aliases(direction)
            framer.event(event)
            for item in framer.take():
                self._item(direction, item)

    def _cut(
        self,
        direction: str,
        frame: int,
        offset: int,
        data: bytes,
        framer: Framer,
        whole: bool = True,
    ) -> None:
        """A segment's bytes (``whole``: from its first; else what follows a packet the
        framer completed), in order, with nothing buffered: its whole packets with a one-
        or two-byte Remaining Length straight to :meth:`_packet3` or :meth:`_packet5` (cut
        as the framer's own fast path cuts them, :func:`.short_packets`, without a
        :class:`Framed` each), the rest to the framer."""
        size, pos = len(data), 0
        for end in short_packets(data):
            if self.declared is None:  # 3.1, 3.1.1 (a native call, not through an attribute)
                self._packet3(direction, frame, frame, offset + pos, data[pos:end], None)
            else:
                self._packet5(direction, frame, frame, offset + pos, data[pos:end], None)
            pos = end
        framer.framed += pos
        if pos < size:
            framer.event(Data(offset + pos, data[pos:] if pos else data, frame, whole and not pos))
            for item in framer.take():
                self._item(direction, item)

    # -- the end ------------------------------------------------------------------------

    def finish(self) -> None:
        """The capture holds no more of this connection: flush and write its row."""
        if self.held is not None:
            self._decide(final=True)
        if self.mode == "other":
            self.sink.quarantine.append(QuarantineRow(
                self.capture, self.first_frame, self.last_frame, self.frames, "tcp-not-mqtt",
                self.id, None, self.quarantined,
                "a TCP connection on no MQTT port whose client's first bytes are no CONNECT",
            ))  # fmt: skip
            return
        for direction in (C2S, S2C):
            self.streams[direction].finish(self.last_frame)
            self._events(direction)
            self.framers[direction].finish()
        if self.closed is not None:
            self.tap.closed()
        self._closing_findings()
        self.sink.connections.append(self._row())

    def _row(self) -> ConnectionRow:
        unparsed: dict[str, int] = {}
        framed = missing = 0
        for direction in (C2S, S2C):
            stream, framer = self.streams[direction], self.framers[direction]
            framed += framer.framed
            missing += stream.missing
            counts = dict(framer.unparsed)
            counts["retransmitted"] = stream.duplicate
            counts["before-start"] = stream.before_start
            for reason, count in counts.items():
                if count:
                    unparsed[reason] = unparsed.get(reason, 0) + count
            if stream.conflicts:
                self.flags.add("overlap-conflict")
        if self.closed is None:
            self.flags.add("open-at-end")
        status = ",".join(sorted(self.flags)) or "complete"
        edition = self.edition.value if self.edition is not None else None
        return ConnectionRow(
            self.capture, self.id, f"{self.client[0]}:{self.client[1]}",
            f"{self.server[0]}:{self.server[1]}", self.client_id, self.protocol, self.level,
            edition, self.clean_session, self.first_frame, self.last_frame, self.frames,
            self.payload[C2S], self.payload[S2C], framed, missing,
            json.dumps(unparsed, sort_keys=True), self.packets, self.violations,
            self.tolerated, self.deviations, self.closed, status,
        )  # fmt: skip
