"""The per-connection function both engines share: segments of one 4-tuple in, rows out.

A :class:`Tracker` takes the TCP segments of one (capture, 4-tuple) in frame order, the
way both engines hand them over (the python engine as it reads, Spark after its secondary
sort), and writes rows into a :class:`Sink`. It splits the 4-tuple into connections (a
SYN with a new initial sequence number starts the next one: ``#0``, ``#1``, ...), and
runs each through reassembly (:mod:`.reassembly`), framing (:mod:`.framing`), the codec
(:mod:`.describe`) and the judges of :mod:`pubproof.judge` (the link judge, both ends, and
the close judge). Which connections are MQTT, and which end is the client, is
:mod:`.detect`'s; the evidence of a finding is :mod:`.trail`'s; the rows are :mod:`.rows`.

A capture that starts mid-connection (no SYN): status ``started-mid-connection``; each
direction hunts for a packet boundary as :mod:`.framing` describes (resynchronise, do not
skip), bytes before it unparsed as ``mid-connection``. After a gap in either direction the
flow judge stops for the connection (what was lost could have answered anything); the
wire judgement goes on after the framer resynchronises.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

from pubproof.judge.cited import FlowOffence
from pubproof.judge.close import CloseJudge, Seen
from pubproof.judge.close import shown as shown_after_offence
from pubproof.judge.findings import DEVIATION, TOLERATED, Source
from pubproof.judge.limits import too_large
from pubproof.judge.packets import ACKS, LEVELS, PacketType
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.pipeline import detect
from pubproof.pipeline.describe import (
    EVIDENCE_PAYLOAD,
    NO_PROPERTIES,
    Described,
    describe,
    evidence_fields,
    payload_head,
    payload_hex,
    readings_for,
    show_properties,
    shown_properties,
)
from pubproof.pipeline.dissect import ACK, FIN, RST, SYN, Segment
from pubproof.pipeline.family import PublishFamilyDecoder
from pubproof.pipeline.fast.ends import C2S, S2C, BothEnds
from pubproof.pipeline.fast.layout import as_dict
from pubproof.pipeline.framing import Framed, Framer, Unframable, short_packets
from pubproof.pipeline.reassembly import WINDOW_BYTES, WINDOW_SEGMENTS, Data, Gap, Stream
from pubproof.pipeline.receivers import Receivers
from pubproof.pipeline.rows import ConnectionRow, QuarantineRow, Sink, ViolationRow
from pubproof.pipeline.trail import Recent, Trail
from pubproof.pipeline.wire_error import WireError
from pubproof.reference.common import Section, Whole5
from pubproof.reference.decode50 import whole_of
from pubproof.reference.packets import Ack, Packet, Publish
from pubproof.reference.properties import (
    NO_ACK_PROPERTIES,
    NO_PUBLISH_PROPERTIES,
    AckProperties,
    PublishProperties,
)

# the type numbers the hot path compares, as plain ints (an enum member costs a look-up)
PUBLISH: Final = int(PacketType.PUBLISH)
PUBCOMP: Final = int(PacketType.PUBCOMP)
PINGREQ: Final = int(PacketType.PINGREQ)
PINGRESP: Final = int(PacketType.PINGRESP)
CONNECT: Final = int(PacketType.CONNECT)
CONNACK: Final = int(PacketType.CONNACK)
#: CONNECT's protocol level that names MQTT 5.0
LEVEL_V50: Final = 5
#: the CONNACK of a 3.1.1 server that does not speak the level asked for (return code 1)
REFUSED_LEVEL: Final = bytes((CONNACK << 4, 2, 0, 1))
V50_VALUE: Final = Edition.V50.value
#: an acknowledgement's type name by its type number, as a dict of this module's (a look-up
#: in a module's names and a mapping proxy cost more, once per acknowledgement)
_ACK_TYPES: Final[dict[int, str]] = dict(ACKS)
#: TCP sequence numbers are 32-bit and wrap
SEQ_MASK: Final = 0xFFFFFFFF


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What the job was asked: MQTT ports, TLS ports, a forced edition, readings."""

    ports: frozenset[int] = frozenset({1883})
    tls_ports: frozenset[int] = frozenset({8883})
    edition: Edition | None = None
    readings: tuple[tuple[str, str], ...] = ()
    window_bytes: int = WINDOW_BYTES
    window_segments: int = WINDOW_SEGMENTS


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
            current = self.current = Connection(self, segment, self.reuses)
        current.feed(frame, segment)

    def finish(self) -> None:
        """No more segments."""
        if self.current is not None:
            self.current.finish()
            self.current = None


class Connection:
    """One TCP connection: roles, reassembly, framing, description and judgement.

    Most segments take a shorter way through the same steps (``FAST``): a segment that
    starts at the next byte of its direction, with nothing waiting before or after it, is
    cut into packets right here, and the PUBLISH family is decoded straight into rows. Any
    other segment or packet goes the general way (:class:`.Stream` events, the
    :class:`.Framer`'s buffer, :func:`.describe`). The rows are the same either way
    (``tests/test_pipeline_fast_path.py`` runs both on the same captures)."""

    #: take the shorter way where it applies (off: every segment the general way)
    FAST = True

    def __init__(self, tracker: Tracker, first: Segment, number: int) -> None:
        self.capture, self.config, self.sink = tracker.capture, tracker.config, tracker.sink
        config = self.config
        self.client, self.server = detect.roles(first, config.ports, config.tls_ports)
        self.id = (
            f"{self.capture}:{self.client[0]}:{self.client[1]}-"
            f"{self.server[0]}:{self.server[1]}#{number}"
        )
        self.mode = detect.mode(self.server[1], config.ports, config.tls_ports)
        self.client_isn: int | None = None
        self.held: list[tuple[int, Segment]] | None = []  # until the decision; then None
        self.first_frame = self.last_frame = 0
        self.frames = 0
        self.streams = {
            d: Stream(window_bytes=config.window_bytes, window_segments=config.window_segments)
            for d in (C2S, S2C)
        }
        self.framers = {C2S: Framer(), S2C: Framer()}
        self.edition: Edition | None = config.edition or Edition.V311
        self.edition_value: str | None = self.edition.value  # as the rows write it
        self.readings = readings_for(self.edition, config.readings)
        self.decoder: PublishFamilyDecoder | None = PublishFamilyDecoder(
            self.edition, self.readings
        )
        self.level: int | None = None
        self.protocol: str | None = None
        self.client_id: str | None = None
        self.clean_session: bool | None = None
        self.judge: BothEnds | None = BothEnds()
        #: the control packets judged without a packet identifier
        self.judged: tuple[str, ...] | frozenset[str] = _JUDGED
        self.declared: Receivers | None = None  # MQTT 5.0: what the two ends declared
        # per packet identifier, its last packets, as what their evidence is built from
        self.trail = Trail(self.id)
        self.closed: str | None = None
        self.fins: set[str] = set()  # the directions that sent a FIN
        self.fin_seq: dict[str, int] = {}  # direction -> its FIN's sequence number
        # [MQTT-4.8.0-1]: set at the first packet the model rejects (None until then)
        self.closing: CloseJudge | None = None
        self.pings = {C2S: 0, S2C: 0}  # PINGREQs sent c2s, PINGRESPs sent s2c, and so on
        self.flags: set[str] = set()
        self.packets = self.violations = self.tolerated = self.deviations = 0
        self.payload = {C2S: 0, S2C: 0}
        self.quarantined = 0  # payload bytes of a connection that is not MQTT
        if self.edition is Edition.V50:
            self._become5()

    def _become5(self) -> None:
        """The connection is MQTT 5.0 (its CONNECT names level 5, or the job forces 5.0)."""
        self.judged = _JUDGED50
        self.declared = Receivers(self.readings)
        if self.judge is not None:
            self.judge.edition = Edition.V50  # two 5.0 link judges
        self.decoder = None  # the 3.x fast path's
        for framer in self.framers.values():
            framer.v5 = True  # type 15 is AUTH

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

    # -- packets ----------------------------------------------------------------------

    def _item(self, direction: str, item: Framed | Unframable) -> None:
        if isinstance(item, Unframable):
            edition = self.edition or Edition.V311
            rule = R.RESERVED_TYPE if item.reason == "reserved-type" else R.RL_MAX_BYTES
            entry = {
                "type": "?",
                "error": {"rule": rule.id_for(edition), "offset": 0, "message": item.message},
                "hex": item.data.hex(),
            }
            self.flags.add("malformed")
            self._violation(
                direction,
                item.frame,
                item.offset,
                "malformed",
                Source.FRAMING,
                (rule.id_for(edition),),
                item.message,
                [self.trail.entry(direction, item.frame, item.offset, entry)],
            )
            return
        if self.declared is None:
            self._packet3(direction, item.frame, item.first_frame, item.offset, item.data, item)
        else:
            self._packet5(direction, item.frame, item.first_frame, item.offset, item.data, item)

    def _packet3(
        self,
        direction: str,
        frame: int,
        first_frame: int,
        offset: int,
        data: bytes,
        framed: Framed | None,
    ) -> None:
        """One whole packet: ``frame`` carried its last byte, ``first_frame`` its first;
        ``framed`` tells which frame carried each byte (None: all were in ``frame``)."""
        kind = data[0] >> 4
        if self.closing is not None:  # after a rejected packet: did its receiver read on?
            seen = Seen(direction=direction, frame=frame, offset=offset,
                        fields=shown_after_offence(data))  # fmt: skip
            self.closing.packet(seen, data)
        decoder = self.decoder
        if self.FAST and PUBLISH <= kind <= PUBCOMP and decoder is not None:
            # the PUBLISH family, decoded by the codec; an error goes the general way below
            packet = decoder.decode(data)
            # the class itself, not isinstance: a packet that is not an instance makes
            # isinstance read its __class__ as an attribute (every acknowledgement here,
            # twice); the decoder makes exactly these classes
            known = type(packet)
            if known is _PUBLISH_CLASS:
                packet = cast(Publish, packet)  # no check in the compiled build
                self.packets += 1
                # each field read once: attributes of an interpreted class
                packet_id, payload = packet.packet_id, packet.payload
                dup, qos, retain, topic = packet.dup, packet.qos, packet.retain, packet.topic
                payload_len = len(payload)
                self.sink.packets.append((
                    self.capture, self.id, direction, frame, first_frame, offset, len(data),
                    "PUBLISH", dup, qos, retain, topic, packet_id, payload_len, None, None,
                    self.edition_value, None, None, None,
                ))  # fmt: skip
                if packet_id is not None and self.judge is not None:  # QoS 0: not judged
                    start = len(data) - payload_len
                    head = data[start : start + _EVIDENCE_PAYLOAD]
                    p = {
                        "type": "PUBLISH", "dup": dup, "qos": qos, "retain": retain,
                        "topic": topic, "packet_id": packet_id,
                        "payload_hex": _PAYLOAD_HEX(payload),
                    }  # fmt: skip
                    # P is also what its evidence shows: evidence_from replaces the
                    # payload's hex with the head's, in the same place (no second dict)
                    self._judge(direction, frame, offset, "PUBLISH", packet_id, p, p,
                                payload_len, head)  # fmt: skip
                return
            if known is not _WIRE_ERROR:
                self.packets += 1
                name, packet_id = _ACK_TYPES[kind], cast(Ack, packet).packet_id
                self.sink.packets.append((
                    self.capture, self.id, direction, frame, first_frame, offset, len(data),
                    name, None, None, None, None, packet_id, None, None, None,
                    self.edition_value, None, None, None,
                ))  # fmt: skip
                if self.judge is not None:
                    fields = {"type": name, "packet_id": packet_id}
                    self._judge(direction, frame, offset, name, packet_id, fields, fields, None,
                                b"")  # fmt: skip
                return
        if (
            kind == CONNECT
            and direction == C2S
            and self.level is None
            and self.config.edition is None
            and detect.connect_level(data) == LEVEL_V50
        ):
            # MQTT 5.0 from this CONNECT on (its description needs the edition)
            self.edition, self.edition_value = Edition.V50, V50_VALUE
            self.readings = readings_for(Edition.V50, self.config.readings)
            self._become5()
            self._packet5(direction, frame, first_frame, offset, data, framed)
            return
        edition = self.edition
        described = describe(data, edition, self.readings if edition is not None else None)
        if kind in (PINGREQ, PINGRESP):  # [MQTT-4.8.0-1] evidence
            self.pings[direction] += 1
        if described.type == "CONNECT" and direction == C2S and self.level is None:
            self._connect(described)
        self.packets += 1
        error = described.error
        self.sink.packets.append((
            self.capture, self.id, direction, frame, first_frame, offset,
            len(data), described.type, described.dup, described.qos, described.retain,
            described.topic, described.packet_id, described.payload_len,
            error.rule if error else None, error.kind if error else None,
            self.edition_value, described.reason_code, described.topic_alias,
            described.properties,
        ))  # fmt: skip
        self._described(direction, frame, offset, kind, data, framed, described, None)

    def _packet5(
        self,
        direction: str,
        frame: int,
        first_frame: int,
        offset: int,
        data: bytes,
        framed: Framed | None,
    ) -> None:
        """:meth:`_packet3` for an MQTT 5.0 connection: each direction decoded with its
        receiver's limits (:class:`.Receivers`), a Topic Alias resolved through that
        direction's map, the Reason Code and properties in the row."""
        kind = data[0] >> 4
        if self.closing is not None:  # after a rejected packet: did its receiver read on?
            seen = Seen(direction=direction, frame=frame, offset=offset,
                        fields=shown_after_offence(data, Edition.V50))  # fmt: skip
            self.closing.packet(seen, data)
        declared = self.declared
        assert declared is not None
        whole: Whole5 | None = None
        if self.FAST and PUBLISH <= kind <= PUBCOMP:
            # the PUBLISH family, read by the codec's fast path (its record, read at once:
            # native fields, where a packet object's are read through the generic
            # attribute protocol), or decoded by its general way; an error goes the
            # general way below
            whole = declared.scan(direction, data)
            if whole is None:
                packet = declared.decode(direction, data)
                if type(packet) is not _WIRE_ERROR:  # not isinstance: see _packet3
                    whole = whole_of(cast(Packet, packet))
        if whole is not None:
            if whole.kind == PUBLISH:
                self.packets += 1
                packet_id, payload = whole.packet_id, whole.payload
                dup, qos, retain = whole.dup, whole.qos, whole.retain
                payload_len = len(payload)
                props = whole.properties
                assert props is not None
                alias = whole.topic_alias
                sent: str = whole.topic
                topic: str | None = sent
                if alias is not None:  # Receivers.resolve, inlined (once per PUBLISH)
                    aliases = declared.aliases_c2s if direction == C2S else declared.aliases_s2c
                    if sent:
                        aliases[alias] = sent
                    else:
                        topic = aliases.get(alias)
                if whole.section is None and props is _NO_PUBLISH_PROPERTIES:
                    text, shown_props = _NO_PROPERTIES, _NONE
                else:
                    text, shown_props = _shown(whole.section, props)
                self.sink.packets.append((
                    self.capture, self.id, direction, frame, first_frame, offset, len(data),
                    "PUBLISH", dup, qos, retain, topic, packet_id,
                    payload_len, None, None, V50_VALUE, None, alias, text,
                ))  # fmt: skip
                judge = self.judge
                if judge is not None and (
                    packet_id is not None  # QoS 1 and 2: their flows
                    # QoS 0: only what the judges learn from or find in it (3.x judges
                    # none): a mapping set (not one the receiver's map holds already:
                    # BothEnds.mapped0), an alias no mapping stands for, RETAIN where the
                    # server declared Retain Available 0 (no QoS is above QoS 0). The
                    # general way feeds every one, and the fast path tests hold the
                    # findings equal.
                    or (
                        alias is not None
                        and sent
                        and not judge.mapped0(direction, sent, alias, retain)
                    )
                    or topic is None
                    or (retain and not declared.negotiated.retain_available)
                ):
                    start = len(data) - payload_len
                    # a QoS 0 PUBLISH's payload no judge of a capture reads (it starts no
                    # flow; the judges keep deliveries for a live peer only): its P
                    # without the payload's hex. P is also what its evidence shows, as in
                    # _packet3 (evidence_from replaces the payload's hex with the head's,
                    # in the same place: after the properties, as before)
                    p: dict[str, Any]
                    if packet_id is None:
                        p = {
                            "type": "PUBLISH", "dup": dup, "qos": qos, "retain": retain,
                            "topic": sent, "packet_id": None, "properties": shown_props,
                        }  # fmt: skip
                    else:
                        p = {
                            "type": "PUBLISH", "dup": dup, "qos": qos, "retain": retain,
                            "topic": sent, "packet_id": packet_id,
                            "properties": shown_props, "payload_hex": _PAYLOAD_HEX(payload),
                        }  # fmt: skip
                    self._judge5(direction, frame, offset, "PUBLISH", packet_id, p, p,
                                 payload_len, data[start : start + _EVIDENCE_PAYLOAD],
                                 data)  # fmt: skip
                return
            else:
                self.packets += 1
                ack_id = whole.packet_id
                assert ack_id is not None
                name, packet_id = _ACK_TYPES[kind], ack_id
                code, ack = whole.reason_code, whole.properties
                assert ack is not None
                fields: dict[str, Any] | None = None
                if ack is _NO_ACK_PROPERTIES:
                    text = _NO_PROPERTIES
                    # the fields of an acknowledgement without properties, shared: one dict
                    # per type, identifier and Reason Code, not one per packet (each would
                    # be tracked by the collector, as it holds the properties dict)
                    key = kind << 24 | code << 16 | packet_id
                    fields = _ACK_FIELDS.get(key)
                    if fields is None:
                        if len(_ACK_FIELDS) >= _ACK_FIELDS_KEPT:
                            _ACK_FIELDS.clear()
                        fields = _ACK_FIELDS[key] = {
                            "type": name, "packet_id": packet_id, "reason_code": code,
                            "properties": _NONE,
                        }  # fmt: skip
                else:
                    text, shown_props = _shown(whole.section, ack)
                self.sink.packets.append((
                    self.capture, self.id, direction, frame, first_frame, offset, len(data),
                    name, None, None, None, None, packet_id, None, None, None,
                    V50_VALUE, code, None, text,
                ))  # fmt: skip
                if self.judge is not None:
                    if fields is None:
                        fields = {"type": name, "packet_id": packet_id, "reason_code": code,
                                  "properties": shown_props}  # fmt: skip
                    self._judge5(direction, frame, offset, name, packet_id, fields, fields,
                                 None, b"", data)  # fmt: skip
                return
        negotiated = declared.negotiated
        if kind == CONNACK and data == REFUSED_LEVEL:
            # a server of 3.1.1 refusing the level: its own CONNACK, return code 0x01
            # ("unacceptable protocol level", 3.1.1 [MQTT-3.1.2-2]), not a 5.0 one
            described = describe(data, Edition.V311, None)
        else:
            # limits matter to the PUBLISH family only (a control packet's description
            # is kept by its bytes alone)
            limits = negotiated.limits_for(direction) if PUBLISH <= kind <= PUBCOMP else None
            described = describe(data, Edition.V50, self.readings, limits)
        if kind in (PINGREQ, PINGRESP):  # [MQTT-4.8.0-1] evidence
            self.pings[direction] += 1
        name = described.type
        if name == "CONNECT" and direction == C2S:
            declared.forget_aliases()  # as the link judges' maps go
            if self.level is None:
                self._connect(described)
        elif name == "CONNACK" and direction == S2C and described.error is None:
            declared.connack(described.fields)
        topic = described.topic
        if described.topic_alias is not None and topic is not None:
            topic = declared.resolve(direction, topic, described.topic_alias)
        self.packets += 1
        error = described.error
        self.sink.packets.append((
            self.capture, self.id, direction, frame, first_frame, offset,
            len(data), name, described.dup, described.qos, described.retain,
            topic, described.packet_id, described.payload_len,
            error.rule if error else None, error.kind if error else None,
            V50_VALUE, described.reason_code, described.topic_alias, described.properties,
        ))  # fmt: skip
        if not PUBLISH <= kind <= PUBCOMP:  # the codec judges the PUBLISH family's size
            role = "client" if direction == C2S else "server"
            big = too_large(len(data), direction, negotiated, role=role)
            if big is not None:
                self.flags.add("violations")
                shown = evidence_fields(described, data)
                self._violation(direction, frame, offset, big.verdict, big.source, big.rules,
                                f"{name}: {big.message}",
                                [self.trail.entry(direction, frame, offset, shown)])  # fmt: skip
        self._described(direction, frame, offset, kind, data, framed, described, topic)

    def _described(
        self,
        direction: str,
        frame: int,
        offset: int,
        kind: int,
        data: bytes,
        framed: Framed | None,
        described: Described,
        topic: str | None,
    ) -> None:
        """A packet the general way has described and written: its error, or its
        judgement (``topic``: a 5.0 PUBLISH's topic name with its alias resolved)."""
        error, edition = described.error, self.edition
        if error is None and described.packet_id is None and described.type not in self.judged:
            return  # e.g. a QoS 0 PUBLISH or a PINGREQ: no evidence to keep, nothing to judge
        if error is not None:
            shown = evidence_fields(described, data)
            entry = self.trail.entry(direction, frame, offset, shown)
            self.flags.add("malformed" if error.kind == "malformed" else "violations")
            if PUBLISH <= kind <= PUBCOMP and edition is not None and self.judge is not None:
                self._offence(Seen(direction=direction, frame=frame, offset=offset,
                                   fields=shown), data, edition)  # fmt: skip
            at = offset + error.offset
            self._violation(
                direction,
                framed.frame_at(at) if framed is not None else frame,
                at,
                error.kind,
                Source.CODEC,
                (error.rule,) if error.rule else (),
                error.message,
                [entry],
            )
            return
        if self.judge is not None:
            every = described.fields
            if topic is not None and every.get("topic") != topic:  # the alias resolved
                every = {**every, "topic": topic}
            # what the evidence needs, without the judge's copy of the payload
            kept: Mapping[str, Any] = (
                {k: v for k, v in every.items() if k != "payload_hex"}
                if "payload_hex" in every else every
            )  # fmt: skip
            head = payload_head(described, data)
            if self.declared is None:
                self._judge(direction, frame, offset, described.type, described.packet_id,
                            every, kept, described.payload_len, head)  # fmt: skip
            else:
                self._judge5(direction, frame, offset, described.type, described.packet_id,
                             every, kept, described.payload_len, head, data)  # fmt: skip

    def _offence(self, seen: Seen, data: bytes, edition: Edition) -> None:
        """A PUBLISH-family packet the codec rejected: from now on, watch whether its
        receiver reads on (:mod:`pubproof.judge.close`)."""
        receiver = S2C if seen.direction == C2S else C2S
        # the answers its receiver owed before it
        owed = self._owed(receiver, seen.direction)
        if self.closing is None:
            self.closing = CloseJudge()
        if self.declared is None:
            self.closing.offence(seen, data, edition, self.readings, owed)
        else:  # 5.0: the model judges the packet with its receiver's limits
            limits = self.declared.negotiated.limits_for(seen.direction)
            self.closing.offence(seen, data, edition, self.readings, owed, limits=limits)

    def _owed(self, receiver: str, sender: str) -> list[tuple[str, int | None]]:
        """The answers ``receiver`` owed just now: the flow judge's, and the PINGREQs
        ``sender`` sent that are not yet answered."""
        assert self.judge is not None
        owed = self.judge.owed_by(receiver)
        owed += [("PINGRESP", None)] * max(0, self.pings[sender] - self.pings[receiver])
        return owed

    def _flow_offence(
        self,
        direction: str,
        frame: int,
        offset: int,
        shown: Mapping[str, Any],
        offence: FlowOffence,
        data: bytes,
    ) -> None:
        """5.0: a packet the link judge says its receiver must close the connection on
        (with the DISCONNECT Reason Code the model calls for): from now on, watch what the
        receiver does (:mod:`pubproof.judge.close`)."""
        receiver = S2C if direction == C2S else C2S
        if self.closing is None:
            self.closing = CloseJudge()
        # a QoS 1 or 2 PUBLISH's shown is its P (_packet5): the close judge's entries
        # show its fields without the judge's copy of the payload
        fields = {k: v for k, v in shown.items() if k != "payload_hex"}
        seen = Seen(direction=direction, frame=frame, offset=offset, fields=fields)
        self.closing.flow_offence(seen, offence, self._owed(receiver, direction), data)

    def _closing_findings(self) -> None:
        """At the end: a receiver that read on after a packet the model rejects (5.0: or
        whose DISCONNECT's Reason Code is not the one the model calls for)."""
        if self.closing is None or "gaps" in self.flags:
            return  # lost frames could have held the answer's cause or the close
        for offence, finding in self.closing.findings():
            # the offending packet, then the request and the answer that show its receiver
            # read on (or, 5.0, the receiver's DISCONNECT): the finding is at the last
            shown = CloseJudge.evidence(offence, finding)
            evidence = [
                self.trail.entry(s.direction, s.frame, s.offset, dict(s.fields)) for s in shown
            ]
            answer = shown[-1]
            if finding.verdict not in (TOLERATED, DEVIATION):
                self.flags.add("violations")
            self._violation(
                answer.direction,
                answer.frame,
                answer.offset,
                finding.verdict,
                finding.source,
                finding.rules,
                finding.message,
                evidence,
                finding.provoked,
            )

    def _connect(self, described: Described) -> None:
        fields = described.fields
        if "error" in fields:
            return
        self.level = fields.get("level")
        self.protocol = fields.get("protocol")
        self.client_id = fields.get("client_id")
        # 5.0 names the flag Clean Start (3.1.2.4); the column keeps the 3.x name
        self.clean_session = fields.get("clean_session", fields.get("clean_start"))
        if self.config.edition is None and self.declared is None:
            self.edition = LEVELS.get(self.level) if self.level is not None else None
            self.edition_value = None if self.edition is None else self.edition.value
            if self.edition is None:
                self.flags.add("unsupported-level")
                self.decoder = None
            else:
                self.readings = readings_for(self.edition, self.config.readings)
                self.decoder = PublishFamilyDecoder(self.edition, self.readings)
        if self.declared is not None:
            # the client's limits bind what the server sends
            self.declared.connect(fields)
        if self.judge is not None:
            self.judge.v311 = self.edition is not Edition.V31

    def _judge(
        self,
        direction: str,
        frame: int,
        offset: int,
        kind: str,
        packet_id: int | None,
        fields: Mapping[str, Any],
        shown: Mapping[str, Any],
        payload_len: int | None,
        head: bytes,
    ) -> None:
        """Judge one packet: ``fields`` for the judge, ``shown`` (the same without the
        payload) and ``head`` (:func:`.payload_head`) for the evidence."""
        recent = Recent(direction, frame, offset, shown, payload_len, head)
        trail: deque[Recent] | None = None
        if packet_id is not None and kind in FLOW_TYPES:
            trail = self.trail.note(packet_id, recent)
        assert self.judge is not None
        if self.edition is None:
            return
        found = self.judge.feed(direction, fields)
        if not found:
            return
        # the evidence is built only now: the packet's identifier's last packets, or itself
        evidence = self.trail.evidence(trail or (recent,))
        for finding in found:
            self._violation(
                direction,
                frame,
                offset,
                finding.verdict,
                finding.source,
                finding.rules,
                finding.message,
                evidence,
                finding.provoked,
            )

    def _judge5(
        self,
        direction: str,
        frame: int,
        offset: int,
        kind: str,
        packet_id: int | None,
        fields: Mapping[str, Any],
        shown: Mapping[str, Any],
        payload_len: int | None,
        head: bytes,
        data: bytes,
    ) -> None:
        """:meth:`_judge` for a 5.0 connection (``data``: the packet's bytes): also a
        packet whose receiver the link judge says must close the connection (Receive
        Maximum exceeded, an alias out of bounds or unknown, a QoS above Maximum QoS,
        RETAIN without Retain Available) is handed to the close judge, which watches what
        that receiver does next."""
        recent = Recent(direction, frame, offset, shown, payload_len, head)
        trail: deque[Recent] | None = None
        if packet_id is not None and kind in FLOW_TYPES:
            trail = self.trail.note(packet_id, recent)
        judge = self.judge
        assert judge is not None
        given = as_dict(fields)  # a dict's look-up, not Mapping.get's method call
        found = judge.feed50(direction, given.get("type"), given)  # its judges are 5.0
        if not found:
            return
        offence = judge.offence
        if offence is not None:
            self._flow_offence(direction, frame, offset, shown, offence, data)
        # the evidence is built only now: the packet's identifier's last packets, or itself
        evidence = self.trail.evidence(trail or (recent,))
        for finding in found:
            self._violation(
                direction,
                frame,
                offset,
                finding.verdict,
                finding.source,
                finding.rules,
                finding.message,
                evidence,
                finding.provoked,
            )

    def _violation(
        self,
        direction: str,
        frame: int,
        offset: int,
        kind: str,
        source: str,
        rules: tuple[str, ...],
        message: str,
        evidence: list[dict[str, Any]],
        provoked: tuple[str, ...] = (),
    ) -> None:
        """A finding about the end that sends ``direction``, by the judge ``source``:
        ``rules`` are that end's own duties, ``provoked`` what its peer broke to bring the
        finding about (:mod:`pubproof.model.duties`)."""
        role = "client" if direction == C2S else "server"
        if kind == TOLERATED:
            self.tolerated += 1
        elif kind == DEVIATION:
            self.deviations += 1
        else:
            self.violations += 1
        self.sink.violations.append(ViolationRow(
            self.capture, self.id, direction, frame, offset, rules[0] if rules else None,
            ",".join(rules), ",".join(provoked), kind, source, role, self._endpoint(role),
            message, json.dumps(evidence, sort_keys=True, ensure_ascii=False),
        ))  # fmt: skip

    def _endpoint(self, role: str) -> str:
        if role == "server":
            return f"{self.server[0]}:{self.server[1]}"
        return self.client_id if self.client_id else self.client[0]

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


def _shown(
    section: Section | None, props: PublishProperties | AckProperties
) -> tuple[str, dict[str, Any]]:
    """The ``properties`` column and ``P``'s properties dict of a 5.0 packet's property
    section: shown once per section the codec's fast path keeps, and kept with it
    (``Section.shown``); else (a packet from the codec's general way) by
    :func:`~pubproof.pipeline.describe.shown_properties`."""
    if section is None:
        return shown_properties(props)
    kept = section.shown
    if kept is None:
        kept = section.shown = show_properties(props)
    return kept


FLOW_TYPES: Final = frozenset(ACKS.values()) | {"PUBLISH"}
_JUDGED = ("CONNECT", "CONNACK")  # judged even without a packet identifier
#: 5.0: also every PUBLISH (QoS 0 too) and DISCONNECT (its Reason Code)
_JUDGED50: Final = frozenset({"CONNECT", "CONNACK", "PUBLISH", "DISCONNECT"})
#: the properties of a 5.0 packet without any, as ``P`` holds them (shared: never changed)
_NONE: Final[dict[str, Any]] = {}
#: 5.0: the fields of acknowledgements without properties, by type, Reason Code and packet
#: identifier (``kind << 24 | code << 16 | packet_id``), as the judges and the evidence
#: read them (shared: never changed); at most this many, then afresh
_ACK_FIELDS: Final[dict[int, dict[str, Any]]] = {}
_ACK_FIELDS_KEPT: Final = 1 << 14
_SYN_FIN_RST: Final = SYN | FIN | RST
#: what the fast paths read per packet, bound here once: the compiled module reads a
#: name bound Final from a C variable, any other module-level name from the module's
#: dictionary, a look-up per use
_PUBLISH_CLASS: Final = Publish
_WIRE_ERROR: Final = WireError
_PAYLOAD_HEX: Final = payload_hex
_EVIDENCE_PAYLOAD: Final = EVIDENCE_PAYLOAD
_NO_PUBLISH_PROPERTIES: Final = NO_PUBLISH_PROPERTIES
_NO_ACK_PROPERTIES: Final = NO_ACK_PROPERTIES
_NO_PROPERTIES: Final = NO_PROPERTIES
