"""The reference codec: a streaming, sans-IO decoder and an encoder for PUBLISH and its
acknowledgements.

Theory of operation
-------------------
``Decoder`` owns a buffer of the bytes fed to it and a read position. ``next_packet()``
returns the next complete packet or ``NEED_DATA``; ``close()`` says the stream has ended
and raises ``IncompleteStream`` if it ended inside a packet. A decoder that has raised an
error stays broken and raises the same error again, as a receiver that must close the
connection would.

The judgement order is the model's (see :mod:`pubproof.model.wire`): fields in stream
order, each judged as soon as all its bytes are there. So an error in the topic name is
reported before a 100 MB payload has arrived, and the verdict never depends on how the
stream was cut into chunks. The buffer holds only bytes actually received: a packet that
declares 268 MB reserves nothing.

Iterating over a ``Decoder`` is the fast way to take packets out: for the common packet
(complete, a one-byte Remaining Length, every field within the rules) it builds the packet
inline, and for anything else it asks ``next_packet``, the one place that judges, from
the same position. So both ways give the same packets, and the same errors at the same
offsets.

MQTT 5.0 (``Edition.V50``) adds the property section, the acknowledgements' Reason Codes
and the receiver's ``Limits``; its judgement order is that of the wire contract
(``docs/guides/mqtt5-wire.md``). A 5.0 packet whose header is judged but whose property
section or payload is still arriving is kept as a ``_Pending`` (absolute offsets, the
properties judged so far), so that a large packet arriving in small chunks is judged once,
not once per chunk. Declared bounds (a Property Length past the packet, a string past the
property section) are faults as soon as the length that declares them is read; bytes that
have not arrived yet are never one.

This module shares no logic with the model; it takes only rule ids from the registry.
The two are held together by the tests and the vector corpus.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits, check_limits, resolve_readings
from pubproof.model.rules import INCOMPLETE, Kind, Rule
from pubproof.reference.errors import (
    IncompleteStream,
    InvalidPacket,
    MalformedPacket,
    ProtocolError,
    ProtocolViolation,
)
from pubproof.reference.packets import (
    AckLayout,
    Packet,
    PubAck,
    PubComp,
    Publish,
    PublishLayout,
    PubRec,
    PubRel,
    trusted_ack,
    trusted_publish,
)
from pubproof.reference.properties import (
    NO_ACK_PROPERTIES,
    NO_PUBLISH_PROPERTIES,
    PublishProperties,
    PublishPropertiesLayout,
    trusted_ack_properties,
    trusted_publish_properties,
)


class _NeedData:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_DATA"


#: Returned by :meth:`Decoder.next_packet` when the buffered bytes hold no complete packet.
NEED_DATA: Final = _NeedData()

_ACK_NAMES = {4: "PUBACK", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP"}
_ACK_FLAGS = {4: 0b0000, 5: 0b0000, 6: 0b0010, 7: 0b0000}
_ACK_TYPE_BYTE = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}
#: packet type number (first byte >> 4) -> acknowledgement class, for the fast path
_ACK_BY_KIND: tuple[type[Packet] | None, ...] = (None,) * 4 + (PubAck, PubRec, PubRel, PubComp)
_OTHER_NAMES = {
    1: "CONNECT", 2: "CONNACK", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE",
    11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT",
}  # fmt: skip

# ASCII bytes never occur inside a multi-byte UTF-8 sequence, so once a topic is known to
# be well-formed these can be searched for as bytes.
_FORBIDDEN_TOPIC_BYTES = re.compile(rb"[\x00+#]")
_DISCOURAGED = re.compile(
    "[\x01-\x1f\x7f-\x9f\ufdd0-\ufdef"
    + "".join(f"\\U{plane:04x}fffe\\U{plane:04x}ffff" for plane in range(17))
    + "]"
)


@dataclass(frozen=True, slots=True)
class _Config:
    edition: Edition
    edition_name: str
    first_byte: tuple[tuple[Rule, str] | None, ...]  # per first byte: the error, if any
    strict_rl: bool  # in 5.0: every Variable Byte Integer
    topic_rules: bool  # empty (3.x), U+0000 and wildcards are forbidden
    max_topic_chars: int | None
    reject_discouraged: bool  # in 5.0: in every string
    v5: bool = False
    pfi_mei_once: bool = False  # 5.0 reading pfi-mei-once=reject
    payload_utf8: bool = False  # 5.0 reading payload-utf8=reject


@lru_cache(maxsize=64)
def _config(edition: Edition, readings: tuple[tuple[str, str], ...]) -> _Config:
    chosen = dict(readings)
    v31 = edition is Edition.V31
    v5 = edition is Edition.V50
    table: list[tuple[Rule, str] | None] = []
    for byte in range(256):
        kind, flags = byte >> 4, byte & 0x0F
        error: tuple[Rule, str] | None = None
        if kind == 15 and v5:
            error = (
                R.OUT_OF_SCOPE_TYPE,
                "packet type 15 (AUTH) is valid MQTT 5.0 but outside pubproof's scope "
                "(PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP)",
            )
        elif kind in (0, 15):
            error = (R.RESERVED_TYPE, f"packet type {kind} is reserved")
        elif kind == 3:
            qos = flags >> 1 & 3
            if qos == 3 and not (v31 and chosen.get("qos3") == "accept"):
                error = (R.QOS_RESERVED, "PUBLISH with QoS 3 (both QoS bits set)")
            elif flags & 0b1000 and qos == 0 and chosen.get("dup-qos0") == "reject":
                error = (R.DUP_QOS0, "PUBLISH with QoS 0 has the DUP flag set")
        elif kind in _ACK_NAMES:
            if not (v31 and chosen.get("ack-flags") == "ignore") and flags != _ACK_FLAGS[kind]:
                name = _ACK_NAMES[kind]
                error = (
                    R.ACK_FLAGS[name],
                    f"{name} flags are {flags:04b}; the reserved value is {_ACK_FLAGS[kind]:04b}",
                )
        else:
            error = (
                R.OUT_OF_SCOPE_TYPE,
                f"packet type {kind} ({_OTHER_NAMES[kind]}) is valid MQTT but outside "
                "pubproof's scope (PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP)",
            )
        table.append(error)
    return _Config(
        edition=edition,
        edition_name=edition.value,
        first_byte=tuple(table),
        strict_rl=chosen.get("rl-encoding") == "strict",
        topic_rules=not v31 or chosen.get("topic-rules") == "as-3.1.1",
        max_topic_chars=32_767 if v31 and chosen.get("topic-length") == "32767-chars" else None,
        reject_discouraged=chosen.get("discouraged-code-points") == "reject",
        v5=v5,
        pfi_mei_once=chosen.get("pfi-mei-once") == "reject",
        payload_utf8=chosen.get("payload-utf8") == "reject",
    )


# The configurations of the editions with their default readings, by id(edition): the
# common case, without resolving the readings and hashing them (and the edition, an Enum
# with a Python-level __hash__) on every call. Emptied whenever _config's cache is.
_DEFAULT_CONFIGS: dict[int, _Config] = {}
_clear_config_cache = _config.cache_clear


def _clear_config_caches() -> None:
    _DEFAULT_CONFIGS.clear()
    _clear_config_cache()


_config.cache_clear = _clear_config_caches  # type: ignore[method-assign]


def config_for(edition: Edition, readings: Mapping[str, str] | None) -> _Config:
    if readings is None and type(edition) is Edition:
        config = _DEFAULT_CONFIGS.get(id(edition))
        if config is None:
            key = tuple(sorted(resolve_readings(edition).items()))
            config = _DEFAULT_CONFIGS[id(edition)] = _config(edition, key)
        return config
    resolved = resolve_readings(edition, readings)
    return _config(edition, tuple(sorted(resolved.items())))


def _error(config: _Config, rule: Rule, offset: int | None, message: str) -> ProtocolError:
    edition = config.edition
    cls = MalformedPacket if rule.kind_in(edition) is Kind.MALFORMED else ProtocolViolation
    return cls(
        rule.id_for(edition),
        message,
        offset=offset,
        edition=config.edition_name,
        reason_code=rule.reason_code_in(edition),
    )


# --- MQTT 5.0 ----------------------------------------------------------------------------

# Property identifiers (MQTT 5.0 section 2.2.2.2, Table 2-4), and which a packet may carry.
_PFI, _MEI, _CONTENT_TYPE, _RESPONSE_TOPIC, _CORRELATION = 0x01, 0x02, 0x03, 0x08, 0x09
_SUB_ID, _REASON_STRING, _TOPIC_ALIAS, _USER = 0x0B, 0x1F, 0x23, 0x26
_PUBLISH_IDS = frozenset(
    (_PFI, _MEI, _CONTENT_TYPE, _RESPONSE_TOPIC, _CORRELATION, _SUB_ID, _TOPIC_ALIAS, _USER)
)
_ACK_IDS = frozenset((_REASON_STRING, _USER))
#: The fixed-size values: identifier -> size (Byte, Four Byte Integer, Two Byte Integer).
_FIXED_SIZE = {_PFI: 1, _MEI: 4, _TOPIC_ALIAS: 2}
#: UTF-8 Encoded String values: identifier -> (the rule for ill-formed UTF-8 and U+0000,
#: the rule for wildcards or None).
_STRING_RULES: dict[int, tuple[Rule, Rule | None]] = {
    _CONTENT_TYPE: (R.CONTENT_TYPE_STRING, None),
    _RESPONSE_TOPIC: (R.RESPONSE_TOPIC_STRING, R.RESPONSE_TOPIC_WILDCARDS),
    _REASON_STRING: (R.STRING_UTF8, None),
}
_PROPERTY_NAMES = {
    _PFI: "Payload Format Indicator", _MEI: "Message Expiry Interval",
    _CONTENT_TYPE: "Content Type", _RESPONSE_TOPIC: "Response Topic",
    _CORRELATION: "Correlation Data", _SUB_ID: "Subscription Identifier",
    _REASON_STRING: "Reason String", _TOPIC_ALIAS: "Topic Alias", _USER: "User Property",
}  # fmt: skip
#: Per acknowledgement type number: the Reason Codes it may carry (Tables 3-4 to 3-7).
_ACK_CODES = {kind: frozenset(R.ACK_REASON_CODES[name]) for kind, name in _ACK_NAMES.items()}
#: The same, indexed by the packet type number (for the fast path).
_ACK_CODES_BY_KIND: tuple[frozenset[int], ...] = (frozenset(),) * 4 + tuple(
    _ACK_CODES[kind] for kind in (4, 5, 6, 7)
)
_WILDCARD_BYTES = re.compile(rb"[+#]")


#: The 5.0 fast path remembers up to this many property sections (of at most 127 bytes)
#: with the properties they decode to, per decoder. A sender tends to repeat its sections
#: (the same Content Type and User Properties on every message of a topic), and the
#: judgement of a section is a function of its bytes alone (for one decoder: its readings
#: and limits are fixed), and its result immutable; so a section seen before is not parsed
#: again. Bounded: the memory is at most a few hundred KB, and the cache starts afresh
#: when full.
_SECTION_CACHE_SIZE = 1024


def _vbi_size(value: int) -> int:
    """The bytes of the shortest Variable Byte Integer encoding of ``value``."""
    return 1 if value < 128 else 2 if value < 16_384 else 3 if value < 2_097_152 else 4


class _Pending:
    """A 5.0 packet whose fixed header, variable header and Property Length are judged,
    and whose properties (from ``cursor``) or payload have not all arrived. Offsets are
    stream offsets (the buffer moves under ``feed``)."""

    __slots__ = (
        "alias",
        "content_type",
        "correlation",
        "cursor",
        "end",
        "first",
        "mei",
        "packet_id",
        "pfi",
        "reason_code",
        "reason_string",
        "response_topic",
        "section_end",
        "seen",
        "start",
        "sub_ids",
        "topic",
        "topic_at",
        "user",
    )

    def __init__(
        self,
        *,
        start: int,
        end: int,
        first: int,
        packet_id: int | None,
        section_start: int,
        section_end: int,
        topic: str = "",
        topic_at: int = -1,
        reason_code: int = 0,
    ) -> None:
        self.start = start
        self.end = end
        self.first = first
        self.packet_id = packet_id
        self.topic = topic
        self.topic_at = topic_at  # stream offset of the topic length
        self.reason_code = reason_code
        self.cursor = section_start  # the next property's identifier; -1 once all judged
        self.section_end = section_end
        self.seen: set[int] = set()
        self.pfi: int | None = None
        self.mei: int | None = None
        self.alias: int | None = None
        self.response_topic: str | None = None
        self.correlation: bytes | None = None
        self.content_type: str | None = None
        self.reason_string: str | None = None
        self.user: list[tuple[str, str]] = []
        self.sub_ids: list[int] = []


def _fast_publish_properties(
    buf: bytes | bytearray,
    i: int,
    stop: int,
    alias_max: int,
    discouraged: Callable[[str], object] | None,
) -> PublishProperties | None:
    """The properties of a complete PUBLISH property section ``buf[i:stop]`` when every one
    is within the rules and simple (one-byte Subscription Identifiers, nothing repeated
    that must not be); None at the first doubt, and the judging path takes over.

    Written for speed: identifiers are literals (0x26 User Property, 0x23 Topic Alias,
    0x02 Message Expiry Interval, 0x03 Content Type, 0x01 Payload Format Indicator, 0x0B
    Subscription Identifier, 0x08 Response Topic, 0x09 Correlation Data), the common ones
    first, and the result is built without ``__post_init__`` (see PublishLayout)."""
    pfi = mei = alias = None
    response_topic = content_type = None
    correlation = None
    user: tuple[tuple[str, str], ...] = ()
    sub_ids: tuple[int, ...] = ()
    try:
        while i < stop:
            ident = buf[i]
            if ident == 0x26:
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
                user += ((name, value),)
                i = d
            elif ident == 0x23:
                if alias is not None or i + 3 > stop:
                    return None
                alias = buf[i + 1] << 8 | buf[i + 2]
                if not 0 < alias <= alias_max:
                    return None
                i += 3
            elif ident == 0x02:
                if mei is not None or i + 5 > stop:
                    return None
                mei = buf[i + 1] << 24 | buf[i + 2] << 16 | buf[i + 3] << 8 | buf[i + 4]
                i += 5
            elif ident == 0x03 or ident == 0x08:
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
                if ident == 0x03:
                    if content_type is not None:
                        return None
                    content_type = text
                else:
                    if response_topic is not None or 43 in raw or 35 in raw:  # '+', '#'
                        return None
                    response_topic = text
                i = b
            elif ident == 0x01:
                if pfi is not None or i + 2 > stop:
                    return None
                pfi = buf[i + 1]
                if pfi > 1:
                    return None
                i += 2
            elif ident == 0x0B:
                if i + 2 > stop:
                    return None
                sub_id = buf[i + 1]
                if sub_id == 0 or sub_id & 0x80:
                    return None
                sub_ids += (sub_id,)
                i += 2
            elif ident == 0x09:
                b = i + 3 + (buf[i + 1] << 8 | buf[i + 2])
                if correlation is not None or b > stop:
                    return None
                correlation = bytes(buf[i + 3 : b])
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
    props.__class__ = PublishProperties  # type: ignore[assignment]
    return props  # type: ignore[return-value]


class Decoder:
    """A streaming decoder: feed it bytes in chunks of any size, take packets out.

    >>> d = Decoder()
    >>> d.feed(bytes.fromhex("3209 0003 612f62 000a 6869".replace(" ", "")))
    >>> d.next_packet()
    Publish(topic='a/b', payload=b'hi', qos=1, packet_id=10, dup=False, retain=False)
    >>> d.next_packet()
    NEED_DATA
    """

    __slots__ = (
        "_alias_max",
        "_awaiting",
        "_base",
        "_buf",
        "_config",
        "_error",
        "_max_size",
        "_pending",
        "_pos",
        "_sections",
    )

    def __init__(
        self,
        *,
        edition: Edition = Edition.V311,
        readings: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> None:
        """``limits`` are the receiver's own (MQTT 5.0 only: a ValueError in 3.x unless
        they are the defaults)."""
        self._config = config_for(edition, readings)
        chosen = check_limits(edition, limits)
        self._alias_max = chosen.topic_alias_maximum
        self._max_size = chosen.maximum_packet_size
        self._buf: bytes | bytearray = b""
        self._pos = 0  # read position in _buf
        self._base = 0  # stream offset of _buf[0]
        self._error: ProtocolError | None = None
        self._awaiting = -1  # end of a PUBLISH whose header fields are all judged
        self._pending: _Pending | None = None  # 5.0: a packet partly judged
        # 5.0: property sections the fast path has judged, and what they decoded to (see
        # _SECTION_CACHE_SIZE).
        self._sections: dict[bytes, PublishProperties] = {}

    @property
    def edition(self) -> Edition:
        return self._config.edition

    @property
    def offset(self) -> int:
        """Stream offset of the first byte not yet returned as part of a packet."""
        return self._base + self._pos

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned as part of a packet."""
        return len(self._buf) - self._pos

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Add received bytes to the stream."""
        if not data:
            return
        buf, pos = self._buf, self._pos
        if pos >= len(buf):
            self._base += len(buf)
            self._buf = bytes(data)
            self._pos = 0
            if self._awaiting >= 0:
                self._awaiting -= len(buf)
            return
        if pos:
            # Drop what has been consumed; the rest of a partial packet stays. The result
            # is bytes, whose slices (topics, payloads) need no further copy.
            self._buf = b"".join((buf[pos:], data))
            self._base += pos
            if self._awaiting >= 0:
                self._awaiting -= pos
            self._pos = 0
            return
        # Nothing consumed since the last feed: a packet longer than what came so far
        # grows in place.
        rest = buf if isinstance(buf, bytearray) else bytearray(buf)
        rest += data
        self._buf = rest

    def close(self) -> None:
        """The stream has ended; raise ``IncompleteStream`` if it ended inside a packet."""
        if self._error is not None:
            raise self._error
        if self._pos < len(self._buf):
            # Any error that the buffered bytes already show takes precedence; a complete
            # packet still buffered is left for the caller to take.
            saved = self._pos, self._awaiting
            result = self.next_packet()
            self._pos, self._awaiting = saved
            if result is not NEED_DATA:
                return
            start = self.offset
            self._error = IncompleteStream(
                INCOMPLETE,
                f"the stream ends inside the packet that starts at offset {start} "
                f"({self.buffered} byte(s) of it received)",
                offset=start,
                edition=self._config.edition_name,
            )
            raise self._error

    def __iter__(self) -> Iterator[Packet]:
        """Every complete packet buffered now."""
        return self._iter5() if self._config.v5 else self._iter3()

    def _iter3(self) -> Iterator[Packet]:
        # A fast path for the common packet: complete, with a one-byte Remaining Length
        # and every field within the rules. It makes the judgements of ``_next`` and, at
        # the first doubt (a rule broken, a packet not complete, a longer Remaining
        # Length, a payload still arriving, an error already raised), ``break``s to
        # ``next_packet``, which judges from the same position: so the packets, errors and
        # offsets are those of ``next_packet`` by construction. The state is stored before
        # each ``yield`` and read again after it: the caller may feed or take packets in
        # between.
        config = self._config
        first_byte = config.first_byte
        topic_rules = config.topic_rules
        max_chars = config.max_topic_chars
        discouraged = _DISCOURAGED.search if config.reject_discouraged else None
        next_packet = self.next_packet
        buf: bytes | bytearray = b""
        is_bytes = True
        while True:
            while True:  # the fast path
                if self._error is not None or self._awaiting >= 0:
                    break
                if self._buf is not buf:
                    buf = self._buf
                    is_bytes = type(buf) is bytes
                size = len(buf)
                pos = self._pos
                body = pos + 2
                if body > size:
                    break
                first = buf[pos]
                length = buf[pos + 1]
                end = body + length
                if first_byte[first] is not None or length > 127 or end > size:
                    break
                if first & 0xF0 != 0x30:  # an acknowledgement (the table let no other type by)
                    if length != 2:
                        break
                    ack = AckLayout()
                    ack.packet_id = buf[body] << 8 | buf[body + 1]
                    ack.reason_code = 0
                    ack.properties = None
                    ack.__class__ = _ACK_BY_KIND[first >> 4]  # type: ignore[assignment]
                    self._pos = end
                    yield ack  # type: ignore[misc]
                    continue
                # PUBLISH
                if length < 2:
                    break
                topic_start = body + 2
                topic_end = topic_start + (buf[body] << 8 | buf[body + 1])
                if topic_end > end or topic_end == topic_start:
                    break
                raw = buf[topic_start:topic_end]
                if topic_rules and (0 in raw or 43 in raw or 35 in raw):  # U+0000, '+', '#'
                    break
                try:
                    topic = raw.decode("utf-8")
                except UnicodeDecodeError:
                    break
                if max_chars is not None and len(topic) > max_chars:
                    break
                if discouraged is not None and discouraged(topic) is not None:
                    break
                qos = first >> 1 & 3
                if qos:
                    payload_start = topic_end + 2
                    if payload_start > end:
                        break
                    packet_id: int | None = buf[topic_end] << 8 | buf[topic_end + 1]
                    if not packet_id:
                        break
                else:
                    payload_start = topic_end
                    packet_id = None
                packet = PublishLayout()
                packet.topic = topic
                payload = buf[payload_start:end]  # bytes when is_bytes
                packet.payload = payload if is_bytes else bytes(payload)  # type: ignore[assignment]
                packet.qos = qos
                packet.packet_id = packet_id
                packet.dup = (first & 8) != 0
                packet.retain = (first & 1) != 0
                packet.properties = None
                packet.__class__ = Publish  # type: ignore[assignment]
                self._pos = end
                yield packet  # type: ignore[misc]
            result = next_packet()
            if result is NEED_DATA:
                return
            yield result  # type: ignore[misc]

    def next_packet(self) -> Packet | _NeedData:
        """The next complete packet, or ``NEED_DATA``. Raises ``ProtocolError`` on bad bytes."""
        if self._error is not None:
            raise self._error
        try:
            return self._next5() if self._config.v5 else self._next()
        except ProtocolError as error:
            self._error = error
            raise

    def _fail(self, rule: Rule, at: int, message: str) -> ProtocolError:
        return _error(self._config, rule, self._base + at, message)

    def _next(self) -> Packet | _NeedData:
        buf, pos = self._buf, self._pos
        size = len(buf)
        if pos >= size:
            return NEED_DATA
        config = self._config
        first = buf[pos]
        problem = config.first_byte[first]
        if problem is not None:
            raise self._fail(problem[0], pos, problem[1])
        if pos + 1 >= size:
            return NEED_DATA

        # Remaining Length: the one-byte case first, it is the common one.
        length = buf[pos + 1]
        body = pos + 2
        if length & 0x80:
            length &= 0x7F
            shift = 7
            while True:
                if body >= size:
                    return NEED_DATA
                byte = buf[body]
                if body - pos == 4 and byte & 0x80:
                    raise self._fail(
                        R.RL_MAX_BYTES,
                        body,
                        "the fourth Remaining Length byte has its continuation bit set (at most "
                        "four bytes, 268,435,455)",
                    )
                length |= (byte & 0x7F) << shift
                body += 1
                if not byte & 0x80:
                    break
                shift += 7
            if config.strict_rl:
                needed = (
                    1 if length < 128 else 2 if length < 16_384 else 3 if length < 2_097_152 else 4
                )
                if body - pos - 1 > needed:
                    raise self._fail(
                        R.RL_MINIMAL,
                        pos + 1,
                        f"Remaining Length {length} is encoded in {body - pos - 1} bytes; "
                        f"{needed} suffice",
                    )
        end = body + length
        kind = first >> 4

        if kind != 3:
            name = _ACK_NAMES[kind]
            if length != 2:
                raise self._fail(
                    R.ACK_RL[name], pos + 1, f"{name} has Remaining Length {length}; it must be 2"
                )
            if end > size:
                return NEED_DATA
            self._pos = end
            return trusted_ack[name](buf[body] << 8 | buf[body + 1], 0, None)

        if end > size and self._awaiting == end:
            return NEED_DATA  # header fields already judged; the payload is still arriving

        # PUBLISH variable header: topic name, then the packet identifier if QoS > 0.
        if length < 2:
            raise self._fail(
                R.PUBLISH_RL_COVERS,
                body,
                f"Remaining Length {length} leaves no room for the topic name's length",
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
                f"{length - 2} bytes the Remaining Length leaves",
            )
        if topic_end == topic_start and config.topic_rules:
            raise self._fail(R.TOPIC_NOT_EMPTY, body, "the topic name is empty")
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
        if config.max_topic_chars is not None and len(topic) > config.max_topic_chars:
            raise self._fail(
                R.TOPIC_MAX_31,
                body,
                f"the topic name has {len(topic)} characters; MQTT 3.1 allows 32,767",
            )
        self._check_topic_content(raw, topic, topic_start)

        qos = first >> 1 & 3
        payload_start = topic_end
        packet_id: int | None = None
        if qos:
            payload_start = topic_end + 2
            if payload_start > end:
                raise self._fail(
                    R.PUBLISH_RL_COVERS,
                    topic_end,
                    f"QoS {qos} PUBLISH has no room for its packet identifier in the Remaining "
                    "Length",
                )
            if payload_start > size:
                return NEED_DATA
            packet_id = buf[topic_end] << 8 | buf[topic_end + 1]
            if not packet_id:
                raise self._fail(
                    R.PACKET_ID_NONZERO, topic_end, "packet identifier 0 is not allowed"
                )
        if end > size:
            self._awaiting = end
            return NEED_DATA
        self._awaiting = -1
        self._pos = end
        return trusted_publish(
            topic, bytes(buf[payload_start:end]), qos, packet_id, bool(first & 8), bool(first & 1)
        )

    def _check_topic_content(self, raw: bytes | bytearray, topic: str, start: int) -> None:
        config = self._config
        if not config.reject_discouraged and not (
            config.topic_rules and (0 in raw or 43 in raw or 35 in raw)  # U+0000, '+', '#'
        ):
            return
        found = _FORBIDDEN_TOPIC_BYTES.search(raw) if config.topic_rules else None
        discouraged = _DISCOURAGED.search(topic) if config.reject_discouraged else None
        if found is None and discouraged is None:
            return
        at_forbidden = found.start() if found is not None else len(raw)
        at_discouraged = (
            len(topic[: discouraged.start()].encode("utf-8"))
            if discouraged is not None
            else len(raw)
        )
        if found is not None and at_forbidden < at_discouraged:
            char = raw[at_forbidden : at_forbidden + 1]
            if char == b"\x00":
                raise self._fail(
                    R.TOPIC_NUL, start + at_forbidden, "the topic name contains U+0000"
                )
            raise self._fail(
                R.TOPIC_NO_WILDCARDS,
                start + at_forbidden,
                f"the topic name contains the wildcard {char.decode()!r}",
            )
        assert discouraged is not None
        raise self._fail(
            R.TOPIC_DISCOURAGED,
            start + at_discouraged,
            f"the topic name contains U+{ord(discouraged.group()):04X}, which it SHOULD NOT",
        )

    # --- MQTT 5.0 ------------------------------------------------------------------------

    def _iter5(self) -> Iterator[Packet]:
        # The 5.0 fast path: as in _iter3, a complete packet with a one-byte Remaining
        # Length (and a one-byte Property Length) whose every field is within the rules is
        # built inline; at the first doubt it ``break``s to ``next_packet``.
        config = self._config
        first_byte = config.first_byte
        discouraged = _DISCOURAGED.search if config.reject_discouraged else None
        max_size = self._max_size if self._max_size is not None else 1 << 40
        alias_max = self._alias_max
        payload_utf8 = config.payload_utf8
        no_properties = NO_PUBLISH_PROPERTIES
        no_ack_properties = NO_ACK_PROPERTIES
        ack_codes = _ACK_CODES_BY_KIND
        fast_properties = _fast_publish_properties
        sections = self._sections
        next_packet = self.next_packet
        buf: bytes | bytearray = b""
        is_bytes = True
        while True:
            while True:
                if self._error is not None:
                    break
                if self._buf is not buf:
                    buf = self._buf
                    is_bytes = type(buf) is bytes
                size = len(buf)
                pos = self._pos
                body = pos + 2
                if body > size:
                    break
                first = buf[pos]
                length = buf[pos + 1]
                end = body + length
                if (
                    first_byte[first] is not None
                    or length > 127
                    or end > size
                    or length + 2 > max_size
                ):
                    break
                if first & 0xF0 != 0x30:
                    if length == 2:
                        code = 0
                    elif length == 3:  # a Reason Code and no properties
                        code = buf[body + 2]
                        if code not in ack_codes[first >> 4]:
                            break
                    else:
                        break
                    ack = AckLayout()
                    ack.packet_id = buf[body] << 8 | buf[body + 1]
                    ack.reason_code = code
                    ack.properties = no_ack_properties
                    ack.__class__ = _ACK_BY_KIND[first >> 4]  # type: ignore[assignment]
                    self._pos = end
                    yield ack  # type: ignore[misc]
                    continue
                if length < 3:  # a topic length and a Property Length at least
                    break
                topic_start = body + 2
                topic_end = topic_start + (buf[body] << 8 | buf[body + 1])
                if topic_end >= end or topic_end == topic_start:
                    break
                raw = buf[topic_start:topic_end]
                if 0 in raw or 43 in raw or 35 in raw:  # U+0000, '+', '#'
                    break
                try:
                    topic = raw.decode("utf-8")
                except UnicodeDecodeError:
                    break
                if discouraged is not None and discouraged(topic) is not None:
                    break
                qos = first >> 1 & 3
                if qos:
                    at = topic_end + 2
                    if at >= end:
                        break
                    packet_id: int | None = buf[topic_end] << 8 | buf[topic_end + 1]
                    if not packet_id:
                        break
                else:
                    at = topic_end
                    packet_id = None
                property_length = buf[at]
                if property_length == 0:
                    properties = no_properties
                    payload_start = at + 1
                else:
                    payload_start = at + 1 + property_length
                    if property_length > 127 or payload_start > end:
                        break
                    key = buf[at + 1 : payload_start]
                    if not is_bytes:
                        key = bytes(key)
                    found = sections.get(key)  # type: ignore[arg-type]  # bytes by now
                    if found is None:
                        found = fast_properties(buf, at + 1, payload_start, alias_max, discouraged)
                        if found is None:
                            break
                        if len(sections) >= _SECTION_CACHE_SIZE:
                            sections.clear()
                        sections[key] = found  # type: ignore[index]
                    properties = found
                payload = buf[payload_start:end]
                if payload_utf8 and properties.payload_format_indicator == 1:
                    try:
                        payload.decode("utf-8")
                    except UnicodeDecodeError:
                        break
                packet = PublishLayout()
                packet.topic = topic
                packet.payload = payload if is_bytes else bytes(payload)  # type: ignore[assignment]
                packet.qos = qos
                packet.packet_id = packet_id
                packet.dup = (first & 8) != 0
                packet.retain = (first & 1) != 0
                packet.properties = properties
                packet.__class__ = Publish  # type: ignore[assignment]
                self._pos = end
                yield packet  # type: ignore[misc]
            result = next_packet()
            if result is NEED_DATA:
                return
            yield result  # type: ignore[misc]

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
            return trusted_ack[name](buf[body] << 8 | buf[body + 1], 0, NO_ACK_PROPERTIES)
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
            return trusted_ack[name](packet_id, code, NO_ACK_PROPERTIES)
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
            return trusted_ack[_ACK_NAMES[kind]](
                pending.packet_id,  # type: ignore[arg-type]
                pending.reason_code,
                trusted_ack_properties(pending.reason_string, tuple(pending.user))
                if pending.reason_string is not None or pending.user
                else NO_ACK_PROPERTIES,
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
        return trusted_publish(
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
            else NO_PUBLISH_PROPERTIES,
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
        """The UTF-8 Encoded String at ``buf[start:stop]``: well-formed, then its first
        offending character (U+0000, a wildcard when ``wildcards`` names a rule, a
        Disallowed code point under the reading)."""
        raw = self._buf[start:stop]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self._fail(
                utf8,
                start + error.start,
                f"the {name} is not well-formed UTF-8 at byte {error.start} "
                f"(0x{raw[error.start]:02x})",
            ) from None
        config = self._config
        limit = len(raw)
        found_nul = raw.find(0)
        at_nul = limit if found_nul < 0 else found_nul
        at_wildcard = limit
        if wildcards is not None:
            wildcard = _WILDCARD_BYTES.search(raw)
            if wildcard is not None:
                at_wildcard = wildcard.start()
        at_discouraged = limit
        if config.reject_discouraged:
            discouraged = _DISCOURAGED.search(text)
            if discouraged is not None:
                at_discouraged = len(text[: discouraged.start()].encode("utf-8"))
        first = min(at_nul, at_wildcard, at_discouraged)
        if first == limit:
            return text
        if first == at_nul:
            raise self._fail(nul, start + first, f"the {name} contains U+0000")
        if first == at_wildcard:
            assert wildcards is not None
            raise self._fail(
                wildcards,
                start + first,
                f"the {name} contains the wildcard {chr(raw[first])!r}",
            )
        char = text[len(raw[:first].decode("utf-8"))]
        raise self._fail(
            R.TOPIC_DISCOURAGED,
            start + first,
            f"the {name} contains U+{ord(char):04X}, a Disallowed Unicode code point",
        )


def decode_all(
    data: bytes,
    *,
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
    limits: Limits | None = None,
) -> list[Packet]:
    """Decode a complete byte stream; raises on the first error (``IncompleteStream`` if the
    stream ends inside a packet)."""
    decoder = Decoder(edition=edition, readings=readings, limits=limits)
    decoder.feed(data)
    packets = list(decoder)
    decoder.close()
    return packets


def _remaining_length_bytes(value: int) -> bytes:
    if value < 128:
        return bytes((value,))
    out = bytearray()
    while value:
        value, digit = divmod(value, 128)
        out.append(digit | 0x80 if value else digit)
    return bytes(out)


def encode(
    packet: Packet,
    *,
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
    limits: Limits | None = None,
) -> bytes:
    """The bytes of ``packet``. Raises ``InvalidPacket`` for anything the sender must not
    send in this edition and reading (a decoder with the same settings accepts the output).

    ``limits`` (MQTT 5.0) are the *receiver's*, as it declared them: when given, a packet
    above its Maximum Packet Size or a Topic Alias above its Topic Alias Maximum is
    refused; without them neither is checked."""
    config = config_for(edition, readings)
    if config.v5:
        if limits is not None:
            check_limits(edition, limits)
        if isinstance(packet, Publish):
            return _encode_publish5(packet, config, limits)
        return _encode_ack5(packet, config, limits)
    if limits is not None:
        check_limits(edition, limits)  # a ValueError unless they are the defaults
    if isinstance(packet, Publish):
        if packet.properties is not None:
            # 3.1 and 3.1.1 have no property section: its bytes would be read as the
            # payload. No rule of those editions is about properties, so the refusal names
            # the scope rule (PP-scope-packet-type): such a PUBLISH is not one of theirs.
            raise InvalidPacket(
                R.OUT_OF_SCOPE_TYPE.id_for(config.edition),
                "a PUBLISH with properties exists only in MQTT 5.0",
                edition=config.edition_name,
            )
        return _encode_publish(packet, config)
    if packet.reason_code != 0 or packet.properties is not None:
        # Likewise the scope rule (as the model's encoder says): a Reason Code or
        # properties would make the Remaining Length more than 2, which a 3.x decoder
        # rejects, but the packet itself is not one of these editions'.
        raise InvalidPacket(
            R.OUT_OF_SCOPE_TYPE.id_for(config.edition),
            f"a {packet.type_name} with a Reason Code or properties exists only in MQTT 5.0",
            edition=config.edition_name,
        )
    packet_id = packet.packet_id
    return bytes((_ACK_TYPE_BYTE[packet.type_name], 2, packet_id >> 8, packet_id & 0xFF))


def _encode_publish(packet: Publish, config: _Config) -> bytes:
    first = 0x30 | packet.qos << 1 | (8 if packet.dup else 0) | (1 if packet.retain else 0)
    problem = config.first_byte[first]
    if problem is not None:
        raise InvalidPacket(
            problem[0].id_for(config.edition), problem[1], edition=config.edition_name
        )
    topic = packet.topic.encode("utf-8")
    if config.topic_rules and not topic:
        raise InvalidPacket(R.TOPIC_NOT_EMPTY.id_for(config.edition), "the topic name is empty")
    if config.max_topic_chars is not None and len(packet.topic) > config.max_topic_chars:
        raise InvalidPacket(
            R.TOPIC_MAX_31.id_for(config.edition),
            f"the topic name has {len(packet.topic)} characters; MQTT 3.1 allows 32,767",
        )
    qos, payload = packet.qos, packet.payload
    body_length = 2 + len(topic) + (2 if qos else 0) + len(payload)
    if body_length < 128:  # the common case: a one-byte Remaining Length
        header = bytes((first, body_length, len(topic) >> 8, len(topic) & 0xFF))
    else:
        header = (
            bytes((first,)) + _remaining_length_bytes(body_length) + len(topic).to_bytes(2, "big")
        )
    # Judge the topic content exactly as a receiver would (when it can break a rule).
    if config.reject_discouraged or (
        config.topic_rules and (0 in topic or 43 in topic or 35 in topic)  # U+0000, '+', '#'
    ):
        probe = Decoder.__new__(Decoder)
        probe._config = config
        probe._base = 0
        try:
            probe._check_topic_content(topic, packet.topic, len(header))
        except ProtocolError as error:
            raise InvalidPacket(error.rule, error.message, edition=config.edition_name) from None
    if qos:
        packet_id = packet.packet_id
        assert packet_id is not None
        return b"".join((header, topic, packet_id.to_bytes(2, "big"), payload))
    return header + topic + payload


# --- MQTT 5.0 encoding -------------------------------------------------------------------


def _vbi(value: int) -> bytes:
    """The shortest Variable Byte Integer encoding of ``value`` (1.5.5)."""
    if value < 128:
        return bytes((value,))
    return _remaining_length_bytes(value)


def _string_bytes(text: str) -> bytes:
    raw = text.encode("utf-8")
    return len(raw).to_bytes(2, "big") + raw


def _refuse(config: _Config, rule: Rule, message: str) -> InvalidPacket:
    return InvalidPacket(rule.id_for(config.edition), message, edition=config.edition_name)


def _judge_string(
    config: _Config, text: str, utf8: Rule, nul: Rule, wildcards: Rule | None, name: str
) -> None:
    """Refuse a string the decoder would reject, naming the decoder's rule (construction
    has already refused what UTF-8 cannot encode)."""
    if (
        not config.reject_discouraged
        and "\x00" not in text
        and (wildcards is None or ("+" not in text and "#" not in text))
    ):
        return  # nothing the decoder could find (the common case)
    probe = Decoder.__new__(Decoder)
    probe._config = config
    probe._base = 0
    probe._buf = text.encode("utf-8")
    try:
        probe._string(0, len(probe._buf), utf8, nul, wildcards, name)
    except ProtocolError as error:
        raise InvalidPacket(error.rule, error.message, edition=config.edition_name) from None


def _publish_properties_bytes(props: PublishProperties) -> bytes:
    # The order: that of the fields (and of PUBLISH_PROPERTY_KEYS in model/trace.py).
    # The contract does not fix one; every order decodes to the same packet.
    out = bytearray()
    if props.payload_format_indicator is not None:
        out += bytes((_PFI, props.payload_format_indicator))
    if props.message_expiry_interval is not None:
        out.append(_MEI)
        out += props.message_expiry_interval.to_bytes(4, "big")
    if props.topic_alias is not None:
        out.append(_TOPIC_ALIAS)
        out += props.topic_alias.to_bytes(2, "big")
    if props.response_topic is not None:
        out.append(_RESPONSE_TOPIC)
        out += _string_bytes(props.response_topic)
    if props.correlation_data is not None:
        out.append(_CORRELATION)
        out += len(props.correlation_data).to_bytes(2, "big") + props.correlation_data
    for name, value in props.user_properties:
        out.append(_USER)
        out += _string_bytes(name) + _string_bytes(value)
    for sub_id in props.subscription_identifiers:
        out.append(_SUB_ID)
        out += _vbi(sub_id)
    if props.content_type is not None:
        out.append(_CONTENT_TYPE)
        out += _string_bytes(props.content_type)
    return bytes(out)


def _judge_size(config: _Config, length: int, limits: Limits | None) -> None:
    """The Remaining Length and the packet size, as the decoder judges them first."""
    if length > 268_435_455:
        raise _refuse(
            config, R.RL_MAX_BYTES, f"Remaining Length {length:,} needs more than four bytes"
        )
    size = 1 + _vbi_size(length) + length
    maximum = None if limits is None else limits.maximum_packet_size
    if maximum is not None and size > maximum:
        raise _refuse(
            config,
            R.PACKET_TOO_LARGE,
            f"the packet is {size} bytes; the receiver's Maximum Packet Size is {maximum}",
        )


def _encode_publish5(packet: Publish, config: _Config, limits: Limits | None) -> bytes:
    first = 0x30 | packet.qos << 1 | (8 if packet.dup else 0) | (1 if packet.retain else 0)
    problem = config.first_byte[first]
    if problem is not None:
        raise _refuse(config, problem[0], problem[1])
    props = packet.properties if packet.properties is not None else NO_PUBLISH_PROPERTIES
    topic = packet.topic.encode("utf-8")
    section = _publish_properties_bytes(props)
    variable = len(topic).to_bytes(2, "big") + topic
    if packet.qos:
        assert packet.packet_id is not None
        variable += packet.packet_id.to_bytes(2, "big")
    variable += _vbi(len(section)) + section
    length = len(variable) + len(packet.payload)
    _judge_size(config, length, limits)
    # Then every field in the order the decoder judges it.
    if config.reject_discouraged or 0 in topic or 43 in topic or 35 in topic:
        probe = Decoder.__new__(Decoder)
        probe._config = config
        probe._base = 0
        try:
            probe._check_topic_content(topic, packet.topic, 0)
        except ProtocolError as error:
            raise InvalidPacket(error.rule, error.message, edition=config.edition_name) from None
    pfi = props.payload_format_indicator
    if pfi is not None and pfi > 1:
        raise _refuse(
            config, R.PAYLOAD_FORMAT_VALUE, f"Payload Format Indicator {pfi}; it is 0 or 1"
        )
    alias = props.topic_alias
    if alias is not None:
        if alias == 0:
            # [MQTT-3.3.2-8] "A sender MUST NOT send a PUBLISH packet containing a Topic
            # Alias which has the value 0"
            raise _refuse(config, R.TOPIC_ALIAS_ZERO, "Topic Alias 0 is not permitted")
        if limits is not None and alias > limits.topic_alias_maximum:
            # [MQTT-3.3.2-9], [MQTT-3.3.2-11]: not above the receiver's maximum
            raise _refuse(
                config,
                R.TOPIC_ALIAS_MAXIMUM,
                f"Topic Alias {alias} is above the receiver's Topic Alias Maximum "
                f"{limits.topic_alias_maximum}",
            )
    if props.response_topic is not None:
        _judge_string(
            config,
            props.response_topic,
            R.RESPONSE_TOPIC_STRING,
            R.RESPONSE_TOPIC_STRING,
            R.RESPONSE_TOPIC_WILDCARDS,
            "Response Topic",
        )
    for name, value in props.user_properties:
        _judge_string(config, name, R.STRING_PAIR, R.STRING_PAIR, None, "User Property")
        _judge_string(config, value, R.STRING_PAIR, R.STRING_PAIR, None, "User Property")
    for sub_id in props.subscription_identifiers:
        if sub_id == 0:
            raise _refuse(config, R.SUBSCRIPTION_ID_ZERO, "Subscription Identifier 0")
    if props.content_type is not None:
        _judge_string(
            config,
            props.content_type,
            R.CONTENT_TYPE_STRING,
            R.CONTENT_TYPE_STRING,
            None,
            "Content Type",
        )
    if not topic and alias is None:
        raise _refuse(
            config, R.TOPIC_OR_ALIAS, "the topic name is empty and there is no Topic Alias"
        )
    if pfi == 1 and config.payload_utf8:
        try:
            packet.payload.decode("utf-8")
        except UnicodeDecodeError as error:
            # 3.3.2.3.2: "The UTF-8 data in the Payload MUST be well-formed UTF-8"
            raise _refuse(
                config,
                R.PAYLOAD_UTF8,
                f"the payload is marked UTF-8 but is not well-formed at byte {error.start}",
            ) from None
    return b"".join((bytes((first,)), _vbi(length), variable, packet.payload))


def _encode_ack5(packet: Packet, config: _Config, limits: Limits | None) -> bytes:
    assert not isinstance(packet, Publish)
    name = packet.type_name
    code = packet.reason_code
    props = packet.properties if packet.properties is not None else NO_ACK_PROPERTIES
    head = packet.packet_id.to_bytes(2, "big")
    if props.reason_string is None and not props.user_properties:
        body = head if code == 0 else head + bytes((code,))  # the short forms (3.4.2.1)
    else:
        section = bytearray()
        if props.reason_string is not None:
            section.append(_REASON_STRING)
            section += _string_bytes(props.reason_string)
        for key, value in props.user_properties:
            section.append(_USER)
            section += _string_bytes(key) + _string_bytes(value)
        body = head + bytes((code,)) + _vbi(len(section)) + section
    _judge_size(config, len(body), limits)
    if code not in R.ACK_REASON_CODES[name]:
        # [MQTT-3.4.2-1] "MUST use one of the PUBACK Reason Codes" (3.5.2-1, ...)
        raise _refuse(config, R.ACK_REASON_CODE[name], f"0x{code:02X} is not a {name} Reason Code")
    if props.reason_string is not None:
        _judge_string(
            config, props.reason_string, R.STRING_UTF8, R.STRING_NUL, None, "Reason String"
        )
    for key, value in props.user_properties:
        _judge_string(config, key, R.STRING_PAIR, R.STRING_PAIR, None, "User Property")
        _judge_string(config, value, R.STRING_PAIR, R.STRING_PAIR, None, "User Property")
    return (
        b"".join((bytes((_ACK_TYPE_BYTE[name], len(body))), body))
        if len(body) < 128
        else (bytes((_ACK_TYPE_BYTE[name],)) + _vbi(len(body)) + body)
    )
