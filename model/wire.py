"""The wire format of PUBLISH and its acknowledgements, as an executable specification.

Rules / theory of operation
---------------------------
This module is the version of the wire format that a spec author checks line by line. It
is written for clarity, never for speed; :mod:`pubproof.reference` is the fast one, and the
tests show that the two agree on every input.

A byte stream is a sequence of packets, each laid out as::

    byte 0          packet type (bits 7-4) and flags (bits 3-0)
    bytes 1..n      Remaining Length: 1 to 4 bytes, 7 bits each, least significant first
    n+1 ..          Remaining Length bytes of body; what follows is the next packet

A PUBLISH body is: topic name (2-byte big-endian length, then UTF-8), packet identifier
(2 bytes, only when QoS > 0), payload (the rest, possibly empty). An acknowledgement body
is exactly a 2-byte packet identifier.

The decoder reads the stream *field by field* and judges each field as soon as it has all
of its bytes, in this order, stopping at the first rule broken:

1. first byte: reserved or out-of-scope type; PUBLISH QoS 3; PUBLISH DUP with QoS 0;
   acknowledgement flags
2. Remaining Length: more than four bytes; longer than needed (reading rl-encoding);
   an acknowledgement whose Remaining Length is not 2
3. topic length: no room for it in the Remaining Length; longer than the room left;
   zero (empty topic)
4. topic bytes: well-formed UTF-8 (first ill-formed position); length in characters
   (3.1 reading topic-length); then each code point left to right: U+0000, wildcards,
   discouraged code points
5. packet identifier: no room for it; zero
6. payload: the rest of the packet, any bytes

An error names the rule's id in the chosen edition and the offset (from the start of the
stream) of the first byte of the field that breaks it, or of the offending character in a
topic. A stream that ends inside a packet is ``incomplete`` at the offset where that packet
starts. Because every judgement needs only the bytes of the fields before it, the verdict
does not depend on how the stream is cut into chunks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, resolve_readings
from pubproof.model.rules import INCOMPLETE, Kind, Rule
from pubproof.model.trace import AckP, P, PublishP, is_publish

PUBLISH_TYPE = 3
#: packet type number -> name, for the types pubproof decodes
ACK_TYPES: Mapping[int, str] = R.ACK_TYPES
ACK_TYPE_NUMBERS = {name: number for number, name in ACK_TYPES.items()}
#: names of the types outside pubproof's scope (for messages)
OTHER_TYPES = {
    1: "CONNECT", 2: "CONNACK", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE",
    11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT",
}  # fmt: skip
MAX_REMAINING_LENGTH = 268_435_455
WILDCARDS = {"+", "#"}


# --- verdicts --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """The first rule a byte stream breaks."""

    rule: str  # the rule id in the edition used, or "incomplete"
    kind: str  # "malformed", "violation" or "incomplete"
    offset: int
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """What the model makes of a byte stream: the packets before any failure, and the failure."""

    packets: list[P] = field(default_factory=list)
    failure: Failure | None = None

    @property
    def verdict(self) -> str:
        return "ok" if self.failure is None else self.failure.kind


class _Fail(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class _Context:
    """The edition, readings and the byte stream being read."""

    def __init__(self, data: bytes, edition: Edition, readings: Mapping[str, str]) -> None:
        self.data = data
        self.edition = edition
        self.readings = readings
        self.packet_start = 0

    def fail(self, rule: Rule, offset: int, message: str) -> _Fail:
        return _Fail(
            Failure(
                rule=rule.id_for(self.edition), kind=rule.kind.value, offset=offset, message=message
            )
        )

    def take(self, offset: int, count: int) -> bytes:
        """The ``count`` bytes at ``offset``; a stream that ends first is incomplete."""
        if offset + count > len(self.data):
            missing = offset + count - len(self.data)
            raise _Fail(
                Failure(
                    rule=INCOMPLETE,
                    kind=INCOMPLETE,
                    offset=self.packet_start,
                    message=f"the stream ends inside the packet that starts at offset "
                    f"{self.packet_start}: {missing} more byte(s) needed at least",
                )
            )
        return self.data[offset : offset + count]

    def reading(self, name: str) -> str | None:
        return self.readings.get(name)


def decode(
    data: bytes, edition: Edition = Edition.V311, readings: Mapping[str, str] | None = None
) -> Verdict:
    """Decode a byte stream of zero or more packets: every packet up to the first failure."""
    ctx = _Context(data, edition, resolve_readings(edition, readings))
    packets: list[P] = []
    offset = 0
    try:
        while offset < len(data):
            ctx.packet_start = offset
            packet, offset = _packet(ctx, offset)
            packets.append(packet)
    except _Fail as stop:
        return Verdict(packets=packets, failure=stop.failure)
    return Verdict(packets=packets)


# --- one packet ------------------------------------------------------------------------


def _packet(ctx: _Context, start: int) -> tuple[P, int]:
    (first,) = ctx.take(start, 1)
    packet_type, flags = first >> 4, first & 0x0F
    if packet_type in (0, 15):
        raise ctx.fail(R.RESERVED_TYPE, start, f"packet type {packet_type} is reserved")
    if packet_type != PUBLISH_TYPE and packet_type not in ACK_TYPES:
        name = OTHER_TYPES[packet_type]
        raise ctx.fail(
            R.OUT_OF_SCOPE_TYPE,
            start,
            f"packet type {packet_type} ({name}) is valid MQTT but outside pubproof's scope "
            "(PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP)",
        )
    if packet_type == PUBLISH_TYPE:
        _check_publish_flags(ctx, start, flags)
    else:
        _check_ack_flags(ctx, start, ACK_TYPES[packet_type], flags)

    remaining, body = _remaining_length(ctx, start + 1)
    if packet_type == PUBLISH_TYPE:
        return _publish_body(ctx, flags, body, remaining), body + remaining
    return _ack_body(ctx, ACK_TYPES[packet_type], start + 1, body, remaining), body + remaining


def _check_publish_flags(ctx: _Context, offset: int, flags: int) -> None:
    dup, qos = bool(flags & 0b1000), (flags >> 1) & 0b11
    # [MQTT-3.3.1-4] "A PUBLISH Packet MUST NOT have both QoS bits set to 1."
    # 3.1 lists QoS 3 as "Reserved": reading qos3 says whether that forbids it.
    if qos == 3 and not (ctx.edition is Edition.V31 and ctx.reading("qos3") == "accept"):
        raise ctx.fail(R.QOS_RESERVED, offset, "PUBLISH with QoS 3 (both QoS bits set)")
    # [MQTT-3.3.1-2] "The DUP flag MUST be set to 0 for all QoS 0 messages."
    # 3.1: "For QoS 0, the DUP bit is not used." (reading dup-qos0)
    if dup and qos == 0 and ctx.reading("dup-qos0") == "reject":
        raise ctx.fail(R.DUP_QOS0, offset, "PUBLISH with QoS 0 has the DUP flag set")


def _check_ack_flags(ctx: _Context, offset: int, name: str, flags: int) -> None:
    # 3.1 marks the acknowledgement flags "x" (not used): reading ack-flags.
    if ctx.edition is Edition.V31 and ctx.reading("ack-flags") == "ignore":
        return
    # [MQTT-2.2.2-1] reserved flags "MUST be set to the value listed in that table";
    # [MQTT-3.6.1-1] PUBREL bits 3,2,1,0 "MUST be set to 0,0,1 and 0 respectively".
    expected = R.ACK_FLAGS_311[name]
    if flags != expected:
        raise ctx.fail(
            R.ACK_FLAGS[name],
            offset,
            f"{name} flags are {flags:04b}; the reserved value is {expected:04b}",
        )


def _remaining_length(ctx: _Context, start: int) -> tuple[int, int]:
    """Decode the Remaining Length at ``start``: (value, offset of the body)."""
    value = 0
    for index in range(4):
        (byte,) = ctx.take(start + index, 1)
        value += (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            length = index + 1
            break
    else:
        raise ctx.fail(
            R.RL_MAX_BYTES,
            start + 3,
            "the fourth Remaining Length byte has its continuation bit set (at most four "
            "bytes, 268,435,455)",
        )
    if ctx.reading("rl-encoding") == "strict" and length > _shortest_length(value):
        raise ctx.fail(
            R.RL_MINIMAL,
            start,
            f"Remaining Length {value} is encoded in {length} bytes; "
            f"{_shortest_length(value)} suffice",
        )
    return value, start + length


def decode_remaining_length(
    data: bytes, edition: Edition = Edition.V311, readings: Mapping[str, str] | None = None
) -> tuple[int, int] | Failure:
    """The Remaining Length field at the start of ``data`` on its own: (value, bytes used),
    or the failure (its offsets count from the start of ``data``)."""
    ctx = _Context(data, edition, resolve_readings(edition, readings))
    try:
        value, body = _remaining_length(ctx, 0)
    except _Fail as stop:
        return stop.failure
    return value, body


def _shortest_length(value: int) -> int:
    """How many bytes the shortest encoding of a Remaining Length value takes."""
    length = 1
    while value >= 128**length:
        length += 1
    return length


def _ack_body(ctx: _Context, name: str, rl_offset: int, body: int, remaining: int) -> AckP:
    # "Remaining Length field: This is the length of the variable header. For the PUBACK
    # Packet this has the value 2." (likewise PUBREC, PUBREL, PUBCOMP)
    if remaining != 2:
        raise ctx.fail(
            R.ACK_RL[name], rl_offset, f"{name} has Remaining Length {remaining}; it must be 2"
        )
    identifier = ctx.take(body, 2)
    # Big-endian: "MSB, then LSB". A zero identifier is judged by the session, not here.
    return {"type": name, "packet_id": identifier[0] * 256 + identifier[1]}  # type: ignore[typeddict-item]


def _publish_body(ctx: _Context, flags: int, body: int, remaining: int) -> PublishP:
    dup, qos, retain = bool(flags & 0b1000), (flags >> 1) & 0b11, bool(flags & 0b0001)
    end = body + remaining

    # Topic name: "MUST be the first field in the PUBLISH Packet Variable Header" [MQTT-3.3.2-1]
    if remaining < 2:
        raise ctx.fail(
            R.PUBLISH_RL_COVERS,
            body,
            f"Remaining Length {remaining} leaves no room for the topic name's length",
        )
    prefix = ctx.take(body, 2)
    topic_length = prefix[0] * 256 + prefix[1]
    if body + 2 + topic_length > end:
        raise ctx.fail(
            R.PUBLISH_RL_COVERS,
            body,
            f"topic name of {topic_length} bytes does not fit in the {remaining - 2} bytes "
            "the Remaining Length leaves",
        )
    if topic_length == 0 and _topic_rules_apply(ctx):
        # [MQTT-4.7.3-1] "All Topic Names and Topic Filters MUST be at least one character long"
        raise ctx.fail(R.TOPIC_NOT_EMPTY, body, "the topic name is empty")
    topic = _topic(ctx, body + 2, ctx.take(body + 2, topic_length))

    position = body + 2 + topic_length
    packet_id: int | None = None
    if qos > 0:
        # "This field is only present for messages of QoS 1 and QoS 2"
        if position + 2 > end:
            raise ctx.fail(
                R.PUBLISH_RL_COVERS,
                position,
                f"QoS {qos} PUBLISH has no room for its packet identifier in the Remaining Length",
            )
        identifier = ctx.take(position, 2)
        packet_id = identifier[0] * 256 + identifier[1]
        if packet_id == 0:
            # [MQTT-2.3.1-1] "... MUST contain a non-zero 16-bit Packet Identifier"
            raise ctx.fail(R.PACKET_ID_NONZERO, position, "packet identifier 0 is not allowed")
        position += 2

    # The payload is the rest of the packet, possibly empty.
    payload = ctx.take(position, end - position)
    return {
        "type": "PUBLISH",
        "dup": dup,
        "qos": qos,
        "retain": retain,
        "topic": topic,
        "packet_id": packet_id,
        "payload_hex": payload.hex(),
    }


def _topic_rules_apply(ctx: _Context) -> bool:
    """3.1.1 always forbids empty, U+0000 and wildcard topics; 3.1 only by reading."""
    return ctx.edition is Edition.V311 or ctx.reading("topic-rules") == "as-3.1.1"


def _topic(ctx: _Context, offset: int, raw: bytes) -> str:
    bad = first_ill_formed_utf8(raw)
    if bad is not None:
        # [MQTT-1.5.3-1] "MUST be well-formed UTF-8 ... MUST NOT include encodings of code
        # points between U+D800 and U+DFFF"
        raise ctx.fail(
            R.TOPIC_UTF8,
            offset + bad,
            f"the topic name is not well-formed UTF-8 at byte {bad} (0x{raw[bad]:02x})",
        )
    topic = raw.decode("utf-8")
    # MQTT 3.1 section 2.2: "Topic name has an upper length limit of 32,767 characters."
    if ctx.reading("topic-length") == "32767-chars" and len(topic) > 32_767:
        raise ctx.fail(
            R.TOPIC_MAX_31,
            offset - 2,
            f"the topic name has {len(topic)} characters; MQTT 3.1 allows 32,767",
        )
    position = offset
    for char in topic:
        if _topic_rules_apply(ctx):
            if char == "\x00":
                # [MQTT-1.5.3-2] "MUST NOT include an encoding of the null character U+0000"
                raise ctx.fail(R.TOPIC_NUL, position, "the topic name contains U+0000")
            if char in WILDCARDS:
                # [MQTT-3.3.2-2] "The Topic Name in the PUBLISH Packet MUST NOT contain
                # wildcard characters"
                raise ctx.fail(
                    R.TOPIC_NO_WILDCARDS, position, f"the topic name contains the wildcard {char!r}"
                )
        if ctx.reading("discouraged-code-points") == "reject" and is_discouraged(char):
            raise ctx.fail(
                R.TOPIC_DISCOURAGED,
                position,
                f"the topic name contains U+{ord(char):04X}, which it SHOULD NOT",
            )
        position += len(char.encode("utf-8"))
    return topic


def first_ill_formed_utf8(data: bytes) -> int | None:
    """Index of the first byte that does not start a well-formed UTF-8 sequence, or None.

    Written out from Table 3-7 ("Well-Formed UTF-8 Byte Sequences") of the Unicode
    standard, which RFC 3629 restates; it excludes overlong forms, surrogates
    (ED A0..BF) and code points above U+10FFFF.
    """
    tail = (0x80, 0xBF)
    index = 0
    while index < len(data):
        lead = data[index]
        follow: list[tuple[int, int]]
        if lead <= 0x7F:
            follow = []
        elif 0xC2 <= lead <= 0xDF:
            follow = [tail]
        elif lead == 0xE0:
            follow = [(0xA0, 0xBF), tail]
        elif 0xE1 <= lead <= 0xEC or 0xEE <= lead <= 0xEF:
            follow = [tail, tail]
        elif lead == 0xED:
            follow = [(0x80, 0x9F), tail]
        elif lead == 0xF0:
            follow = [(0x90, 0xBF), tail, tail]
        elif 0xF1 <= lead <= 0xF3:
            follow = [tail, tail, tail]
        elif lead == 0xF4:
            follow = [(0x80, 0x8F), tail, tail]
        else:
            return index
        for step, (low, high) in enumerate(follow, start=1):
            if index + step >= len(data) or not low <= data[index + step] <= high:
                return index
        index += 1 + len(follow)
    return None


def is_discouraged(char: str) -> bool:
    """MQTT 3.1.1 section 1.5.3: control characters and non-characters."""
    code = ord(char)
    return (
        0x0001 <= code <= 0x001F
        or 0x007F <= code <= 0x009F
        or 0xFDD0 <= code <= 0xFDEF
        or (code & 0xFFFE) == 0xFFFE
    )


# --- encoding --------------------------------------------------------------------------


class EncodeError(ValueError):
    """A packet the sender must not send, with the rule it would break."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def encode_remaining_length(value: int) -> bytes:
    """The shortest encoding, as section 2.2.3's algorithm produces it."""
    out = bytearray()
    while True:
        digit, value = value % 128, value // 128
        out.append(digit | (0x80 if value > 0 else 0))
        if value == 0:
            return bytes(out)


def encode(
    packet: P, edition: Edition = Edition.V311, readings: Mapping[str, str] | None = None
) -> bytes:
    """The bytes a sender puts on the wire for ``packet``.

    Refuses (``EncodeError``) anything the decoder with the same edition and readings would
    reject, and the sender-only rules that the bytes of a packet cannot show.
    """
    resolved = resolve_readings(edition, readings)
    if is_publish(packet):
        first, body = _encode_publish(packet, edition, resolved)
    else:
        name = packet["type"]
        if name not in ACK_TYPE_NUMBERS:
            raise EncodeError(R.OUT_OF_SCOPE_TYPE.id_for(edition), f"unknown packet type {name!r}")
        packet_id = packet["packet_id"]
        if not isinstance(packet_id, int) or not 0 <= packet_id <= 0xFFFF:
            raise EncodeError(R.BIG_ENDIAN.id_for(edition), "packet_id is a 16-bit integer")
        first = ACK_TYPE_NUMBERS[name] << 4 | R.ACK_FLAGS_311[name]
        body = packet_id.to_bytes(2, "big")
    if len(body) > MAX_REMAINING_LENGTH:
        raise EncodeError(
            R.RL_MAX_BYTES.id_for(edition), f"the packet body of {len(body)} bytes is too long"
        )
    return bytes([first]) + encode_remaining_length(len(body)) + body


def _encode_publish(
    packet: PublishP, edition: Edition, readings: Mapping[str, str]
) -> tuple[int, bytes]:
    qos, packet_id = packet["qos"], packet["packet_id"]
    if qos not in (0, 1, 2, 3):
        raise EncodeError(R.QOS_RESERVED.id_for(edition), f"QoS {qos} does not exist")
    if qos > 0 and packet_id is None:
        raise EncodeError(
            R.PACKET_ID_PRESENCE.id_for(edition), f"a QoS {qos} PUBLISH needs a packet identifier"
        )
    if qos == 0 and packet_id is not None:
        # [MQTT-2.3.1-5] "A PUBLISH Packet MUST NOT contain a Packet Identifier if its QoS
        # value is set to 0"
        raise EncodeError(
            R.PACKET_ID_PRESENCE.id_for(edition), "a QoS 0 PUBLISH has no packet identifier"
        )
    if packet_id is not None and not 0 <= packet_id <= 0xFFFF:
        raise EncodeError(R.BIG_ENDIAN.id_for(edition), "packet_id is a 16-bit integer")
    try:
        topic = packet["topic"].encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(R.TOPIC_UTF8.id_for(edition), f"topic is not encodable: {exc}") from None
    if len(topic) > 0xFFFF:
        raise EncodeError(
            R.TOPIC_MAX_BYTES.id_for(edition), f"the topic name encodes to {len(topic)} bytes"
        )
    try:
        payload = bytes.fromhex(packet["payload_hex"])
    except ValueError:
        raise EncodeError(
            R.PAYLOAD_REST.id_for(edition), "payload_hex is not a hex string"
        ) from None
    flags = (0b1000 if packet["dup"] else 0) | qos << 1 | (0b0001 if packet["retain"] else 0)
    body = len(topic).to_bytes(2, "big") + topic
    if packet_id is not None:
        body += packet_id.to_bytes(2, "big")
    body += payload
    first = PUBLISH_TYPE << 4 | flags
    # The encoder sends nothing its own decoder would refuse.
    data = bytes([first]) + encode_remaining_length(len(body)) + body
    if len(body) <= MAX_REMAINING_LENGTH:
        verdict = decode(data, edition, readings)
        if verdict.failure is not None:
            raise EncodeError(verdict.failure.rule, verdict.failure.message)
    return first, body


__all__ = [
    "Failure",
    "Kind",
    "Verdict",
    "decode",
    "decode_remaining_length",
    "encode",
    "encode_remaining_length",
    "first_ill_formed_utf8",
    "is_discouraged",
]
