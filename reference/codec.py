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
and the receiver's ``Limits``, in the judgement order of the wire contract
(``docs/guides/mqtt5-wire.md``): the decoder's 5.0 methods are in
:mod:`pubproof.reference.decode50` (the judging path), :mod:`pubproof.reference.fast50`
(the fast path) and :mod:`pubproof.reference.section50` (the property section; ``Decoder``
inherits them all), the encoder's in :mod:`pubproof.reference.encode50`.

This module shares no logic with the model; it takes only rule ids from the registry.
The two are held together by the tests and the vector corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits, check_limits, resolve_readings
from pubproof.model.rules import INCOMPLETE, Kind, Rule
from pubproof.reference.common import ACK_BY_KIND as _ACK_BY_KIND
from pubproof.reference.common import ACK_NAMES as _ACK_NAMES
from pubproof.reference.common import ACK_TYPE_BYTE as _ACK_TYPE_BYTE
from pubproof.reference.common import DISCOURAGED as _DISCOURAGED
from pubproof.reference.common import NEED_DATA, Config, Whole5, _NeedData, _Pending
from pubproof.reference.decode50 import Decoder50
from pubproof.reference.encode50 import encode_ack5, encode_publish5
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
    Publish,
    PublishLayout,
    trusted_ack,
    trusted_publish,
)

__all__ = ["NEED_DATA", "Decoder", "decode_all", "encode"]

#: imported names the per-packet path reads, as this module's own Final names: the
#: compiled build reads those as C statics, not from the module's dict at every use
_TRUSTED_PUBLISH: Final = trusted_publish
_TRUSTED_ACK: Final = trusted_ack
_ACK_NAME: Final = _ACK_NAMES

_ACK_FLAGS = {4: 0b0000, 5: 0b0000, 6: 0b0010, 7: 0b0000}
_OTHER_NAMES = {
    1: "CONNECT", 2: "CONNACK", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE",
    11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT",
}  # fmt: skip

# ASCII bytes never occur inside a multi-byte UTF-8 sequence, so once a topic is known to
# be well-formed these can be searched for as bytes.
_FORBIDDEN_TOPIC_BYTES = re.compile(rb"[\x00+#]")


@lru_cache(maxsize=64)
def _config(edition: Edition, readings: tuple[tuple[str, str], ...]) -> Config:
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
                name = _ACK_NAME[kind]
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
    return Config(
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


# The configurations of the editions with their default readings, by id(edition) (a memo
# keyed by identity: reference.layout): the common case, without resolving the readings
# and hashing them on every call. Emptied with _config's cache by clear_caches.
_DEFAULT_CONFIGS: dict[int, Config] = {}


def clear_caches() -> None:
    """Forget every configuration built so far (after a test patches a table they read)."""
    _DEFAULT_CONFIGS.clear()
    _config.cache_clear()


def config_for(edition: Edition, readings: Mapping[str, str] | None) -> Config:
    if readings is None and type(edition) is Edition:
        config = _DEFAULT_CONFIGS.get(id(edition))
        if config is None:
            key = tuple(sorted(resolve_readings(edition).items()))
            config = _DEFAULT_CONFIGS[id(edition)] = _config(edition, key)
        return config
    resolved = resolve_readings(edition, readings)
    return _config(edition, tuple(sorted(resolved.items())))


def _error(config: Config, rule: Rule, offset: int | None, message: str) -> ProtocolError:
    edition = config.edition
    cls = MalformedPacket if rule.kind_in(edition) is Kind.MALFORMED else ProtocolViolation
    return cls(
        rule.id_for(edition),
        message,
        offset=offset,
        edition=config.edition_name,
        reason_code=rule.reason_code_in(edition),
    )


class Decoder(Decoder50):
    """A streaming decoder: feed it bytes in chunks of any size, take packets out.

    >>> d = Decoder()
    >>> d.feed(bytes.fromhex("3209 0003 612f62 000a 6869".replace(" ", "")))
    >>> d.next_packet()
    Publish(topic='a/b', payload=b'hi', qos=1, packet_id=10, dup=False, retain=False)
    >>> d.next_packet()
    NEED_DATA
    """

    __slots__ = ()  # the state is DecoderState's

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
        self._whole = Whole5()

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
            # bytes kept as they are: bytes(data) of bytes is the same object, but by a
            # call of the type (about 1.5% of a capture's run)
            self._buf = data if type(data) is bytes else bytes(data)
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
                    # the layout swap (reference.layout)
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
                # the layout swap (reference.layout)
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
            name = _ACK_NAME[kind]
            if length != 2:
                raise self._fail(
                    R.ACK_RL[name], pos + 1, f"{name} has Remaining Length {length}; it must be 2"
                )
            if end > size:
                return NEED_DATA
            self._pos = end
            return _TRUSTED_ACK[name](buf[body] << 8 | buf[body + 1], 0, None)

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
        payload = buf[payload_start:end]  # bytes unless the buffer grew in place
        return _TRUSTED_PUBLISH(
            topic,
            payload if type(payload) is bytes else bytes(payload),
            qos,
            packet_id,
            bool(first & 8),
            bool(first & 1),
        )

    def _check_topic_content(self, raw: bytes | bytearray, topic: str, start: int) -> None:
        check_topic_content(self._config, raw, topic, self._base + start)


def check_topic_content(config: Config, raw: bytes | bytearray, topic: str, start: int) -> None:
    """The topic name's characters, as the decoder and the encoder judge them: U+0000 and
    the wildcards where the topic rules apply, the discouraged code points under their
    reading; ``start`` is the stream offset of the topic's first byte."""
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
        len(topic[: discouraged.start()].encode("utf-8")) if discouraged is not None else len(raw)
    )
    if found is not None and at_forbidden < at_discouraged:
        char = raw[at_forbidden : at_forbidden + 1]
        if char == b"\x00":
            raise _error(
                config, R.TOPIC_NUL, start + at_forbidden, "the topic name contains U+0000"
            )
        raise _error(
            config,
            R.TOPIC_NO_WILDCARDS,
            start + at_forbidden,
            f"the topic name contains the wildcard {char.decode()!r}",
        )
    assert discouraged is not None
    raise _error(
        config,
        R.TOPIC_DISCOURAGED,
        start + at_discouraged,
        f"the topic name contains U+{ord(discouraged.group()):04X}, which it SHOULD NOT",
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
            return encode_publish5(packet, config, limits)
        return encode_ack5(packet, config, limits)
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


def _encode_publish(packet: Publish, config: Config) -> bytes:
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
        try:
            check_topic_content(config, topic, packet.topic, len(header))
        except ProtocolError as error:
            raise InvalidPacket(error.rule, error.message, edition=config.edition_name) from None
    if qos:
        packet_id = packet.packet_id
        assert packet_id is not None
        return b"".join((header, topic, packet_id.to_bytes(2, "big"), payload))
    return header + topic + payload
