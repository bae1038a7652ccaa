"""MQTT 5.0 in the reference encoder: the shortest form (minimal Variable Byte Integers,
the acknowledgements' short forms), the properties in the contract's fixed order, and a
refusal, naming the rule the decoder would break, of whatever a sender may not send
(docs/guides/mqtt5-wire.md, "Encoding"). :func:`pubproof.reference.codec.encode` calls it
for edition 5.0.
"""

from __future__ import annotations

from pubproof.model import wire_rules as R
from pubproof.model.editions import Limits
from pubproof.model.rules import Rule
from pubproof.reference.common import ACK_TYPE_BYTE as _ACK_TYPE_BYTE
from pubproof.reference.common import Config
from pubproof.reference.errors import InvalidPacket
from pubproof.reference.packets import Packet, Publish
from pubproof.reference.properties import (
    NO_ACK_PROPERTIES,
    NO_PUBLISH_PROPERTIES,
    PublishProperties,
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
    _vbi_size,
    judge_string,
)


def _vbi(value: int) -> bytes:
    """The shortest Variable Byte Integer encoding of ``value`` (1.5.5)."""
    if value < 128:
        return bytes((value,))
    out = bytearray()
    while value:
        value, digit = divmod(value, 128)
        out.append(digit | 0x80 if value else digit)
    return bytes(out)


def _string_bytes(text: str) -> bytes:
    raw = text.encode("utf-8")
    return len(raw).to_bytes(2, "big") + raw


def _refuse(config: Config, rule: Rule, message: str) -> InvalidPacket:
    return InvalidPacket(rule.id_for(config.edition), message, edition=config.edition_name)


def _judge_string(
    config: Config, text: str, utf8: Rule, nul: Rule, wildcards: Rule | None, name: str
) -> None:
    """Refuse a string the decoder would reject, naming the decoder's rule (construction
    has already refused what UTF-8 cannot encode)."""
    if (
        not config.reject_discouraged
        and "\x00" not in text
        and (wildcards is None or ("+" not in text and "#" not in text))
    ):
        return  # nothing the decoder could find (the common case)
    judge_string(
        text.encode("utf-8"),
        0,
        utf8,
        nul,
        wildcards,
        name,
        config.reject_discouraged,
        lambda rule, _, message: _refuse(config, rule, message),
    )


def _publish_properties_bytes(props: PublishProperties) -> bytes:
    # The contract's one fixed order (docs/guides/mqtt5-wire.md, "Encoding"): pubproof's
    # choice, PUBLISH_ORDER in model/properties50.py, which is also the order of the fields
    # and of PUBLISH_PROPERTY_KEYS in model/trace.py (tests/test_properties50.py holds
    # this code to it).
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


def _judge_size(config: Config, length: int, limits: Limits | None) -> None:
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


def encode_publish5(packet: Publish, config: Config, limits: Limits | None) -> bytes:
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
        # The decoder's topic rules: U+0000, the wildcards, a Disallowed code point.
        _judge_string(config, packet.topic, R.TOPIC_UTF8, R.TOPIC_NUL, R.TOPIC_NO_WILDCARDS,
                      "topic name")  # fmt: skip
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


def encode_ack5(packet: Packet, config: Config, limits: Limits | None) -> bytes:
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
