"""MQTT 5.0 in the reference decoder: the judging path, in the judgement order of the wire
contract (docs/guides/mqtt5-wire.md): the fixed header and the receiver's limits, the
acknowledgements' Reason Codes and bodies, the PUBLISH variable header, the Property
Length, then the packet, once its properties are judged and its payload has arrived.

The 5.0 methods of :class:`pubproof.reference.codec.Decoder` are three classes in one line
(a compiled class has one base), each in a module of its own:

- :class:`~pubproof.reference.section50.SectionReader50` (``section50``): the property
  section, read and judged property by property;
- :class:`~pubproof.reference.fast50.FastPath50` (``fast50``): the fast path (``_iter5``,
  ``scan_whole5``), which takes a whole packet within the rules and leaves every doubt to
  the judging path;
- :class:`Decoder50` (here): the judging path (``_next5``), which ``next_packet`` runs.

The two paths work as the 3.1.1 ones do. A 5.0 packet whose header is judged but whose
property section or payload is still arriving is kept as a ``_Pending`` (stream offsets,
the properties judged so far), so that a large packet arriving in small chunks is judged
once, not once per chunk. Declared bounds (a Property Length past the packet, a string past
the property section) are faults as soon as the length that declares them is read; bytes
that have not arrived yet are never one.
"""

from __future__ import annotations

from typing import Final

from pubproof.model import wire_rules as R
from pubproof.model.rules import Rule
from pubproof.reference.common import ACK_NAMES, NEED_DATA, _NeedData, _Pending
from pubproof.reference.fast50 import FastPath50, whole_of
from pubproof.reference.packets import Packet, trusted_ack, trusted_publish
from pubproof.reference.properties import (
    NO_ACK_PROPERTIES,
    NO_PUBLISH_PROPERTIES,
    trusted_ack_properties,
    trusted_publish_properties,
)
from pubproof.reference.section50 import _vbi_size

#: whole_of is the fast path's, imported from here too (by the capture pipeline)
__all__ = ["Decoder50", "whole_of"]

#: imported names the per-packet path reads, as this module's own Final names: the
#: compiled build reads those as C statics, not from the module's dict at every use
_ACK_NAMES: Final = ACK_NAMES
_NO_ACK_PROPERTIES: Final = NO_ACK_PROPERTIES
_NO_PUBLISH_PROPERTIES: Final = NO_PUBLISH_PROPERTIES
_TRUSTED_ACK: Final = trusted_ack
_TRUSTED_PUBLISH: Final = trusted_publish
#: Per acknowledgement type number: the Reason Codes it may carry (Tables 3-4 to 3-7).
_ACK_CODES = {kind: frozenset(R.ACK_REASON_CODES[name]) for kind, name in _ACK_NAMES.items()}


class Decoder50(FastPath50):
    """The MQTT 5.0 methods of :class:`pubproof.reference.codec.Decoder`: the judging path,
    on top of the fast path and the property section's reader it inherits."""

    __slots__ = ()

    def _next5(self) -> Packet | _NeedData:
        buf, pos = self._buf, self._pos
        size = len(buf)
        if pos >= size:
            return NEED_DATA
        pending = self._pending
        if pending is not None:
            if pending.start == self._base + pos:
                return self._continue5(pending)
            self._pending = None
        config = self._config
        first = buf[pos]
        problem = config.first_byte[first]
        if problem is not None:
            raise self._fail(problem[0], pos, problem[1])

        # Remaining Length: four bytes at most, the shortest form (reading rl-encoding),
        # then the receiver's Maximum Packet Size.
        body = pos + 1
        length = shift = 0
        while True:
            if body >= size:
                return NEED_DATA
            byte = buf[body]
            if body - pos == 4 and byte & 0x80:
                raise self._fail(
                    R.RL_MAX_BYTES,
                    body,
                    "the fourth Remaining Length byte has its continuation bit set (a Variable "
                    "Byte Integer has at most four bytes)",
                )
            length |= (byte & 0x7F) << shift
            body += 1
            if not byte & 0x80:
                break
            shift += 7
        if config.strict_rl and body - pos - 1 > _vbi_size(length):
            # [MQTT-1.5.5-1] "The encoded value MUST use the minimum number of bytes
            # necessary to represent the value"
            raise self._fail(
                R.RL_MINIMAL,
                pos + 1,
                f"Remaining Length {length} is encoded in {body - pos - 1} bytes; "
                f"{_vbi_size(length)} suffice",
            )
        if self._max_size is not None and body - pos + length > self._max_size:
            # [MQTT-3.1.2-24] ... "If a Client receives a packet whose size exceeds this
            # limit, this is a Protocol Error" (the Server's likewise, 3.2.2.3.6)
            raise self._fail(
                R.PACKET_TOO_LARGE,
                pos + 1,
                f"the packet is {body - pos + length} bytes; the receiver's Maximum Packet "
                f"Size is {self._max_size}",
            )
        end = body + length
        kind = first >> 4
        if kind != 3:
            return self._ack5(kind, pos, body, end)
        return self._publish5(first, pos, body, end)

    def _ack5(self, kind: int, pos: int, body: int, end: int) -> Packet | _NeedData:
        buf = self._buf
        size = len(buf)
        name = _ACK_NAMES[kind]
        length = end - body
        if length < 2:
            raise self._fail(
                R.ACK_RL[name],
                pos + 1,
                f"{name} has Remaining Length {length}; its packet identifier needs 2",
            )
        if length == 2:  # 3.4.2.1: "no Reason Code and the value of 0x00 (Success) is used"
            if end > size:
                return NEED_DATA
            self._pos = end
            return _TRUSTED_ACK[name](buf[body] << 8 | buf[body + 1], 0, _NO_ACK_PROPERTIES)
        if body + 3 > size:
            return NEED_DATA
        code = buf[body + 2]
        if code not in _ACK_CODES[kind]:
            # [MQTT-3.4.2-1] "MUST use one of the PUBACK Reason Codes" (3.5.2-1, ...)
            raise self._fail(
                R.ACK_REASON_CODE[name],
                body + 2,
                f"0x{code:02X} is not a {name} Reason Code",
            )
        packet_id = buf[body] << 8 | buf[body + 1]
        if length == 3:
            self._pos = end
            return _TRUSTED_ACK[name](packet_id, code, _NO_ACK_PROPERTIES)
        section = self._property_length(body + 3, end, R.ACK_RL[name])
        if section is None:
            return NEED_DATA
        start, stop = section
        if stop < end:
            raise self._fail(
                R.ACK_RL[name],
                body + 3,
                f"{end - stop} byte(s) follow the {name}'s property section; it has no payload",
            )
        base = self._base
        pending = _Pending(
            start=base + pos,
            end=base + end,
            first=kind << 4,
            packet_id=packet_id,
            section_start=base + start,
            section_end=base + stop,
            reason_code=code,
        )
        self._pending = pending
        return self._continue5(pending)

    def _publish5(self, first: int, pos: int, body: int, end: int) -> Packet | _NeedData:
        buf = self._buf
        size = len(buf)
        # The topic name, as in 3.1.1, except that an empty one is judged after the
        # properties (it is valid with a Topic Alias).
        if end - body < 2:
            raise self._fail(
                R.PUBLISH_RL_COVERS,
                body,
                f"Remaining Length {end - body} leaves no room for the topic name's length",
            )
        if body + 2 > size:
            return NEED_DATA
        topic_start = body + 2
        topic_end = topic_start + (buf[body] << 8 | buf[body + 1])
        if topic_end > end:
            raise self._fail(
                R.PUBLISH_RL_COVERS,
                body,
                f"topic name of {topic_end - topic_start} bytes does not fit in the "
                f"{end - body - 2} bytes the Remaining Length leaves",
            )
        if topic_end > size:
            return NEED_DATA
        raw = buf[topic_start:topic_end]
        try:
            topic = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self._fail(
                R.TOPIC_UTF8,
                topic_start + error.start,
                f"the topic name is not well-formed UTF-8 at byte {error.start} "
                f"(0x{raw[error.start]:02x})",
            ) from None
        self._check_topic_content(raw, topic, topic_start)
        qos = first >> 1 & 3
        at = topic_end
        packet_id: int | None = None
        if qos:
            at = topic_end + 2
            if at > end:
                raise self._fail(
                    R.PUBLISH_RL_COVERS,
                    topic_end,
                    f"QoS {qos} PUBLISH has no room for its packet identifier in the Remaining "
                    "Length",
                )
            if at > size:
                return NEED_DATA
            packet_id = buf[topic_end] << 8 | buf[topic_end + 1]
            if not packet_id:
                # [MQTT-2.2.1-3] "it MUST assign it a non-zero Packet Identifier"
                raise self._fail(
                    R.PACKET_ID_NONZERO, topic_end, "packet identifier 0 is not allowed"
                )
        # [MQTT-2.2.2-1] "If there are no properties, this MUST be indicated by including a
        # Property Length of zero": a PUBLISH without one is malformed.
        section = self._property_length(at, end, R.PROPERTIES_PRESENT)
        if section is None:
            return NEED_DATA
        base = self._base
        pending = _Pending(
            start=base + pos,
            end=base + end,
            first=first,
            packet_id=packet_id,
            section_start=base + section[0],
            section_end=base + section[1],
            topic=topic,
            topic_at=base + body,
        )
        self._pending = pending
        return self._continue5(pending)

    def _property_length(self, at: int, end: int, past_end: Rule) -> tuple[int, int] | None:
        """The property section that the Property Length at ``at`` declares, as buffer
        positions (first property, end); None if its bytes have not all arrived."""
        buf = self._buf
        size = len(buf)
        i = at
        value = shift = 0
        while True:
            if i >= end:
                raise self._fail(
                    past_end,
                    at,
                    "the Property Length runs past the end of the packet"
                    if i > at
                    else "the packet ends where its Property Length should be",
                )
            if i >= size:
                return None
            byte = buf[i]
            if i - at == 3 and byte & 0x80:
                raise self._fail(
                    R.RL_MAX_BYTES,
                    i,
                    "the fourth Property Length byte has its continuation bit set",
                )
            value |= (byte & 0x7F) << shift
            i += 1
            if not byte & 0x80:
                break
            shift += 7
        if self._config.strict_rl and i - at > _vbi_size(value):
            raise self._fail(
                R.RL_MINIMAL,
                at,
                f"Property Length {value} is encoded in {i - at} bytes; {_vbi_size(value)} suffice",
            )
        if value > end - i:
            raise self._fail(
                R.PROPERTY_LENGTH,
                at,
                f"Property Length {value} is more than the {end - i} bytes the Remaining "
                "Length leaves",
            )
        return i, i + value

    def _continue5(self, pending: _Pending) -> Packet | _NeedData:
        base = self._base
        buf = self._buf
        if pending.cursor >= 0:
            if not self._properties(pending):
                return NEED_DATA
            pending.cursor = -1
            if pending.first >> 4 == 3 and not pending.topic and pending.alias is None:
                # 3.3.2.1: "It is a Protocol Error if the Topic Name is zero length and
                # there is no Topic Alias."
                raise self._fail(
                    R.TOPIC_OR_ALIAS,
                    pending.topic_at - base,
                    "the topic name is empty and there is no Topic Alias",
                )
        end = pending.end - base
        if end > len(buf):
            return NEED_DATA
        self._pending = None
        kind = pending.first >> 4
        if kind != 3:
            self._pos = end
            return _TRUSTED_ACK[_ACK_NAMES[kind]](
                pending.packet_id,  # type: ignore[arg-type]
                pending.reason_code,
                trusted_ack_properties(pending.reason_string, tuple(pending.user))
                if pending.reason_string is not None or pending.user
                else _NO_ACK_PROPERTIES,
            )
        payload_start = pending.section_end - base
        payload = bytes(buf[payload_start:end])
        if pending.pfi == 1 and self._config.payload_utf8:
            try:
                payload.decode("utf-8")
            except UnicodeDecodeError as error:
                # 3.3.2.3.2: "The UTF-8 data in the Payload MUST be well-formed UTF-8"
                raise self._fail(
                    R.PAYLOAD_UTF8,
                    payload_start + error.start,
                    f"the payload is marked UTF-8 (Payload Format Indicator 1) but is not "
                    f"well-formed UTF-8 at byte {error.start} of it",
                ) from None
        self._pos = end
        first = pending.first
        return _TRUSTED_PUBLISH(
            pending.topic,
            payload,
            first >> 1 & 3,
            pending.packet_id,
            bool(first & 8),
            bool(first & 1),
            trusted_publish_properties(
                pending.pfi,
                pending.mei,
                pending.alias,
                pending.response_topic,
                pending.correlation,
                tuple(pending.user),
                tuple(pending.sub_ids),
                pending.content_type,
            )
            if pending.seen
            else _NO_PUBLISH_PROPERTIES,
        )
