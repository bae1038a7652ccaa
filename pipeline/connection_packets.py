"""A connection's whole packets: each described, written as a row, and judged.

:class:`ConnectionPackets` (see :mod:`.connection_state` for the stack of classes) takes
each whole packet the framer cut (:meth:`~ConnectionPackets._item`; a packet too large or of
a reserved type, :class:`.Unframable`, is a violation at once) or the connection's fast path
cut straight from a segment. :meth:`~ConnectionPackets._packet3` (3.1, 3.1.1) and
:meth:`~ConnectionPackets._packet5` (5.0, each direction decoded with its receiver's limits,
a Topic Alias resolved through that direction's map) take the PUBLISH family the short way
where they can (``FAST``: the codec's packet or fast-path record straight into the row and
``P``), the rest the general way (:func:`.describe`, then :meth:`~ConnectionPackets._described`):
the rows are the same either way. A CONNECT that names level 5 makes the connection 5.0 from
that packet on. The judges are fed by :class:`.ConnectionJudging`, below.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from pubproof.judge.close import Seen
from pubproof.judge.close import shown as shown_after_offence
from pubproof.judge.findings import Source
from pubproof.judge.limits import too_large
from pubproof.judge.packets import ACKS, PacketType
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.pipeline import detect
from pubproof.pipeline.connection_judging import ConnectionJudging
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
from pubproof.pipeline.fast.ends import C2S, S2C
from pubproof.pipeline.framing import Framed, Unframable
from pubproof.pipeline.wire_error import WireError
from pubproof.reference.common import Section, Whole5
from pubproof.reference.fast50 import whole_of
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
#: the acknowledgements the tap writes (PUBACK, PUBREC, PUBREL, PUBCOMP)
_TAPPED_ACKS: Final = frozenset(ACKS.values())
#: the properties of a 5.0 packet without any, as ``P`` holds them (shared: never changed)
_NONE: Final[dict[str, Any]] = {}
#: 5.0: the fields of acknowledgements without properties, by type, Reason Code and packet
#: identifier (``kind << 24 | code << 16 | packet_id``), as the judges and the evidence
#: read them (shared: never changed); at most this many, then afresh
_ACK_FIELDS: Final[dict[int, dict[str, Any]]] = {}
_ACK_FIELDS_KEPT: Final = 1 << 14
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


class ConnectionPackets(ConnectionJudging):
    """The whole packets of one connection, each described, written and judged."""

    #: take the shorter way where it applies (off: every packet the general way; the
    #: segments' shorter way, :class:`.Connection`'s, reads it too)
    FAST = True

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
                self.tap.publish(direction, self.at, self.now, frame, offset, dup, qos, retain,
                                 topic, packet_id, payload, None)  # fmt: skip
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
                self.tap.ack(direction, self.at, self.now, frame, offset, name, packet_id, None)
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
        self._tap_described(direction, frame, offset, data, described, described.topic)
        self._described(direction, frame, offset, kind, data, framed, described, None)

    def _tap_described(
        self,
        direction: str,
        frame: int,
        offset: int,
        data: bytes,
        described: Described,
        topic: str | None,
    ) -> None:
        """A packet the general way described, to the cross-connection stage's tap (none
        with an error, or on a connection whose protocol level no model covers)."""
        if described.error is not None or self.edition is None:
            return
        name = described.type
        if name == "PUBLISH":
            size = described.payload_len or 0
            payload = data[len(data) - size :] if size else b""
            self.tap.publish(
                direction, self.at, self.now, frame, offset, bool(described.dup),
                described.qos or 0, bool(described.retain), topic, described.packet_id,
                payload, described.properties,
            )  # fmt: skip
        elif name in _TAPPED_ACKS:
            assert described.packet_id is not None
            self.tap.ack(direction, self.at, self.now, frame, offset, name, described.packet_id,
                         described.reason_code)  # fmt: skip
        else:
            self.tap.control(direction, self.at, self.now, frame, offset, described.fields)

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
                self.tap.publish(direction, self.at, self.now, frame, offset, dup, qos, retain,
                                 topic, packet_id, payload, text)  # fmt: skip
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
                self.tap.ack(direction, self.at, self.now, frame, offset, name, packet_id, code)
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
        self._tap_described(direction, frame, offset, data, described, topic)
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
