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
topic.

MQTT 5.0 keeps steps 1 and 2 (type 15 becomes AUTH, outside pubproof's scope; every
Variable Byte Integer must be minimal by default) and adds the receiver's Maximum Packet
Size to step 2; the 5.0 bodies, with their Reason Codes and property sections, are read by
:mod:`pubproof.model.wire50`, whose judgement order ``docs/guides/mqtt5-wire.md`` states. A
5.0 failure also names the DISCONNECT Reason Code the receiver sends.

A stream that ends inside a packet is ``incomplete`` at the offset where that packet
starts. Because every judgement needs only the bytes of the fields before it, the verdict
does not depend on how the stream is cut into chunks.
"""

from __future__ import annotations

from collections.abc import Mapping

from pubproof.model import wire50
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits, check_limits, resolve_readings
from pubproof.model.rules import Kind
from pubproof.model.trace import AckP, P, PublishP, is_publish
from pubproof.model.wire_core import (
    MAX_REMAINING_LENGTH,
    Context,
    EncodeError,
    Fail,
    Failure,
    StringRules,
    Verdict,
    encode_remaining_length,
    first_ill_formed_utf8,
    is_discouraged,
    judge_characters,
    packet_identifier,
    topic_name_length,
    variable_byte_integer,
    well_formed,
)

PUBLISH_TYPE = 3
#: packet type number -> name, for the types pubproof decodes
ACK_TYPES: Mapping[int, str] = R.ACK_TYPES
ACK_TYPE_NUMBERS = {name: number for number, name in ACK_TYPES.items()}
#: names of the types outside pubproof's scope (for messages)
OTHER_TYPES = {
    1: "CONNECT", 2: "CONNACK", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE",
    11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT", 15: "AUTH",
}  # fmt: skip


def decode(
    data: bytes,
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
    limits: Limits | None = None,
) -> Verdict:
    """Decode a byte stream of zero or more packets: every packet up to the first failure.

    ``limits`` are the receiver's (MQTT 5.0 only): its Topic Alias Maximum and Maximum
    Packet Size, with the standard's defaults when not given.
    """
    ctx = Context(data, edition, resolve_readings(edition, readings), check_limits(edition, limits))
    packets: list[P] = []
    offset = 0
    try:
        while offset < len(data):
            ctx.packet_start = offset
            packet, offset = _packet(ctx, offset)
            packets.append(packet)
    except Fail as stop:
        return Verdict(packets=packets, failure=stop.failure)
    return Verdict(packets=packets)


# --- one packet ------------------------------------------------------------------------


def _packet(ctx: Context, start: int) -> tuple[P, int]:
    (first,) = ctx.take(start, 1)
    packet_type, flags = first >> 4, first & 0x0F
    # 3.1 and 3.1.1 reserve types 0 and 15; 5.0 makes 15 the AUTH packet.
    if packet_type == 0 or (packet_type == 15 and ctx.edition is not Edition.V50):
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
    if ctx.edition is Edition.V50:
        wire50.check_packet_size(ctx, start, body, remaining)
        if packet_type == PUBLISH_TYPE:
            return wire50.publish_body(ctx, flags, body, remaining), body + remaining
        name = ACK_TYPES[packet_type]
        return wire50.ack_body(ctx, name, start + 1, body, remaining), body + remaining
    if packet_type == PUBLISH_TYPE:
        return _publish_body(ctx, flags, body, remaining), body + remaining
    return _ack_body(ctx, ACK_TYPES[packet_type], start + 1, body, remaining), body + remaining


def _check_publish_flags(ctx: Context, offset: int, flags: int) -> None:
    dup, qos = bool(flags & 0b1000), (flags >> 1) & 0b11
    # [MQTT-3.3.1-4] "A PUBLISH Packet MUST NOT have both QoS bits set to 1."
    # 3.1 lists QoS 3 as "Reserved": reading qos3 says whether that forbids it.
    if qos == 3 and not (ctx.edition is Edition.V31 and ctx.reading("qos3") == "accept"):
        raise ctx.fail(R.QOS_RESERVED, offset, "PUBLISH with QoS 3 (both QoS bits set)")
    # [MQTT-3.3.1-2] "The DUP flag MUST be set to 0 for all QoS 0 messages."
    # 3.1: "For QoS 0, the DUP bit is not used." (reading dup-qos0)
    if dup and qos == 0 and ctx.reading("dup-qos0") == "reject":
        raise ctx.fail(R.DUP_QOS0, offset, "PUBLISH with QoS 0 has the DUP flag set")


def _check_ack_flags(ctx: Context, offset: int, name: str, flags: int) -> None:
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


def _remaining_length(ctx: Context, start: int) -> tuple[int, int]:
    """Decode the Remaining Length at ``start``: (value, offset of the body)."""
    return variable_byte_integer(ctx, start, what="Remaining Length")


def decode_remaining_length(
    data: bytes, edition: Edition = Edition.V311, readings: Mapping[str, str] | None = None
) -> tuple[int, int] | Failure:
    """The Remaining Length field at the start of ``data`` on its own: (value, bytes used),
    or the failure (its offsets count from the start of ``data``)."""
    ctx = Context(data, edition, resolve_readings(edition, readings), check_limits(edition, None))
    try:
        value, body = _remaining_length(ctx, 0)
    except Fail as stop:
        return stop.failure
    return value, body


def _ack_body(ctx: Context, name: str, rl_offset: int, body: int, remaining: int) -> AckP:
    # "Remaining Length field: This is the length of the variable header. For the PUBACK
    # Packet this has the value 2." (likewise PUBREC, PUBREL, PUBCOMP)
    if remaining != 2:
        raise ctx.fail(
            R.ACK_RL[name], rl_offset, f"{name} has Remaining Length {remaining}; it must be 2"
        )
    identifier = ctx.take(body, 2)
    # Big-endian: "MSB, then LSB". A zero identifier is judged by the session, not here.
    return {"type": name, "packet_id": identifier[0] * 256 + identifier[1]}  # type: ignore[typeddict-item]


def _publish_body(ctx: Context, flags: int, body: int, remaining: int) -> PublishP:
    dup, qos, retain = bool(flags & 0b1000), (flags >> 1) & 0b11, bool(flags & 0b0001)
    end = body + remaining

    # Topic name: "MUST be the first field in the PUBLISH Packet Variable Header" [MQTT-3.3.2-1]
    topic_length = topic_name_length(ctx, body, remaining)
    if topic_length == 0 and _topic_rules_apply(ctx):
        # [MQTT-4.7.3-1] "All Topic Names and Topic Filters MUST be at least one character long"
        raise ctx.fail(R.TOPIC_NOT_EMPTY, body, "the topic name is empty")
    topic = _topic(ctx, body + 2, ctx.take(body + 2, topic_length))
    packet_id, position = packet_identifier(ctx, qos, body + 2 + topic_length, end)

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


def _topic_rules_apply(ctx: Context) -> bool:
    """3.1.1 always forbids empty, U+0000 and wildcard topics; 3.1 only by reading."""
    return ctx.edition is Edition.V311 or ctx.reading("topic-rules") == "as-3.1.1"


def _topic(ctx: Context, offset: int, raw: bytes) -> str:
    # [MQTT-1.5.3-1] "MUST be well-formed UTF-8 ... MUST NOT include encodings of code
    # points between U+D800 and U+DFFF"
    topic = well_formed(ctx, offset, raw, R.TOPIC_UTF8, "topic name")
    # MQTT 3.1 section 2.2: "Topic name has an upper length limit of 32,767 characters."
    if ctx.reading("topic-length") == "32767-chars" and len(topic) > 32_767:
        raise ctx.fail(
            R.TOPIC_MAX_31,
            offset - 2,
            f"the topic name has {len(topic)} characters; MQTT 3.1 allows 32,767",
        )
    # [MQTT-1.5.3-2] no U+0000; [MQTT-3.3.2-2] "The Topic Name in the PUBLISH Packet MUST NOT
    # contain wildcard characters" (3.1: reading topic-rules)
    judge_characters(
        ctx, offset, topic, _TOPIC if _topic_rules_apply(ctx) else _TOPIC_31, "topic name"
    )
    return topic


_TOPIC = StringRules(ill_formed=R.TOPIC_UTF8, nul=R.TOPIC_NUL, wildcards=R.TOPIC_NO_WILDCARDS)
_TOPIC_31 = StringRules(ill_formed=R.TOPIC_UTF8, nul=None)


# --- encoding --------------------------------------------------------------------------


def encode(
    packet: P,
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
    limits: Limits | None = None,
) -> bytes:
    """The bytes a sender puts on the wire for ``packet``.

    Refuses (``EncodeError``) anything the decoder with the same edition and readings would
    reject, and the sender-only rules that the bytes of a packet cannot show. In 5.0,
    ``limits`` are the receiver's; without them any Topic Alias from 1 to 65,535 is sent.
    """
    resolved = resolve_readings(edition, readings)
    if edition is Edition.V50:
        return _encode50(packet, resolved, limits)
    check_limits(edition, limits)
    if "properties" in packet or packet.get("reason_code", 0) != 0:
        raise EncodeError(
            R.OUT_OF_SCOPE_TYPE.id_for(edition),
            f"properties and Reason Codes exist only in MQTT 5.0, not {edition.value}",
        )
    if is_publish(packet):
        first, body = _encode_publish(packet, edition, resolved)
    else:
        first, body = _ack_fields(packet, edition)  # type: ignore[arg-type]
    if len(body) > MAX_REMAINING_LENGTH:
        raise EncodeError(
            R.RL_MAX_BYTES.id_for(edition), f"the packet body of {len(body)} bytes is too long"
        )
    return bytes([first]) + encode_remaining_length(len(body)) + body


def _ack_fields(packet: AckP, edition: Edition) -> tuple[int, bytes]:
    """The first byte and the packet identifier of an acknowledgement."""
    name = packet["type"]
    if name not in ACK_TYPE_NUMBERS:
        raise EncodeError(R.OUT_OF_SCOPE_TYPE.id_for(edition), f"unknown packet type {name!r}")
    packet_id = packet["packet_id"]
    if not isinstance(packet_id, int) or not 0 <= packet_id <= 0xFFFF:
        raise EncodeError(R.BIG_ENDIAN.id_for(edition), "packet_id is a 16-bit integer")
    return ACK_TYPE_NUMBERS[name] << 4 | R.ACK_FLAGS_311[name], packet_id.to_bytes(2, "big")


def _encode50(packet: P, readings: Mapping[str, str], limits: Limits | None) -> bytes:
    """MQTT 5.0: the shortest form, checked by the 5.0 decoder."""
    edition = Edition.V50
    if is_publish(packet):
        first, header = _publish_fields(packet, edition)
        properties = wire50.encode_properties(
            packet.get("properties", {}), wire50.PUBLISH_PROPERTIES, wire50.PUBLISH_ORDER
        )
        body = header + properties + _payload(packet, edition)
    else:
        first, body = _ack_fields(packet, edition)  # type: ignore[arg-type]
        reason_code = packet.get("reason_code", 0)
        if type(reason_code) is not int or not 0 <= reason_code <= 0xFF:
            raise EncodeError(
                R.ACK_REASON_CODE[packet["type"]].id_for(edition), "reason_code is one byte"
            )
        properties = wire50.encode_properties(
            packet.get("properties", {}), wire50.ACK_PROPERTIES, wire50.ACK_ORDER
        )
        # "The Reason Code and Property Length can be omitted if the Reason Code is 0x00
        # (Success) and there are no Properties." (3.4.2.1) A Property Length of zero
        # (b"\x00") can be omitted whenever it is last.
        if properties != b"\x00":
            body += bytes([reason_code]) + properties
        elif reason_code != 0:
            body += bytes([reason_code])
    if len(body) > MAX_REMAINING_LENGTH:
        raise EncodeError(
            R.RL_MAX_BYTES.id_for(edition), f"the packet body of {len(body)} bytes is too long"
        )
    data = bytes([first]) + encode_remaining_length(len(body)) + body
    # The encoder sends nothing its own decoder would refuse.
    receiver = limits if limits is not None else Limits(topic_alias_maximum=0xFFFF)
    verdict = decode(data, edition, readings, receiver)
    if verdict.failure is not None:
        raise EncodeError(verdict.failure.rule, verdict.failure.message)
    return data


def _encode_publish(
    packet: PublishP, edition: Edition, readings: Mapping[str, str]
) -> tuple[int, bytes]:
    first, header = _publish_fields(packet, edition)
    body = header + _payload(packet, edition)
    # The encoder sends nothing its own decoder would refuse.
    data = bytes([first]) + encode_remaining_length(len(body)) + body
    if len(body) <= MAX_REMAINING_LENGTH:
        verdict = decode(data, edition, readings)
        if verdict.failure is not None:
            raise EncodeError(verdict.failure.rule, verdict.failure.message)
    return first, body


def _publish_fields(packet: PublishP, edition: Edition) -> tuple[int, bytes]:
    """The first byte, the topic name and the packet identifier of a PUBLISH."""
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
    flags = (0b1000 if packet["dup"] else 0) | qos << 1 | (0b0001 if packet["retain"] else 0)
    header = len(topic).to_bytes(2, "big") + topic
    if packet_id is not None:
        header += packet_id.to_bytes(2, "big")
    return PUBLISH_TYPE << 4 | flags, header


def _payload(packet: PublishP, edition: Edition) -> bytes:
    try:
        return bytes.fromhex(packet["payload_hex"])
    except ValueError:
        raise EncodeError(
            R.PAYLOAD_REST.id_for(edition), "payload_hex is not a hex string"
        ) from None


__all__ = [
    "EncodeError",
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
