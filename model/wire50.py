"""The MQTT 5.0 bodies of PUBLISH and its acknowledgements, as an executable specification.

Rules / theory of operation
---------------------------
:mod:`pubproof.model.wire` reads the fixed header of every packet in every edition and
hands a 5.0 packet's body to this module. The contract both this model and the reference
codec implement, with the judgement order step by step, is ``docs/guides/mqtt5-wire.md``;
the comments below name its steps. In short:

* the receiver's Maximum Packet Size is judged as soon as the Remaining Length is known;
* an acknowledgement is a packet identifier, then (Remaining Length 3 or more) a Reason
  Code from its packet's table, then (4 or more) a property section ending exactly at the
  packet's end;
* a PUBLISH is a topic name and a packet identifier as in 3.1.1, then a property section,
  then the payload; an empty topic name needs a Topic Alias;
* a property section is a Property Length (a Variable Byte Integer) and properties, each
  an identifier byte valid for the packet type and a value of that identifier's type;
  every bound is judged against the declared lengths before a byte is read, so a section
  that has not all arrived is incomplete, never a fault.

Which faults make a *Malformed Packet* (0x81) and which a *Protocol Error* (0x82, or the
more specific DISCONNECT Reason Code the standard names) is each rule's ``kind_in`` and
``reason_code_in`` for edition 5.0, in :mod:`pubproof.model.wire_rules`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pubproof.model import properties50
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.properties50 import ACKS, BY_KEY, DataType, PropertyRow, of
from pubproof.model.rules import Rule
from pubproof.model.trace import AckP, AckProps, PublishP, PublishProps
from pubproof.model.wire_core import (
    MAX_REMAINING_LENGTH,
    Context,
    EncodeError,
    StringRules,
    encode_remaining_length,
    first_ill_formed_utf8,
    packet_identifier,
    string,
    topic_name_length,
    variable_byte_integer,
)

V50 = Edition.V50

# --- the property tables ---------------------------------------------------------------


TOPIC_NAME = StringRules(ill_formed=R.TOPIC_UTF8, nul=R.TOPIC_NUL, wildcards=R.TOPIC_NO_WILDCARDS)
REASON_STRING = StringRules(ill_formed=R.STRING_UTF8, nul=R.STRING_NUL)
CONTENT_TYPE = StringRules(ill_formed=R.CONTENT_TYPE_STRING, nul=R.CONTENT_TYPE_STRING)
RESPONSE_TOPIC = StringRules(
    ill_formed=R.RESPONSE_TOPIC_STRING,
    nul=R.RESPONSE_TOPIC_STRING,
    wildcards=R.RESPONSE_TOPIC_WILDCARDS,
)
# [MQTT-1.5.7-1] "Both strings MUST comply with the requirements for UTF-8 Encoded Strings"
STRING_PAIR = StringRules(ill_formed=R.STRING_PAIR, nul=R.STRING_PAIR)


#: the short codes of the value types (properties50.DataType.code)
TYPES = frozenset(t.code for t in DataType)


@dataclass(frozen=True, slots=True, kw_only=True)
class Property:
    """How the model reads and writes one property: a row of Table 2-4
    (:mod:`pubproof.model.properties50`) with the rules its strings are judged by."""

    identifier: int
    name: str  # the standard's name
    key: str  # the key in P's "properties"
    type: str  # "byte", "two", "four", "varint", "string", "binary", "pair"
    repeatable: bool = False
    strings: StringRules | None = None
    reading: str | None = None  # a reading that may allow a repeat

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"{self.name}: {self.type!r} is not a value type")
        if (self.strings is not None) != (self.type in ("string", "pair")):
            raise ValueError(f"{self.name}: strings, and only strings, have StringRules")


#: The rules of each string property's strings (by identifier): for what a string may not
#: hold, the rule it breaks.
_STRINGS: Mapping[int, StringRules] = {
    BY_KEY["content_type"].identifier: CONTENT_TYPE,
    BY_KEY["response_topic"].identifier: RESPONSE_TOPIC,
    BY_KEY["reason_string"].identifier: REASON_STRING,
    BY_KEY["user_properties"].identifier: STRING_PAIR,
}


def _reader(row: PropertyRow, packet: str) -> Property:
    return Property(
        identifier=row.identifier,
        name=row.name,
        key=row.key,
        type=row.type.code,
        repeatable=packet in row.repeatable_in,
        strings=_STRINGS.get(row.identifier),
        reading=row.once_reading,
    )


#: The properties of PUBLISH and of its acknowledgements (Table 2-4), by identifier.
PUBLISH_PROPERTIES: Mapping[int, Property] = {
    p.identifier: _reader(p, "PUBLISH") for p in of("PUBLISH")
}
ACK_PROPERTIES: Mapping[int, Property] = {p.identifier: _reader(p, ACKS[0]) for p in of(ACKS[0])}
#: the fixed-size value types: code -> bytes
_FIXED_SIZE = {t.code: t.size for t in DataType if t.size is not None}
#: the properties whose values the model judges beyond their type (keys of P)
_PFI, _ALIAS, _SUB_ID = "payload_format_indicator", "topic_alias", "subscription_identifiers"

# --- the limits ------------------------------------------------------------------------


def check_packet_size(ctx: Context, start: int, body: int, remaining: int) -> None:
    """Step 2: the packet against the receiver's Maximum Packet Size, as soon as the
    Remaining Length says how large it is."""
    maximum = ctx.limits.maximum_packet_size
    size = body - start + remaining  # fixed header (type byte and Remaining Length) + body
    if maximum is not None and size > maximum:
        # "If a Client receives a packet whose size exceeds this limit, this is a Protocol
        # Error, the Client uses DISCONNECT with Reason Code 0x95 (Packet too large)"
        # (3.1.2.11.4; the same of a Server in 3.2.2.3.6) [MQTT-3.1.2-24] [MQTT-3.2.2-15]
        raise ctx.fail(
            R.PACKET_TOO_LARGE,
            start + 1,
            f"the packet is {size} bytes; the receiver's Maximum Packet Size is {maximum}",
        )


# --- acknowledgements ------------------------------------------------------------------


def ack_body(ctx: Context, name: str, rl_offset: int, body: int, remaining: int) -> AckP:
    """Step 3: PUBACK, PUBREC, PUBREL or PUBCOMP."""
    if remaining < 2:
        raise ctx.fail(
            R.ACK_RL[name],
            rl_offset,
            f"{name} has Remaining Length {remaining}; it needs 2 for the packet identifier",
        )
    identifier = ctx.take(body, 2)
    # A zero identifier is judged by the session, not here (as in 3.1.1).
    packet_id = identifier[0] * 256 + identifier[1]
    reason_code = 0x00
    properties: dict[str, Any] = {}
    if remaining >= 3:
        # "Byte 3 in the Variable Header is the PUBACK Reason Code. If the Remaining Length
        # is 2, then there is no Reason Code and the value of 0x00 (Success) is used."
        (reason_code,) = ctx.take(body + 2, 1)
        if reason_code not in R.ACK_REASON_CODES[name]:
            # [MQTT-3.4.2-1] "The Client or Server sending the PUBACK packet MUST use one
            # of the PUBACK Reason Codes" (likewise 3.5.2-1, 3.6.2-1, 3.7.2-1)
            raise ctx.fail(
                R.ACK_REASON_CODE[name],
                body + 2,
                f"0x{reason_code:02X} is not a {name} Reason Code",
            )
    if remaining >= 4:
        # "If the Remaining Length is less than 4 there is no Property Length and the value
        # of 0 is used." The packet has no Payload: the section ends with the packet.
        properties, _ = _property_section(
            ctx, ACK_PROPERTIES, body + 3, body + remaining, no_room=R.ACK_RL[name], ack=name
        )
    return {
        "type": name,  # type: ignore[typeddict-item]
        "packet_id": packet_id,
        "reason_code": reason_code,
        "properties": properties,  # type: ignore[typeddict-item]
    }


# --- PUBLISH ---------------------------------------------------------------------------


def publish_body(ctx: Context, flags: int, body: int, remaining: int) -> PublishP:
    """Steps 4 to 7: the PUBLISH variable header, its properties and its payload."""
    dup, qos, retain = bool(flags & 0b1000), (flags >> 1) & 0b11, bool(flags & 0b0001)
    end = body + remaining

    # [MQTT-3.3.2-1] "The Topic Name MUST be present as the first field in the PUBLISH
    # packet Variable Header. It MUST be a UTF-8 Encoded String"
    topic_length = topic_name_length(ctx, body, remaining)
    # An empty topic name is judged after the properties (step 6): a Topic Alias may stand
    # in for it.
    topic = string(ctx, body + 2, ctx.take(body + 2, topic_length), TOPIC_NAME, "topic name")

    packet_id, position = packet_identifier(ctx, qos, body + 2 + topic_length, end)

    # [MQTT-2.2.2-1] "If there are no properties, this MUST be indicated by including a
    # Property Length of zero"
    if position >= end:
        raise ctx.fail(
            R.PROPERTIES_PRESENT,
            position,
            "the Remaining Length leaves no room for the Property Length",
        )
    properties, position = _property_section(
        ctx, PUBLISH_PROPERTIES, position, end, no_room=R.PROPERTIES_PRESENT, ack=None
    )

    # Step 6. "It is a Protocol Error if the Topic Name is zero length and there is no
    # Topic Alias." (3.3.2.1)
    if topic_length == 0 and "topic_alias" not in properties:
        raise ctx.fail(
            R.TOPIC_OR_ALIAS, body, "the topic name is empty and there is no Topic Alias"
        )

    # Step 7. The payload is the rest of the packet, possibly empty.
    payload = ctx.take(position, end - position)
    _judge_payload(ctx, properties, payload, position)
    return {
        "type": "PUBLISH",
        "dup": dup,
        "qos": qos,
        "retain": retain,
        "topic": topic,
        "packet_id": packet_id,
        "payload_hex": payload.hex(),
        "properties": properties,  # type: ignore[typeddict-item]
    }


def _judge_payload(ctx: Context, properties: dict[str, Any], payload: bytes, at: int) -> None:
    """Step 7: a payload the Payload Format Indicator marks as UTF-8 (reading payload-utf8)."""
    if properties.get("payload_format_indicator") != 1 or ctx.reading("payload-utf8") != "reject":
        return
    bad = first_ill_formed_utf8(payload)
    if bad is not None:
        # "The UTF-8 data in the Payload MUST be well-formed UTF-8" (3.3.2.3.2)
        raise ctx.fail(
            R.PAYLOAD_UTF8,
            at + bad,
            f"the Payload Format Indicator says UTF-8, but the payload is not well-formed "
            f"UTF-8 at byte {bad} (0x{payload[bad]:02x})",
        )


# --- the property section --------------------------------------------------------------


def _property_section(
    ctx: Context,
    table: Mapping[int, Property],
    start: int,
    end: int,
    *,
    no_room: Rule,
    ack: str | None,
) -> tuple[dict[str, Any], int]:
    """Step 5: the Property Length at ``start`` and the properties it covers, within a
    packet that ends at ``end``; returns the properties (P's form) and where they end."""
    length, first = variable_byte_integer(ctx, start, bound=end, past_bound=no_room, at=start)
    if first + length > end:
        raise ctx.fail(
            R.PROPERTY_LENGTH,
            start,
            f"the Property Length {length} runs past the packet, which has {end - first} "
            "byte(s) left",
        )
    if ack is not None and first + length != end:
        # "The PUBACK packet has no Payload." (3.4.3; likewise PUBREC, PUBREL, PUBCOMP)
        raise ctx.fail(
            R.ACK_RL[ack],
            start,
            f"{end - first - length} byte(s) follow the properties of this {ack}, which "
            "has no payload",
        )
    section_end = first + length
    properties: dict[str, Any] = {}
    seen: set[int] = set()
    position = first
    while position < section_end:
        (identifier,) = ctx.take(position, 1)
        spec = table.get(identifier)
        if spec is None:
            # "A Control Packet which contains an Identifier which is not valid for its
            # packet type ... is a Malformed Packet." (2.2.2.2)
            what = "PUBLISH" if ack is None else ack
            raise ctx.fail(
                R.PROPERTY_IDENTIFIER,
                position,
                f"0x{identifier:02X} is not a property identifier of {what}",
            )
        value, after = _value(ctx, spec, position, section_end)
        _judge_property(ctx, spec, value, position, seen)
        seen.add(identifier)
        if spec.repeatable:
            properties.setdefault(spec.key, []).append(value)
        else:
            properties[spec.key] = value
        position = after
    return properties, section_end


def _value(ctx: Context, spec: Property, at: int, section_end: int) -> tuple[Any, int]:
    """The value of the property whose identifier is at ``at``: (P's form, where it ends)."""

    def within(offset: int, count: int) -> bytes:
        if offset + count > section_end:
            raise ctx.fail(
                R.PROPERTY_VALUE,
                at,
                f"the {spec.name} runs past the end of the property section",
            )
        return ctx.take(offset, count)

    start = at + 1
    if spec.type in _FIXED_SIZE:
        size = _FIXED_SIZE[spec.type]
        return int.from_bytes(within(start, size), "big"), start + size
    if spec.type == "varint":
        return variable_byte_integer(
            ctx, start, bound=section_end, past_bound=R.PROPERTY_VALUE, at=at
        )
    if spec.type == "binary":
        size = int.from_bytes(within(start, 2), "big")
        return within(start + 2, size).hex(), start + 2 + size
    assert spec.strings is not None
    if spec.type == "string":
        text, after = _length_prefixed_string(ctx, spec, start, within)
        return text, after
    # "pair": a name, then a value, each a UTF-8 Encoded String
    name, after = _length_prefixed_string(ctx, spec, start, within)
    value, after = _length_prefixed_string(ctx, spec, after, within)
    return [name, value], after


def _length_prefixed_string(
    ctx: Context, spec: Property, start: int, within: Callable[[int, int], bytes]
) -> tuple[str, int]:
    size = int.from_bytes(within(start, 2), "big")
    raw = within(start + 2, size)
    assert spec.strings is not None
    return string(ctx, start + 2, raw, spec.strings, spec.name), start + 2 + size


def _judge_property(ctx: Context, spec: Property, value: Any, at: int, seen: set[int]) -> None:
    """A property's judgements once its value is read: repeats, then its value's range."""
    if spec.identifier in seen and not spec.repeatable:
        allowed = spec.reading is not None and ctx.reading(spec.reading) == "accept"
        if not allowed:
            # "It is a Protocol Error to include the Topic Alias value more than once."
            # (3.3.2.3.4; likewise the others; reading pfi-mei-once for two of them)
            raise ctx.fail(R.PROPERTY_ONCE, at, f"the {spec.name} appears more than once")
    if spec.key == _PFI and value not in (0, 1):
        # "Followed by the value of the Payload Format Indicator, either of: 0 ... 1"
        raise ctx.fail(
            R.PAYLOAD_FORMAT_VALUE, at, f"the Payload Format Indicator is {value}, not 0 or 1"
        )
    if spec.key == _ALIAS:
        if value == 0:
            # [MQTT-3.3.2-8] "A sender MUST NOT send a PUBLISH packet containing a Topic
            # Alias which has the value 0"
            raise ctx.fail(R.TOPIC_ALIAS_ZERO, at, "the Topic Alias is 0")
        maximum = ctx.limits.topic_alias_maximum
        if value > maximum:
            # "A Topic Alias value of 0 or greater than the Maximum Topic Alias is a
            # Protocol Error, the receiver uses DISCONNECT with Reason Code of 0x94"
            raise ctx.fail(
                R.TOPIC_ALIAS_MAXIMUM,
                at,
                f"the Topic Alias {value} is above the receiver's Topic Alias Maximum {maximum}",
            )
    if spec.key == _SUB_ID and value == 0:
        # "It is a Protocol Error if the Subscription Identifier has a value of 0."
        raise ctx.fail(R.SUBSCRIPTION_ID_ZERO, at, "the Subscription Identifier is 0")


# --- the data types --------------------------------------------------------------------


# --- encoding --------------------------------------------------------------------------

#: The order the encoder writes properties in: pubproof's choice, made in properties50.
PUBLISH_ORDER = properties50.PUBLISH_ORDER
ACK_ORDER = properties50.ACK_ORDER


def encode_properties(
    properties: object, table: Mapping[int, Property], order: tuple[int, ...]
) -> bytes:
    """The property section (Property Length included) of P's ``properties``, in the
    encoder's order; ``EncodeError`` for what no property section can say."""
    if not isinstance(properties, dict):
        raise EncodeError(_id(R.PROPERTY_IDENTIFIER), "properties is a JSON object")
    by_key = {spec.key: spec for spec in table.values()}
    unknown = set(properties) - set(by_key)
    if unknown:
        raise EncodeError(
            _id(R.PROPERTY_IDENTIFIER), f"unknown propert(ies): {', '.join(sorted(unknown))}"
        )
    out = bytearray()
    for identifier in order:
        spec = table[identifier]
        if spec.key not in properties:
            continue
        values = properties[spec.key]
        if spec.repeatable:
            if not isinstance(values, list):
                raise EncodeError(_id(R.PROPERTY_VALUE), f"{spec.key} is a list")
        else:
            values = [values]
        for value in values:
            out.append(identifier)
            out += _encode_value(spec, value)
    if len(out) > MAX_REMAINING_LENGTH:
        raise EncodeError(_id(R.RL_MAX_BYTES), "the property section is too long")
    return encode_remaining_length(len(out)) + bytes(out)


def _encode_value(spec: Property, value: object) -> bytes:
    if spec.type in _FIXED_SIZE:
        size = _FIXED_SIZE[spec.type]
        if type(value) is not int or not 0 <= value < 256**size:
            rule = R.PAYLOAD_FORMAT_VALUE if spec.key == _PFI else R.PROPERTY_VALUE
            raise EncodeError(_id(rule), f"the {spec.name} is a {size}-byte unsigned integer")
        return value.to_bytes(size, "big")
    if spec.type == "varint":
        if type(value) is not int or not 0 <= value <= MAX_REMAINING_LENGTH:
            raise EncodeError(
                _id(R.RL_MAX_BYTES),
                f"the {spec.name} {value!r} has no Variable Byte Integer encoding",
            )
        return encode_remaining_length(value)
    if spec.type == "binary":
        if not isinstance(value, str):
            raise EncodeError(_id(R.PROPERTY_VALUE), f"{spec.key} is a hex string")
        try:
            data = bytes.fromhex(value)
        except ValueError:
            raise EncodeError(_id(R.PROPERTY_VALUE), f"{spec.key} is not hex") from None
        return _prefixed(spec, data)
    assert spec.strings is not None
    if spec.type == "string":
        return _encode_string(spec, value)
    if not (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(half, str) for half in value)
    ):
        raise EncodeError(_id(R.STRING_PAIR), f"a {spec.name} is a [name, value] pair of strings")
    return _encode_string(spec, value[0]) + _encode_string(spec, value[1])


def _encode_string(spec: Property, value: object) -> bytes:
    assert spec.strings is not None
    if not isinstance(value, str):
        raise EncodeError(_id(spec.strings.ill_formed), f"the {spec.name} is a string")
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError:
        raise EncodeError(
            _id(spec.strings.ill_formed), f"the {spec.name} contains a surrogate code point"
        ) from None
    return _prefixed(spec, data)


def _prefixed(spec: Property, data: bytes) -> bytes:
    if len(data) > 0xFFFF:
        raise EncodeError(_id(R.PROPERTY_VALUE), f"the {spec.name} is longer than 65,535 bytes")
    return len(data).to_bytes(2, "big") + data


def _id(rule: Rule) -> str:
    return rule.id_for(V50)


__all__ = [
    "ACK_PROPERTIES",
    "PUBLISH_PROPERTIES",
    "AckProps",
    "Property",
    "PublishProps",
    "ack_body",
    "check_packet_size",
    "encode_properties",
    "publish_body",
    "variable_byte_integer",
]
