"""MQTT 5.0 in the reference decoder: the property section, the acknowledgements' Reason
Codes and bodies, the receiver's limits, in the judgement order of the wire contract
(docs/guides/mqtt5-wire.md).

:class:`Decoder50` holds the 5.0 methods of :class:`pubproof.reference.codec.Decoder`
(which inherits them); the fast path (``_iter5``) and the judging path (``_next5``) work
as the 3.1.1 ones do. A 5.0 packet whose header is judged but whose property section or
payload is still arriving is kept as a ``_Pending`` (stream offsets, the properties judged
so far), so that a large packet arriving in small chunks is judged once, not once per
chunk. Declared bounds (a Property Length past the packet, a string past the property
section) are faults as soon as the length that declares them is read; bytes that have not
arrived yet are never one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Final

from pubproof.model import wire_rules as R
from pubproof.model.properties50 import ACKS, PROPERTIES, DataType, identifiers
from pubproof.model.rules import Rule
from pubproof.reference.common import (
    ACK_BY_KIND,
    ACK_NAMES,
    DISCOURAGED,
    NEED_DATA,
    DecoderState,
    Section,
    Whole5,
    _NeedData,
    _Pending,
)
from pubproof.reference.errors import ProtocolError
from pubproof.reference.packets import (
    AckLayout,
    Packet,
    Publish,
    PublishLayout,
    trusted_ack,
    trusted_publish,
)
from pubproof.reference.properties import (
    NO_ACK_PROPERTIES,
    NO_PUBLISH_PROPERTIES,
    AckProperties,
    PublishProperties,
    PublishPropertiesLayout,
    trusted_ack_properties,
    trusted_publish_properties,
)

#: imported names the per-packet path reads, as this module's own Final names: the
#: compiled build reads those as C statics, not from the module's dict at every use
_ACK_BY_KIND: Final = ACK_BY_KIND
_ACK_NAMES: Final = ACK_NAMES
_DISCOURAGED: Final = DISCOURAGED
_NO_ACK_PROPERTIES: Final = NO_ACK_PROPERTIES
_NO_PUBLISH_PROPERTIES: Final = NO_PUBLISH_PROPERTIES
_TRUSTED_ACK: Final = trusted_ack
_TRUSTED_PUBLISH: Final = trusted_publish
_ACK_LAYOUT: Final = AckLayout
_PUBLISH_LAYOUT: Final = PublishLayout
_PUBLISH_CLASS: Final = Publish
#: acknowledgement class -> its packet type number
_ACK_TYPE_NUMBERS: Final = {cls: kind for kind, cls in enumerate(ACK_BY_KIND) if cls is not None}

# Property identifiers (MQTT 5.0 section 2.2.2.2, Table 2-4), and which a packet may carry:
# read from the model's table of facts (pubproof.model.properties50) at import, into the
# plain constants and tables the per-packet paths use.
_ID = {row.key: row.identifier for row in PROPERTIES}
_PFI: Final = _ID["payload_format_indicator"]
_MEI: Final = _ID["message_expiry_interval"]
_CONTENT_TYPE: Final = _ID["content_type"]
_RESPONSE_TOPIC: Final = _ID["response_topic"]
_CORRELATION: Final = _ID["correlation_data_hex"]
_SUB_ID: Final = _ID["subscription_identifiers"]
_REASON_STRING: Final = _ID["reason_string"]
_TOPIC_ALIAS: Final = _ID["topic_alias"]
_USER: Final = _ID["user_properties"]
_PUBLISH_IDS = identifiers("PUBLISH")
_ACK_IDS = identifiers(ACKS[0])
_ROWS = [row for row in PROPERTIES if row.identifier in _PUBLISH_IDS | _ACK_IDS]
#: What the code below assumes of each property, held against the table at import so that
#: the two cannot part silently: the value type it reads it as (the fast paths read each
#: type's bytes inline) and (next) which may repeat.
_READ_AS = {
    _PFI: DataType.BYTE,
    _MEI: DataType.FOUR_BYTE_INTEGER,
    _TOPIC_ALIAS: DataType.TWO_BYTE_INTEGER,
    _CONTENT_TYPE: DataType.UTF8_ENCODED_STRING,
    _RESPONSE_TOPIC: DataType.UTF8_ENCODED_STRING,
    _CORRELATION: DataType.BINARY_DATA,
    _SUB_ID: DataType.VARIABLE_BYTE_INTEGER,
    _REASON_STRING: DataType.UTF8_ENCODED_STRING,
    _USER: DataType.UTF8_STRING_PAIR,
}
#: The properties a packet may carry more than once, and those the reading pfi-mei-once
#: decides (``Config.pfi_mei_once``), as the judging path tests them.
_REPEATABLE = frozenset((_USER, _SUB_ID))
_ONCE_BY_READING = frozenset((_PFI, _MEI))
if (
    {row.identifier: row.type for row in _ROWS} != _READ_AS
    or {r.identifier for r in _ROWS if {"PUBLISH", *ACKS} & set(r.repeatable_in)} != _REPEATABLE
    or {row.identifier for row in _ROWS if row.once_reading == "pfi-mei-once"} != _ONCE_BY_READING
):
    raise RuntimeError(
        "the 5.0 decoder reads the properties of PUBLISH and its acknowledgements otherwise "
        "than Table 2-4 (pubproof.model.properties50) says: see _READ_AS, _REPEATABLE, "
        "_ONCE_BY_READING"
    )
#: The fixed-size values: identifier -> size (Byte, Four Byte Integer, Two Byte Integer).
_FIXED_SIZE = {row.identifier: row.type.size for row in _ROWS if row.type.size is not None}
#: UTF-8 Encoded String values: identifier -> (the rule for ill-formed UTF-8 and U+0000,
#: the rule for wildcards or None).
_STRING_RULES: dict[int, tuple[Rule, Rule | None]] = {
    _CONTENT_TYPE: (R.CONTENT_TYPE_STRING, None),
    _RESPONSE_TOPIC: (R.RESPONSE_TOPIC_STRING, R.RESPONSE_TOPIC_WILDCARDS),
    _REASON_STRING: (R.STRING_UTF8, None),
}
_PROPERTY_NAMES = {row.identifier: row.name for row in _ROWS}
#: Per acknowledgement type number: the Reason Codes it may carry (Tables 3-4 to 3-7).
_ACK_CODES = {kind: frozenset(R.ACK_REASON_CODES[name]) for kind, name in _ACK_NAMES.items()}
#: The same, indexed by the packet type number (for the fast path).
_ACK_CODES_BY_KIND: Final[tuple[frozenset[int], ...]] = (frozenset(),) * 4 + tuple(
    _ACK_CODES[kind] for kind in (4, 5, 6, 7)
)
_WILDCARD_BYTES = re.compile(rb"[+#]")


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


def _vbi_size(value: int) -> int:
    """The bytes of the shortest Variable Byte Integer encoding of ``value``."""
    return 1 if value < 128 else 2 if value < 16_384 else 3 if value < 2_097_152 else 4


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


def judge_string(
    raw: bytes | bytearray,
    start: int,
    utf8: Rule,
    nul: Rule,
    wildcards: Rule | None,
    name: str,
    reject_discouraged: bool,
    fail: Callable[[Rule, int, str], ProtocolError],
) -> str:
    """The UTF-8 Encoded String ``raw`` (at offset ``start``): well-formed, then its first
    offending character (U+0000, a wildcard when ``wildcards`` names a rule, a Disallowed
    code point under the reading); ``fail`` makes the error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise fail(
            utf8,
            start + error.start,
            f"the {name} is not well-formed UTF-8 at byte {error.start} (0x{raw[error.start]:02x})",
        ) from None
    limit = len(raw)
    found_nul = raw.find(0)
    at_nul = limit if found_nul < 0 else found_nul
    at_wildcard = limit
    if wildcards is not None:
        wildcard = _WILDCARD_BYTES.search(raw)
        if wildcard is not None:
            at_wildcard = wildcard.start()
    at_discouraged = limit
    if reject_discouraged:
        discouraged = _DISCOURAGED.search(text)
        if discouraged is not None:
            at_discouraged = len(text[: discouraged.start()].encode("utf-8"))
    first = min(at_nul, at_wildcard, at_discouraged)
    if first == limit:
        return text
    if first == at_nul:
        raise fail(nul, start + first, f"the {name} contains U+0000")
    if first == at_wildcard:
        assert wildcards is not None
        raise fail(
            wildcards, start + first, f"the {name} contains the wildcard {chr(raw[first])!r}"
        )
    char = text[len(raw[:first].decode("utf-8"))]
    raise fail(
        R.TOPIC_DISCOURAGED,
        start + first,
        f"the {name} contains U+{ord(char):04X}, a Disallowed Unicode code point",
    )


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


class Decoder50(DecoderState):
    """The MQTT 5.0 methods of :class:`pubproof.reference.codec.Decoder`."""

    __slots__ = ()

    # What Decoder provides (real methods, not declarations under TYPE_CHECKING, which
    # mypyc does not take in a class body; Decoder overrides all three).

    def next_packet(self) -> Packet | _NeedData:
        raise NotImplementedError

    def _fail(self, rule: Rule, at: int, message: str) -> ProtocolError:
        raise NotImplementedError

    def _check_topic_content(self, raw: bytes | bytearray, topic: str, start: int) -> None:
        raise NotImplementedError

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

    def _properties(self, pending: _Pending) -> bool:
        """Judge the properties from ``pending.cursor``, left to right; False when the
        next one has not all arrived (``cursor`` then names it)."""
        config = self._config
        buf = self._buf
        size = len(buf)
        base = self._base
        at = pending.cursor - base
        stop = pending.section_end - base
        publish = pending.first >> 4 == 3
        valid = _PUBLISH_IDS if publish else _ACK_IDS
        seen = pending.seen
        while at < stop:
            if at >= size:
                pending.cursor = base + at
                return False
            ident = buf[at]
            if ident not in valid:
                raise self._fail(
                    R.PROPERTY_IDENTIFIER,
                    at,
                    f"0x{ident:02X} is not a property identifier of "
                    f"{'PUBLISH' if publish else _ACK_NAMES[pending.first >> 4]}",
                )
            name = _PROPERTY_NAMES[ident]
            v = at + 1
            value: object
            # The value's bounds, judged against the declared lengths first.
            fixed = _FIXED_SIZE.get(ident)
            if fixed is not None:
                nxt = v + fixed
                if nxt > stop:
                    raise self._value_past(at, name)
                if nxt > size:
                    pending.cursor = base + at
                    return False
                number = int.from_bytes(buf[v:nxt], "big")
                value = number
            elif ident == _SUB_ID:
                j = v
                number = shift = 0
                while True:
                    if j >= stop:
                        raise self._value_past(at, name)
                    if j >= size:
                        pending.cursor = base + at
                        return False
                    byte = buf[j]
                    if j - v == 3 and byte & 0x80:
                        raise self._fail(
                            R.RL_MAX_BYTES,
                            j,
                            "the fourth byte of the Subscription Identifier has its "
                            "continuation bit set",
                        )
                    number |= (byte & 0x7F) << shift
                    j += 1
                    if not byte & 0x80:
                        break
                    shift += 7
                if config.strict_rl and j - v > _vbi_size(number):
                    raise self._fail(
                        R.RL_MINIMAL,
                        v,
                        f"Subscription Identifier {number} is encoded in {j - v} bytes; "
                        f"{_vbi_size(number)} suffice",
                    )
                nxt = j
                value = number
            else:
                # A string or Binary Data: its length prefix, then the length it declares,
                # then (a string) its content. A User Property is two strings, the name
                # judged before the value's prefix is read.
                texts: list[str] = []
                j = v
                for _ in range(2 if ident == _USER else 1):
                    if j + 2 > stop:
                        raise self._value_past(at, name)
                    if j + 2 > size:
                        pending.cursor = base + at
                        return False
                    k = j + 2 + (buf[j] << 8 | buf[j + 1])
                    if k > stop:
                        raise self._value_past(at, name)
                    if k > size:
                        pending.cursor = base + at
                        return False
                    if ident == _USER:
                        # [MQTT-1.5.7-1] "Both strings MUST comply with the requirements for
                        # UTF-8 Encoded Strings"
                        texts.append(
                            self._string(j + 2, k, R.STRING_PAIR, R.STRING_PAIR, None, name)
                        )
                    elif ident == _CORRELATION:
                        value = bytes(buf[j + 2 : k])
                    else:
                        rule, wildcards = _STRING_RULES[ident]
                        nul = R.STRING_NUL if ident == _REASON_STRING else rule
                        value = self._string(j + 2, k, rule, nul, wildcards, name)
                    j = k
                nxt = j
                if ident == _USER:
                    value = (texts[0], texts[1])
            # Then what the value means.
            if (
                ident in seen
                and ident != _USER
                and ident != _SUB_ID
                and (config.pfi_mei_once or (ident != _PFI and ident != _MEI))
            ):
                raise self._fail(R.PROPERTY_ONCE, at, f"the {name} appears more than once")
            seen.add(ident)
            if ident == _PFI:
                if number > 1:
                    raise self._fail(
                        R.PAYLOAD_FORMAT_VALUE,
                        at,
                        f"Payload Format Indicator {number}; it is 0 or 1",
                    )
                pending.pfi = number
            elif ident == _MEI:
                pending.mei = number
            elif ident == _TOPIC_ALIAS:
                if number == 0:
                    # [MQTT-3.3.2-8] "A sender MUST NOT send a PUBLISH packet containing a
                    # Topic Alias which has the value 0"
                    raise self._fail(R.TOPIC_ALIAS_ZERO, at, "Topic Alias 0 is not permitted")
                if number > self._alias_max:
                    # 3.3.4: "A Topic Alias value of 0 or greater than the Maximum Topic
                    # Alias is a Protocol Error"
                    raise self._fail(
                        R.TOPIC_ALIAS_MAXIMUM,
                        at,
                        f"Topic Alias {number} is above the receiver's Topic Alias Maximum "
                        f"{self._alias_max}",
                    )
                pending.alias = number
            elif ident == _SUB_ID:
                if number == 0:
                    # 3.3.2.3.8: "It is a Protocol Error if the Subscription Identifier has
                    # a value of 0."
                    raise self._fail(
                        R.SUBSCRIPTION_ID_ZERO, at, "Subscription Identifier 0 is not permitted"
                    )
                pending.sub_ids.append(number)
            elif ident == _USER:
                pending.user.append(value)  # type: ignore[arg-type]
            elif ident == _CONTENT_TYPE:
                pending.content_type = value  # type: ignore[assignment]
            elif ident == _RESPONSE_TOPIC:
                pending.response_topic = value  # type: ignore[assignment]
            elif ident == _CORRELATION:
                pending.correlation = value  # type: ignore[assignment]
            else:
                pending.reason_string = value  # type: ignore[assignment]
            at = nxt
        return True

    def _value_past(self, at: int, name: str) -> ProtocolError:
        return self._fail(
            R.PROPERTY_VALUE, at, f"the {name}'s value runs past the end of the property section"
        )

    def _string(
        self,
        start: int,
        stop: int,
        utf8: Rule,
        nul: Rule,
        wildcards: Rule | None,
        name: str,
    ) -> str:
        """The UTF-8 Encoded String at ``buf[start:stop]``, judged (see judge_string)."""
        return judge_string(
            self._buf[start:stop],
            start,
            utf8,
            nul,
            wildcards,
            name,
            self._config.reject_discouraged,
            self._fail,
        )
