"""MQTT 5.0 in the reference decoder: the fast path, which takes a whole packet whose every
field is within the rules in one pass, and leaves every doubt to the judging path.

:class:`FastPath50` (one of the 5.0 classes :class:`pubproof.reference.codec.Decoder`
inherits, see :mod:`pubproof.reference.decode50`) reads a complete PUBLISH, PUBACK,
PUBREC, PUBREL or PUBCOMP with a one-byte Property Length inline, into the decoder's
:class:`~pubproof.reference.common.Whole5` (:meth:`FastPath50.scan_whole5`, for the
capture pipeline) or a packet built without re-validating it (iteration,
:meth:`FastPath50.whole5`). At its first doubt it returns None and changes nothing:
``next_packet`` judges from the same position, so the packets, errors and offsets are the
judging path's by construction.

A sender repeats its property sections, so the fast path remembers those it has judged
(:data:`_PUBLISH_SECTIONS`, :data:`_ACK_SECTIONS`, shared by every decoder and bounded), and
a section seen before is not parsed again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from pubproof.model import wire_rules as R
from pubproof.reference.common import (
    ACK_BY_KIND,
    ACK_NAMES,
    DISCOURAGED,
    NEED_DATA,
    Section,
    Whole5,
)
from pubproof.reference.packets import AckLayout, Packet, Publish, PublishLayout
from pubproof.reference.properties import (
    NO_ACK_PROPERTIES,
    NO_PUBLISH_PROPERTIES,
    AckProperties,
    PublishProperties,
    PublishPropertiesLayout,
    trusted_ack_properties,
)
from pubproof.reference.section50 import (
    _CONTENT_TYPE,
    _CORRELATION,
    _MEI,
    _PFI,
    _REASON_STRING,
    _RESPONSE_TOPIC,
    _SUB_ID,
    _TOPIC_ALIAS,
    _USER,
    SectionReader50,
)

#: imported names the per-packet path reads, as this module's own Final names: the
#: compiled build reads those as C statics, not from the module's dict at every use
_ACK_BY_KIND: Final = ACK_BY_KIND
_DISCOURAGED: Final = DISCOURAGED
_NO_ACK_PROPERTIES: Final = NO_ACK_PROPERTIES
_NO_PUBLISH_PROPERTIES: Final = NO_PUBLISH_PROPERTIES
_ACK_LAYOUT: Final = AckLayout
_PUBLISH_LAYOUT: Final = PublishLayout
_PUBLISH_CLASS: Final = Publish
#: acknowledgement class -> its packet type number
_ACK_TYPE_NUMBERS: Final = {cls: kind for kind, cls in enumerate(ACK_BY_KIND) if cls is not None}
#: Per packet type number: the Reason Codes an acknowledgement may carry (Tables 3-4 to 3-7).
_ACK_CODES_BY_KIND: Final[tuple[frozenset[int], ...]] = (frozenset(),) * 4 + tuple(
    frozenset(R.ACK_REASON_CODES[ACK_NAMES[kind]]) for kind in (4, 5, 6, 7)
)


#: The 5.0 fast path remembers up to this many property sections (of at most 127 bytes)
#: with the properties they decode to, in each of its memories (:data:`_PUBLISH_SECTIONS`,
#: :data:`_ACK_SECTIONS`). A sender tends to repeat its sections (the same Content Type and
#: User Properties on every message of a topic), and the judgement of a section is a
#: function of its bytes and the reading of discouraged code points alone, and its result
#: immutable; so a section seen before is not parsed again. Bounded: a memory starts afresh
#: when full, and a full one takes a few MB (2.6 MB for sections of three properties,
#: measured with tracemalloc). 4,096 and not fewer: the capture pipeline keeps the JSON of
#: each properties object it has shown (``Section.shown``); the 200,000-frame 5.0 editions
#: capture has 2,612 distinct PUBLISH sections, and a memory of 1,024 made 4,050 objects of
#: them (each shown anew).
_SECTION_CACHE_SIZE: Final = 4096


def _longer_length(buf: bytes, pos: int, size: int) -> tuple[int, int] | None:
    """(where the body starts, the Remaining Length) of the packet at ``pos`` whose
    Remaining Length takes two to four bytes, when all of them are in ``buf[:size]`` and
    they are the shortest form (a last byte of 0 never is); None otherwise: for the fast
    path, whose every doubt is ``next_packet``'s to judge."""
    value = shift = 0
    at = pos + 1
    while at < size and at - pos <= 4:
        byte = buf[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return (at, value) if byte else None
        shift += 7
    return None


def _fast_user_property(
    buf: bytes,
    i: int,
    stop: int,
    discouraged: Callable[[str], object] | None,
) -> tuple[tuple[str, str], int] | None:
    """The User Property whose identifier is ``buf[i]``, in a property section ending at
    ``stop``, and the offset after it, when it is within the rules; None at the first doubt
    (the fast paths then leave the packet to the judging path). A length past the buffer
    raises IndexError and ill-formed UTF-8 UnicodeDecodeError, which the callers catch."""
    a = i + 3
    b = a + (buf[i + 1] << 8 | buf[i + 2])
    c = b + 2
    d = c + (buf[b] << 8 | buf[b + 1])
    if d > stop:
        return None
    raw_name = buf[a:b]
    raw_value = buf[c:d]
    if 0 in raw_name or 0 in raw_value:
        return None
    name = raw_name.decode("utf-8")
    value = raw_value.decode("utf-8")
    if discouraged is not None and (
        discouraged(name) is not None or discouraged(value) is not None
    ):
        return None
    return (name, value), d


def _fast_publish_properties(
    buf: bytes,
    i: int,
    stop: int,
    discouraged: Callable[[str], object] | None,
) -> PublishProperties | None:
    """The properties of a complete PUBLISH property section ``buf[i:stop]`` when every one
    is within the rules and simple (one-byte Subscription Identifiers, nothing repeated
    that must not be); None at the first doubt, and the judging path takes over.

    Written for speed: identifiers are Final constants (User Property, Topic Alias, Message
    Expiry Interval, Content Type, Payload Format Indicator, Subscription Identifier,
    Response Topic, Correlation Data), the common ones first, each type's bytes read inline
    (as ``_READ_AS`` says), and the result is built without ``__post_init__`` (see
    PublishLayout)."""
    pfi = mei = alias = None
    response_topic = content_type = None
    correlation = None
    user: tuple[tuple[str, str], ...] = ()
    sub_ids: tuple[int, ...] = ()
    try:
        while i < stop:
            ident = buf[i]
            if ident == _USER:
                found = _fast_user_property(buf, i, stop, discouraged)
                if found is None:
                    return None
                user += (found[0],)
                i = found[1]
            elif ident == _TOPIC_ALIAS:
                if alias is not None or i + 3 > stop:
                    return None
                alias = buf[i + 1] << 8 | buf[i + 2]
                if not alias:  # 0 is never an alias; the receiver's maximum is judged per packet
                    return None
                i += 3
            elif ident == _MEI:
                if mei is not None or i + 5 > stop:
                    return None
                mei = buf[i + 1] << 24 | buf[i + 2] << 16 | buf[i + 3] << 8 | buf[i + 4]
                i += 5
            elif ident == _CONTENT_TYPE or ident == _RESPONSE_TOPIC:  # noqa: SIM109 (no tuple)
                a = i + 3
                b = a + (buf[i + 1] << 8 | buf[i + 2])
                if b > stop:
                    return None
                raw = buf[a:b]
                if 0 in raw:
                    return None
                text = raw.decode("utf-8")
                if discouraged is not None and discouraged(text) is not None:
                    return None
                if ident == _CONTENT_TYPE:
                    if content_type is not None:
                        return None
                    content_type = text
                else:
                    if response_topic is not None or 43 in raw or 35 in raw:  # '+', '#'
                        return None
                    response_topic = text
                i = b
            elif ident == _PFI:
                if pfi is not None or i + 2 > stop:
                    return None
                pfi = buf[i + 1]
                if pfi > 1:
                    return None
                i += 2
            elif ident == _SUB_ID:
                if i + 2 > stop:
                    return None
                sub_id = buf[i + 1]
                if sub_id == 0 or sub_id & 0x80:
                    return None
                sub_ids += (sub_id,)
                i += 2
            elif ident == _CORRELATION:
                b = i + 3 + (buf[i + 1] << 8 | buf[i + 2])
                if correlation is not None or b > stop:
                    return None
                correlation = buf[i + 3 : b]
                i = b
            else:
                return None
    except (IndexError, UnicodeDecodeError):
        return None
    props = PublishPropertiesLayout()
    props.payload_format_indicator = pfi
    props.message_expiry_interval = mei
    props.topic_alias = alias
    props.response_topic = response_topic
    props.correlation_data = correlation
    props.user_properties = user
    props.subscription_identifiers = sub_ids
    props.content_type = content_type
    # the layout swap (reference.layout)
    props.__class__ = PublishProperties  # type: ignore[assignment]
    return props  # type: ignore[return-value]


#: The acknowledgements' property sections the fast path has judged (at most 127 bytes),
#: with the properties they decode to: one cache per reading of discouraged code points
#: (``False``, ``True``: reject), the only thing besides its bytes that an
#: acknowledgement's section is judged by (a Reason String and User Properties: UTF-8
#: Encoded Strings). Shared by every decoder, as one object per section then serves every
#: packet that carries it; bounded as ``_SECTION_CACHE_SIZE`` says.
_ACK_SECTIONS: Final[tuple[dict[bytes, Section], dict[bytes, Section]]] = ({}, {})
#: The PUBLISH property sections the fast path has judged, likewise one memory per reading
#: of discouraged code points, shared by every decoder. A section's Topic Alias is judged
#: here only as not 0 (any Two Byte Integer is within some maximum) and against the
#: receiver's own Topic Alias Maximum at every packet, so that receivers of any Topic Alias
#: Maximum share one object per section. One memory per decoder held a section once per
#: decoder that met it: the capture pipeline keeps a decoder per receiver's limits (up to
#: 64, ``pipeline.family.decoder_for``), and a message forwarded to receivers of different
#: limits was parsed, and shown, once for each. (The synthetic captures' connections of
#: different limits carry different sections: 2,612 objects on the 200,000-frame 5.0
#: editions capture either way.)
_PUBLISH_SECTIONS: Final[tuple[dict[bytes, Section], dict[bytes, Section]]] = ({}, {})


def _fast_ack_properties(
    section: bytes, discouraged: Callable[[str], object] | None
) -> AckProperties | None:
    """The properties of a complete PUBACK, PUBREC, PUBREL or PUBCOMP property section
    (a Reason String at most once, User Properties) when every one is within the rules;
    None at the first doubt, and the judging path takes over."""
    stop = len(section)
    reason: str | None = None
    user: tuple[tuple[str, str], ...] = ()
    i = 0
    try:
        while i < stop:
            ident = section[i]
            if ident == _USER:
                found = _fast_user_property(section, i, stop, discouraged)
                if found is None:
                    return None
                user += (found[0],)
                i = found[1]
            elif ident == _REASON_STRING:  # once
                a = i + 3
                b = a + (section[i + 1] << 8 | section[i + 2])
                if reason is not None or b > stop:
                    return None
                raw = section[a:b]
                if 0 in raw:
                    return None
                reason = raw.decode("utf-8")
                if discouraged is not None and discouraged(reason) is not None:
                    return None
                i = b
            else:
                return None
    except (IndexError, UnicodeDecodeError):
        return None
    return trusted_ack_properties(reason, user)


def _packet_of(whole: Whole5) -> Packet:
    """The ``Publish`` or acknowledgement the fast path read into ``whole``."""
    if whole.kind == 3:
        packet = _PUBLISH_LAYOUT()
        packet.topic = whole.topic
        packet.payload = whole.payload
        packet.qos = whole.qos
        packet.packet_id = whole.packet_id
        packet.dup = whole.dup
        packet.retain = whole.retain
        packet.properties = whole.properties  # type: ignore[assignment]
        # the layout swap (reference.layout)
        packet.__class__ = _PUBLISH_CLASS  # type: ignore[assignment]
        return packet  # type: ignore[return-value]
    ack = _ACK_LAYOUT()
    packet_id = whole.packet_id
    assert packet_id is not None
    ack.packet_id = packet_id
    ack.reason_code = whole.reason_code
    ack.properties = whole.properties  # type: ignore[assignment]
    # the layout swap (reference.layout)
    ack.__class__ = _ACK_BY_KIND[whole.kind]  # type: ignore[assignment]
    return ack  # type: ignore[return-value]


def whole_of(packet: Packet) -> Whole5:
    """A PUBLISH-family packet's fields as a new :class:`~pubproof.reference.common.Whole5`
    (the record :meth:`Decoder50.scan_whole5` fills, for a packet the judging path
    decoded)."""
    whole = Whole5()
    whole.properties = packet.properties
    if isinstance(packet, Publish):
        whole.kind = 3
        whole.topic, whole.payload, whole.qos = packet.topic, packet.payload, packet.qos
        whole.packet_id, whole.dup, whole.retain = packet.packet_id, packet.dup, packet.retain
        if packet.properties is not None:
            whole.topic_alias = packet.properties.topic_alias
    else:
        whole.kind = _ACK_TYPE_NUMBERS[type(packet)]
        whole.packet_id, whole.reason_code = packet.packet_id, packet.reason_code
    return whole


class FastPath50(SectionReader50):
    """The 5.0 fast path of :class:`pubproof.reference.codec.Decoder` (see the module's
    docstring)."""

    __slots__ = ()

    def _iter5(self) -> Iterator[Packet]:
        # The 5.0 fast path: as in _iter3, a complete packet whose every field is within
        # the rules is built by _fast5; at the first doubt it is ``next_packet``'s.
        # _fast5 reads bytes, whose bytes and slices the compiled build reads directly (a
        # union with bytearray is indexed through the generic protocol, an int object a
        # byte). A buffer that is a bytearray (a long packet that grew in place, see
        # ``feed``) is next_packet's, and what follows the packet it takes is made bytes
        # again, as ``feed`` does once a packet is consumed.
        fast = self._fast5
        next_packet = self.next_packet
        while True:
            while self._error is None:
                buf = self._buf
                if type(buf) is not bytes:
                    break
                packet = fast(buf, self._pos, len(buf))
                if packet is None:
                    break
                yield packet
            result = next_packet()
            if result is NEED_DATA:
                return
            if type(self._buf) is not bytes:
                self._rest_as_bytes()
            yield result  # type: ignore[misc]

    def _rest_as_bytes(self) -> None:
        """The unread rest of the buffer as a new ``bytes`` buffer (stream offsets kept)."""
        pos = self._pos
        self._buf = bytes(self._buf[pos:])
        self._base += pos
        if self._awaiting >= 0:
            self._awaiting -= pos
        self._pos = 0

    def whole5(self, data: bytes) -> Packet | None:
        """``data``, one whole packet, taken by the fast path: what ``feed(data)`` and then
        iteration's first packet would give, with the decoder left as they would leave it
        (stream offsets included), when nothing is buffered and no error was raised;
        None otherwise, the decoder unchanged (``feed`` it then). For a caller that has
        its packets framed already: no generator per packet."""
        whole = self.scan_whole5(data)
        return None if whole is None else _packet_of(whole)

    def scan_whole5(self, data: bytes) -> Whole5 | None:
        """:meth:`whole5` for a caller that reads the fields at once (the capture
        pipeline): the decoder's :class:`~pubproof.reference.common.Whole5`, which the
        next call fills anew, and no packet object (building one costs a compiled caller
        more than reading the fields does)."""
        buf = self._buf
        pos = self._pos
        size = len(data)
        if pos < len(buf) or self._error is not None:
            return None
        base = self._base
        self._buf, self._pos, self._base = data, 0, base + len(buf)  # as feed() does
        whole = self._scan5(data, 0, size)
        if whole is None or self._pos != size:
            self._buf, self._pos, self._base = buf, pos, base
            return None
        if self._awaiting >= 0:  # as feed() does (a 3.x state)
            self._awaiting -= len(buf)
        return whole

    def _fast5(self, buf: bytes, pos: int, size: int) -> Packet | None:
        """The packet at ``buf[pos:]`` (``buf[:size]`` received) when :meth:`_scan5`
        takes it; None at its first doubt."""
        whole = self._scan5(buf, pos, size)
        return None if whole is None else _packet_of(whole)

    def _scan5(self, buf: bytes, pos: int, size: int) -> Whole5 | None:
        """The packet at ``buf[pos:]`` (``buf[:size]`` received), when it is complete, has a
        one-byte Property Length and every field within the rules: read inline into the
        decoder's :class:`~pubproof.reference.common.Whole5`, ``_pos`` moved past it. None
        at the first doubt (nothing changed): ``next_packet`` judges from the same
        position, so the packets, errors and offsets are its own by construction."""
        body = pos + 2
        if body > size:
            return None
        first = buf[pos]
        length = buf[pos + 1]
        if length > 127:
            # a Remaining Length of two to four bytes (a packet of 130 bytes or more):
            # read here when all of it is there in the shortest form
            longer = _longer_length(buf, pos, size)
            if longer is None:
                return None
            body, length = longer
        end = body + length
        config = self._config
        max_size = self._max_size
        if (
            config.first_byte[first] is not None
            or end > size
            or (max_size is not None and end - pos > max_size)
        ):
            return None
        if first & 0xF0 != 0x30:
            ack_properties: PublishProperties | AckProperties = _NO_ACK_PROPERTIES
            ack_section: Section | None = None
            if length == 2:
                code = 0
            elif length < 2:
                return None
            else:
                code = buf[body + 2]
                if code not in _ACK_CODES_BY_KIND[first >> 4]:
                    return None
                if length > 3:  # a Property Length, and a section as long as it says
                    section_end = body + 4 + buf[body + 3]
                    if buf[body + 3] > 127 or section_end != end:
                        return None
                    if section_end > body + 4:
                        ack_key = buf[body + 4 : end]
                        reject = config.reject_discouraged
                        kept = _ACK_SECTIONS[reject]
                        ack_section = kept.get(ack_key)
                        if ack_section is None:
                            found_ack = _fast_ack_properties(
                                ack_key, _DISCOURAGED.search if reject else None
                            )
                            if found_ack is None:
                                return None
                            if len(kept) >= _SECTION_CACHE_SIZE:
                                kept.clear()
                            ack_section = kept[ack_key] = Section(found_ack)
                        ack_properties = ack_section.properties
            whole = self._whole
            whole.kind = first >> 4
            whole.packet_id = buf[body] << 8 | buf[body + 1]
            whole.reason_code = code
            whole.properties = ack_properties
            whole.section = ack_section
            whole.topic_alias = None
            self._pos = end
            return whole
        if length < 3:  # a topic length and a Property Length at least
            return None
        topic_start = body + 2
        topic_end = topic_start + (buf[body] << 8 | buf[body + 1])
        if topic_end >= end:
            return None
        discouraged = _DISCOURAGED.search if config.reject_discouraged else None
        if topic_end == topic_start:
            topic = ""  # a Topic Alias must stand for it (see below)
        else:
            raw = buf[topic_start:topic_end]
            if 0 in raw or 43 in raw or 35 in raw:  # U+0000, '+', '#'
                return None
            try:
                topic = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None
            if discouraged is not None and discouraged(topic) is not None:
                return None
        qos = first >> 1 & 3
        if qos:
            at = topic_end + 2
            if at >= end:
                return None
            packet_id: int | None = buf[topic_end] << 8 | buf[topic_end + 1]
            if not packet_id:
                return None
        else:
            at = topic_end
            packet_id = None
        property_length = buf[at]
        if property_length == 0:
            properties: PublishProperties | AckProperties = _NO_PUBLISH_PROPERTIES
            alias: int | None = None
            utf8_payload = False
            section: Section | None = None
            payload_start = at + 1
        else:
            payload_start = at + 1 + property_length
            if property_length > 127 or payload_start > end:
                return None
            key = buf[at + 1 : payload_start]
            sections = _PUBLISH_SECTIONS[config.reject_discouraged]
            section = sections.get(key)
            if section is None:
                found = _fast_publish_properties(buf, at + 1, payload_start, discouraged)
                if found is None:
                    return None
                if len(sections) >= _SECTION_CACHE_SIZE:
                    sections.clear()
                section = sections[key] = Section(
                    found, found.topic_alias, found.payload_format_indicator == 1
                )
            properties = section.properties
            alias = section.topic_alias
            if alias is not None and alias > self._alias_max:
                # above this receiver's Topic Alias Maximum (PP50-3.3.4-topic-alias-maximum):
                # the judging path's to report (the memory serves receivers of any maximum)
                return None
            utf8_payload = section.utf8_payload
        if not topic and alias is None:
            return None  # PP50-3.3.2-topic-or-alias, next_packet's to report
        payload = buf[payload_start:end]
        if utf8_payload and config.payload_utf8:
            try:
                payload.decode("utf-8")
            except UnicodeDecodeError:
                return None
        whole = self._whole
        whole.kind = 3
        whole.topic = topic
        whole.payload = payload
        whole.qos = qos
        whole.packet_id = packet_id
        whole.dup = (first & 8) != 0
        whole.retain = (first & 1) != 0
        whole.properties = properties
        whole.section = section
        whole.topic_alias = alias
        self._pos = end
        return whole
