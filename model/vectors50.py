"""The MQTT 5.0 cases of the vector corpus: every 5.0 wire rule on both sides, every
property, every Reason Code of every acknowledgement, the short forms, the receiver's
limits, and seeded random streams with their mutations.

The bytes are written out field by field here (not by the model's encoder) wherever a case
must hold something an encoder would refuse; each case's verdict is still the model's, and
the recorder stops when the model disagrees with what a case was meant to show.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits
from pubproof.model.trace import P, PublishP, publish
from pubproof.model.vector_cases import Corpus, Intent, accept, reject
from pubproof.model.wire import encode, encode_remaining_length

V50 = Edition.V50
#: The limits most cases are judged with: aliases 1 to 10 accepted, no size limit.
ALIASES = Limits(topic_alias_maximum=10)


def _s(text: bytes) -> bytes:
    """A length-prefixed string or Binary Data."""
    return len(text).to_bytes(2, "big") + text


def _props(*properties: bytes, length: bytes | None = None) -> bytes:
    body = b"".join(properties)
    return (length if length is not None else encode_remaining_length(len(body))) + body


def _publish(
    flags: int,
    topic: bytes,
    packet_id: bytes = b"",
    properties: bytes = b"\x00",
    payload: bytes = b"",
    rl: bytes | None = None,
) -> bytes:
    body = _s(topic) + packet_id + properties + payload
    return (
        bytes([0x30 | flags])
        + (rl if rl is not None else encode_remaining_length(len(body)))
        + body
    )


def _ack(first: int, body: bytes) -> bytes:
    return bytes([first]) + encode_remaining_length(len(body)) + body


def _p(
    topic: str,
    *,
    qos: int = 0,
    packet_id: int | None = None,
    payload: bytes = b"",
    dup: bool = False,
    retain: bool = False,
    **properties: object,
) -> PublishP:
    packet = publish(
        topic=topic, qos=qos, packet_id=packet_id, payload=payload, dup=dup, retain=retain
    )
    packet["properties"] = properties  # type: ignore[typeddict-item]
    return packet


def _a(kind: str, packet_id: int, reason_code: int = 0, **properties: object) -> P:
    return {
        "type": kind,  # type: ignore[typeddict-item]
        "packet_id": packet_id,
        "reason_code": reason_code,
        "properties": properties,  # type: ignore[typeddict-item]
    }


USER = b"\x26" + _s(b"k") + _s(b"v")
ACK_FIRST = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}


def _valid_publishes() -> Iterator[PublishP]:
    yield _p("a/b", qos=1, packet_id=10, payload=b"hi")
    yield _p("sensors/room12/temp", payload=b"21.5", payload_format_indicator=1)
    yield _p("t", qos=2, packet_id=65535, retain=True, message_expiry_interval=0xFFFFFFFF)
    yield _p("", qos=1, packet_id=7, topic_alias=10)
    yield _p("long/topic/name", topic_alias=1, content_type="text/plain; charset=utf-8")
    yield _p(
        "req/1",
        qos=1,
        packet_id=2,
        response_topic="resp/über",
        correlation_data_hex="00ff10",
        user_properties=[["k", "v"], ["k", "v2"], ["", ""], ["温度", "🌡"]],
    )
    yield _p("s", subscription_identifiers=[1, 127, 128, 16_383, 16_384, 268_435_455])
    yield _p(
        "all",
        qos=2,
        packet_id=300,
        dup=True,
        payload="ok ✓".encode(),
        payload_format_indicator=1,
        message_expiry_interval=60,
        topic_alias=2,
        response_topic="r",
        correlation_data_hex="",
        user_properties=[["a", "b"]],
        subscription_identifiers=[5, 5],
        content_type="",
    )
    yield _p("\ufeffbom", payload=b"\xff\xfe", payload_format_indicator=0)


def generate50(corpus: Corpus) -> None:
    """Append every 5.0 case to ``corpus``."""
    _accepting(corpus)
    _rejecting(corpus)
    _properties(corpus)
    _acknowledgements(corpus)
    _incomplete_and_random(corpus)


def _accepting(corpus: Corpus) -> None:
    for packet in _valid_publishes():
        data = encode(packet, V50)
        corpus.decode_case(accept(R.PAYLOAD_REST), data, V50, limits=ALIASES)
        corpus.encode_case(accept(R.PACKET_ID_PRESENCE), packet, V50)
    example = encode(_p("a/b", qos=1, packet_id=10), V50)
    corpus.decode_case(accept(R.BIG_ENDIAN), example, V50)
    corpus.decode_case(accept(R.PACKET_ID_NONZERO), example, V50)
    corpus.decode_case(accept(R.PUBLISH_RL_COVERS), example, V50)
    corpus.decode_case(accept(R.PROPERTIES_PRESENT), example, V50)
    corpus.decode_case(accept(R.TOPIC_UTF8), encode(_p("Ünïcödé/𝄞/∑"), V50), V50)
    corpus.decode_case(accept(R.TOPIC_NUL), encode(_p("a\u0001b"), V50), V50)
    corpus.decode_case(accept(R.TOPIC_NO_WILDCARDS), encode(_p("a/b/c"), V50), V50)
    corpus.decode_case(accept(R.TOPIC_DISCOURAGED), encode(_p("a\u007fb"), V50), V50)
    corpus.decode_case(accept(R.QOS_RESERVED), encode(_p("q", qos=2, packet_id=7), V50), V50)
    corpus.decode_case(accept(R.DUP_QOS0), encode(_p("d", qos=1, packet_id=3, dup=True), V50), V50)
    dup0 = _publish(0b1000, b"a/b", payload=b"x")
    corpus.decode_case(accept(R.DUP_QOS0), dup0, V50, {"dup-qos0": "ignore"})
    corpus.decode_case(accept(R.RESERVED_TYPE), _ack(0x40, b"\x00\x01"), V50)
    corpus.encode_case(accept(R.TOPIC_MAX_BYTES), _p("é" * 32767), V50)
    for size in (0, 1, 119, 120, 121, 16_369, 16_370):
        packet = _p("rl", payload=b"\xa5" * size)
        corpus.decode_case(accept(R.RL_MAX_BYTES), encode(packet, V50), V50)
    stream = b"".join(encode(p, V50) for p in _valid_publishes())
    stream += _ack(0x62, b"\x00\x0a") + _ack(0x70, b"\x00\x0a\x92")
    corpus.decode_case(accept(R.RL_DELIMITS), stream, V50, limits=ALIASES)
    corpus.decode_case(accept(R.RL_DELIMITS), b"", V50)
    # Non-minimal Variable Byte Integers: rejected by default in 5.0, accepted leniently.
    for first, rl in ((0x40, b"\x82\x00"), (0x62, b"\x82\x80\x00"), (0x70, b"\x82\x80\x80\x00")):
        data = bytes([first]) + rl + b"\x00\x01"
        corpus.decode_case(reject(R.RL_MINIMAL), data, V50)
        corpus.decode_case(accept(R.RL_MINIMAL), data, V50, {"rl-encoding": "lenient"})
    corpus.decode_case(accept(R.RL_MINIMAL), example, V50)
    # The receiver's Maximum Packet Size: the packet's size is exactly what counts.
    size = len(example)
    corpus.decode_case(
        accept(R.PACKET_TOO_LARGE), example, V50, limits=Limits(maximum_packet_size=size)
    )
    corpus.decode_case(
        reject(R.PACKET_TOO_LARGE), example, V50, limits=Limits(maximum_packet_size=size - 1)
    )
    corpus.decode_case(
        reject(R.PACKET_TOO_LARGE),
        _ack(0x40, b"\x00\x01\x00\x04\x1f" + _s(b"x")),
        V50,
        limits=Limits(maximum_packet_size=4),
    )
    big = _publish(0, b"t", rl=encode_remaining_length(200_000))  # judged before it arrives
    corpus.decode_case(
        reject(R.PACKET_TOO_LARGE), big, V50, limits=Limits(maximum_packet_size=65_536)
    )


def _rejecting(corpus: Corpus) -> None:
    for first in (0x00, 0x0F):
        corpus.decode_case(reject(R.RESERVED_TYPE), bytes([first, 0]), V50)
    # 5.0 makes type 15 the AUTH packet: valid, outside pubproof's scope (3.1.1: reserved).
    for first in (0x10, 0x20, 0x82, 0x90, 0xA2, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0):
        corpus.decode_case(reject(R.OUT_OF_SCOPE_TYPE), bytes([first, 0]), V50)
    for flags in (0b0110, 0b0111, 0b1110, 0b1111):
        data = _publish(flags, b"a/b", b"\x00\x0a")
        corpus.decode_case(reject(R.QOS_RESERVED), data, V50)
    corpus.encode_case(reject(R.QOS_RESERVED), _p("q", qos=3, packet_id=1), V50)
    dup0 = _publish(0b1000, b"a/b", payload=b"x")
    corpus.decode_case(reject(R.DUP_QOS0), dup0, V50)
    corpus.decode_case(reject(R.DUP_QOS0), dup0[:1], V50)
    corpus.encode_case(reject(R.DUP_QOS0), _p("a", dup=True), V50)
    for name, first in ACK_FIRST.items():
        for flags in range(16):
            if flags != first & 0x0F:
                data = bytes([(first & 0xF0) | flags, 2, 0, 1])
                corpus.decode_case(reject(R.ACK_FLAGS[name]), data, V50)
        corpus.decode_case(accept(R.ACK_FLAGS[name]), bytes([first, 2, 0, 1]), V50)
    for data in (b"\x30\xff\xff\xff\xff\x7f", b"\x40\x80\x80\x80\x80\x00"):
        corpus.decode_case(reject(R.RL_MAX_BYTES), data, V50)
    corpus.decode_case(
        reject(R.RL_MINIMAL), _publish(0, b"t", rl=b"\x84\x00"), V50
    )  # a Remaining Length of 4 in two bytes
    for data in (b"\x30\x00", b"\x30\x01\x00", b"\x30\x03\x00\x05abc", b"\x32\x05\x00\x03a/b"):
        corpus.decode_case(reject(R.PUBLISH_RL_COVERS), data, V50)
    for raw in (b"\xff", b"a\xc0\x80", b"ab\xed\xa0\x80", b"\xf4\x90\x80\x80", b"x\x80"):
        corpus.decode_case(reject(R.TOPIC_UTF8), _publish(0, raw, payload=b"p"), V50)
    for raw, rule in (
        (b"a\x00b", R.TOPIC_NUL),
        (b"a/+/b", R.TOPIC_NO_WILDCARDS),
        (b"#", R.TOPIC_NO_WILDCARDS),
    ):
        corpus.decode_case(reject(rule), _publish(0, raw, payload=b"p"), V50)
        corpus.encode_case(reject(rule), _p(raw.decode()), V50)
    for char in ("\u0001", "\u009f", "\ufdd0", "\U0010ffff"):
        data = _publish(0, f"a{char}b".encode(), payload=b"x")
        corpus.decode_case(accept(R.TOPIC_DISCOURAGED), data, V50)
        corpus.decode_case(
            reject(R.TOPIC_DISCOURAGED), data, V50, {"discouraged-code-points": "reject"}
        )
    corpus.decode_case(reject(R.PACKET_ID_NONZERO), _publish(2, b"a/b", b"\x00\x00"), V50)
    corpus.encode_case(reject(R.PACKET_ID_PRESENCE), _p("t", qos=0, packet_id=5), V50)
    corpus.encode_case(reject(R.PACKET_ID_PRESENCE), _p("t", qos=1), V50)
    corpus.encode_case(reject(R.TOPIC_MAX_BYTES), _p("é" * 32768), V50)
    # A 3.1.1 PUBLISH read as 5.0: no room for the Property Length, or its payload's first
    # byte taken for one.
    corpus.decode_case(
        reject(R.PROPERTIES_PRESENT), bytes.fromhex("30030001 61".replace(" ", "")), V50
    )
    corpus.decode_case(
        reject(R.PROPERTIES_PRESENT), bytes.fromhex("320500016100 0a".replace(" ", "")), V50
    )
    corpus.decode_case(reject(R.PROPERTY_LENGTH), bytes.fromhex("32090003612f62000a6869"), V50)
    corpus.decode_case(reject(R.PROPERTIES_PRESENT), _publish(0, b"t", properties=b"\x80"), V50)


def _properties(corpus: Corpus) -> None:
    d = corpus.decode_case
    # every property, alone, on the accepting side (and the Property Length's own rules)
    for prop in (
        b"\x01\x00",
        b"\x01\x01",
        b"\x02\x00\x00\x00\x00",
        b"\x03" + _s(b"application/json"),
        b"\x08" + _s(b"reply/to"),
        b"\x09" + _s(b"\x00\x01\x02"),
        b"\x0b\x01",
        b"\x0b\xff\xff\xff\x7f",
        b"\x23\x00\x0a",
        USER,
    ):
        d(
            accept(R.PROPERTY_IDENTIFIER),
            _publish(0, b"t", properties=_props(prop)),
            V50,
            limits=ALIASES,
        )
        d(accept(R.PROPERTY_VALUE), _publish(0, b"t", properties=_props(prop)), V50, limits=ALIASES)
    d(accept(R.PROPERTY_LENGTH), _publish(0, b"t", properties=_props(USER, USER)), V50)
    d(
        accept(R.PROPERTY_ONCE),
        _publish(0, b"t", properties=_props(USER, USER, b"\x0b\x01\x0b\x01")),
        V50,
    )
    d(
        accept(R.PROPERTY_ONCE),
        _publish(0, b"t", properties=_props(b"\x01\x00", b"\x01\x01", b"\x02\x00\x00\x00\x01" * 2)),
        V50,
        {"pfi-mei-once": "accept"},
    )
    # the Property Length: longer than the packet, non-minimal, five bytes
    d(reject(R.PROPERTY_LENGTH), _publish(0, b"t", properties=b"\x05\x01\x00"), V50)
    d(reject(R.RL_MINIMAL), _publish(0, b"t", properties=b"\x80\x00"), V50)
    d(
        accept(R.RL_MINIMAL),
        _publish(0, b"t", properties=b"\x80\x00"),
        V50,
        {"rl-encoding": "lenient"},
    )
    d(reject(R.RL_MAX_BYTES), _publish(0, b"t", properties=b"\xff\xff\xff\xff\x01"), V50)
    # identifiers not valid for PUBLISH (0x1F is an acknowledgement's; 0x80 starts a
    # two-byte identifier, which no 5.0 property has)
    for identifier in (0x00, 0x04, 0x11, 0x1F, 0x21, 0x24, 0x27, 0x80, 0xFF):
        d(
            reject(R.PROPERTY_IDENTIFIER),
            _publish(0, b"t", properties=_props(bytes([identifier, 0]))),
            V50,
        )
    # values past the section: each type
    for prop in (
        b"\x01",
        b"\x02\x00\x00\x00",
        b"\x23\x00",
        b"\x03\x00",
        b"\x03\x00\x05ab",
        b"\x09\x00\x02\x01",
        b"\x0b\x80",
        b"\x26\x00\x01k",
        b"\x26\x00\x01k\x00\x02v",
    ):
        d(
            reject(R.PROPERTY_VALUE),
            _publish(0, b"t", properties=_props(prop), payload=b"xyzzy"),
            V50,
        )
    d(
        reject(R.RL_MAX_BYTES),
        _publish(0, b"t", properties=_props(b"\x0b\xff\xff\xff\xff\x01")),
        V50,
    )
    d(reject(R.RL_MINIMAL), _publish(0, b"t", properties=_props(b"\x0b\x81\x00")), V50)
    # strings in properties
    for raw in (b"\xff", b"a\xed\xa0\x80"):
        d(
            reject(R.CONTENT_TYPE_STRING),
            _publish(0, b"t", properties=_props(b"\x03" + _s(raw))),
            V50,
        )
        d(
            reject(R.RESPONSE_TOPIC_STRING),
            _publish(0, b"t", properties=_props(b"\x08" + _s(raw))),
            V50,
        )
        d(
            reject(R.STRING_PAIR),
            _publish(0, b"t", properties=_props(b"\x26" + _s(raw) + _s(b"v"))),
            V50,
        )
        d(
            reject(R.STRING_PAIR),
            _publish(0, b"t", properties=_props(b"\x26" + _s(b"k") + _s(raw))),
            V50,
        )
    d(
        reject(R.CONTENT_TYPE_STRING),
        _publish(0, b"t", properties=_props(b"\x03" + _s(b"a\x00"))),
        V50,
    )
    d(
        reject(R.RESPONSE_TOPIC_STRING),
        _publish(0, b"t", properties=_props(b"\x08" + _s(b"\x00"))),
        V50,
    )
    d(
        reject(R.STRING_PAIR),
        _publish(0, b"t", properties=_props(b"\x26" + _s(b"k\x00") + _s(b""))),
        V50,
    )
    d(
        accept(R.CONTENT_TYPE_STRING),
        _publish(0, b"t", properties=_props(b"\x03" + _s("ü".encode()))),
        V50,
    )
    d(
        accept(R.RESPONSE_TOPIC_STRING),
        _publish(0, b"t", properties=_props(b"\x08" + _s(b"a/b"))),
        V50,
    )
    d(accept(R.STRING_PAIR), _publish(0, b"t", properties=_props(USER)), V50)
    for raw in (b"a/+", b"#"):
        d(
            reject(R.RESPONSE_TOPIC_WILDCARDS),
            _publish(0, b"t", properties=_props(b"\x08" + _s(raw))),
            V50,
        )
        corpus.encode_case(
            reject(R.RESPONSE_TOPIC_WILDCARDS), _p("t", response_topic=raw.decode()), V50
        )
    d(
        accept(R.RESPONSE_TOPIC_WILDCARDS),
        _publish(0, b"t", properties=_props(b"\x08" + _s(b"a/b"))),
        V50,
    )
    d(
        reject(R.TOPIC_DISCOURAGED),
        _publish(0, b"t", properties=_props(b"\x26" + _s(b"k") + _s(b"\x01"))),
        V50,
        {"discouraged-code-points": "reject"},
    )
    # once
    for prop in (
        b"\x23\x00\x01",
        b"\x08" + _s(b"r"),
        b"\x09" + _s(b""),
        b"\x03" + _s(b"c"),
        b"\x01\x00",
        b"\x02\x00\x00\x00\x05",
    ):
        d(
            reject(R.PROPERTY_ONCE),
            _publish(0, b"t", properties=_props(prop, prop)),
            V50,
            limits=ALIASES,
        )
    # values out of range
    for value in (2, 0xFF):
        d(
            reject(R.PAYLOAD_FORMAT_VALUE),
            _publish(0, b"t", properties=_props(bytes([1, value]))),
            V50,
        )
        corpus.encode_case(
            reject(R.PAYLOAD_FORMAT_VALUE), _p("t", payload_format_indicator=value), V50
        )
    d(accept(R.PAYLOAD_FORMAT_VALUE), _publish(0, b"t", properties=_props(b"\x01\x01")), V50)
    d(
        reject(R.TOPIC_ALIAS_ZERO),
        _publish(0, b"t", properties=_props(b"\x23\x00\x00")),
        V50,
        limits=ALIASES,
    )
    corpus.encode_case(reject(R.TOPIC_ALIAS_ZERO), _p("t", topic_alias=0), V50)
    d(
        accept(R.TOPIC_ALIAS_ZERO),
        _publish(0, b"t", properties=_props(b"\x23\x00\x01")),
        V50,
        limits=ALIASES,
    )
    d(
        reject(R.TOPIC_ALIAS_MAXIMUM),
        _publish(0, b"t", properties=_props(b"\x23\x00\x0b")),
        V50,
        limits=ALIASES,
    )
    d(reject(R.TOPIC_ALIAS_MAXIMUM), _publish(0, b"t", properties=_props(b"\x23\x00\x01")), V50)
    d(
        accept(R.TOPIC_ALIAS_MAXIMUM),
        _publish(0, b"t", properties=_props(b"\x23\xff\xff")),
        V50,
        limits=Limits(topic_alias_maximum=0xFFFF),
    )
    corpus.encode_case(reject(R.TOPIC_ALIAS_MAXIMUM), _p("t", topic_alias=11), V50, limits=ALIASES)
    d(reject(R.SUBSCRIPTION_ID_ZERO), _publish(0, b"t", properties=_props(b"\x0b\x00")), V50)
    corpus.encode_case(
        reject(R.SUBSCRIPTION_ID_ZERO), _p("t", subscription_identifiers=[3, 0]), V50
    )
    d(accept(R.SUBSCRIPTION_ID_ZERO), _publish(0, b"t", properties=_props(b"\x0b\x01")), V50)
    corpus.encode_case(reject(R.RL_MAX_BYTES), _p("t", subscription_identifiers=[268_435_456]), V50)
    # an empty topic name needs a Topic Alias
    d(reject(R.TOPIC_OR_ALIAS), _publish(0, b"", payload=b"x"), V50)
    d(reject(R.TOPIC_OR_ALIAS), _publish(2, b"", b"\x00\x01", _props(USER)), V50)
    corpus.encode_case(reject(R.TOPIC_OR_ALIAS), _p(""), V50)
    d(
        accept(R.TOPIC_OR_ALIAS),
        _publish(0, b"", properties=_props(b"\x23\x00\x03")),
        V50,
        limits=ALIASES,
    )
    # a payload marked UTF-8
    marked = _props(b"\x01\x01")
    for payload in (b"\xff", b"ok\xc0\xafrest", "ü".encode()[:1]):
        data = _publish(0, b"t", properties=marked, payload=payload)
        d(reject(R.PAYLOAD_UTF8), data, V50)
        d(accept(R.PAYLOAD_UTF8), data, V50, {"payload-utf8": "accept"})
    corpus.encode_case(
        reject(R.PAYLOAD_UTF8), _p("t", payload=b"\xff", payload_format_indicator=1), V50
    )
    d(accept(R.PAYLOAD_UTF8), _publish(0, b"t", properties=marked, payload="温度".encode()), V50)
    d(
        accept(R.PAYLOAD_UTF8),
        _publish(0, b"t", properties=_props(b"\x01\x00"), payload=b"\xff"),
        V50,
    )


def _acknowledgements(corpus: Corpus) -> None:
    d = corpus.decode_case
    for name, first in ACK_FIRST.items():
        # the three forms of a success, and every Reason Code of the packet
        for body in (b"\x00\x01", b"\x00\x01\x00", b"\x00\x01\x00\x00"):
            d(accept(R.ACK_RL[name]), _ack(first, body), V50)
        for code in R.ACK_REASON_CODES[name]:
            d(accept(R.ACK_REASON_CODE[name]), _ack(first, b"\x12\x34" + bytes([code])), V50)
            corpus.encode_case(accept(R.ACK_REASON_CODE[name]), _a(name, 0x1234, code), V50)
        for code in (0x01, 0x7F, 0x81, 0x92 if name in ("PUBACK", "PUBREC") else 0x10, 0xFF):
            d(reject(R.ACK_REASON_CODE[name]), _ack(first, b"\x00\x01" + bytes([code])), V50)
            corpus.encode_case(reject(R.ACK_REASON_CODE[name]), _a(name, 1, code), V50)
        # properties: a Reason String, User Properties, both
        for props in (b"\x1f" + _s(b"no subscribers"), USER + USER, b"\x1f" + _s(b"") + USER):
            d(accept(R.PROPERTY_IDENTIFIER), _ack(first, b"\x00\x02\x00" + _props(props)), V50)
        corpus.encode_case(
            accept(R.ACK_RL[name]),
            _a(name, 9, 0, reason_string="why", user_properties=[["a", "1"], ["a", "2"]]),
            V50,
        )
        corpus.encode_case(accept(R.ACK_RL[name]), _a(name, 9, 0), V50)
        # Remaining Length 0 or 1, bytes after the properties, a Property Length that runs on
        for rl in (0, 1):
            d(reject(R.ACK_RL[name]), bytes([first, rl]) + b"\x00" * rl, V50)
        d(reject(R.ACK_RL[name]), _ack(first, b"\x00\x01\x00\x00\x00"), V50)
        d(reject(R.ACK_RL[name]), _ack(first, b"\x00\x01\x00\x80"), V50)
        d(reject(R.PROPERTY_LENGTH), _ack(first, b"\x00\x01\x00\x02\x1f"), V50)
        d(
            reject(R.PROPERTY_IDENTIFIER),
            _ack(first, b"\x00\x01\x00" + _props(b"\x23\x00\x01")),
            V50,
        )
        d(
            reject(R.PROPERTY_ONCE),
            _ack(first, b"\x00\x01\x00" + _props(b"\x1f" + _s(b"a"), b"\x1f" + _s(b"b"))),
            V50,
        )
        d(reject(R.STRING_UTF8), _ack(first, b"\x00\x01\x00" + _props(b"\x1f" + _s(b"\xc3"))), V50)
        d(reject(R.STRING_NUL), _ack(first, b"\x00\x01\x00" + _props(b"\x1f" + _s(b"\x00"))), V50)
        d(
            accept(R.STRING_UTF8),
            _ack(first, b"\x00\x01\x00" + _props(b"\x1f" + _s("ok ✓".encode()))),
            V50,
        )
        d(accept(R.STRING_NUL), _ack(first, b"\x00\x01\x00" + _props(b"\x1f" + _s(b"ok"))), V50)


def _incomplete_and_random(corpus: Corpus) -> None:
    whole = encode(_p("a/b", qos=1, packet_id=10, user_properties=[["k", "v"]]), V50)
    whole += _ack(0x40, b"\x00\x0a\x10")
    cut_at = len(whole) - 5
    for cut in range(1, len(whole)):
        if cut == cut_at:
            corpus.decode_case(accept(R.RL_DELIMITS), whole[:cut], V50)
        else:
            corpus.decode_case(Intent(None, "incomplete"), whole[:cut], V50)
    rng = random.Random(20261125)
    for index in range(120):
        packets = [_random_packet(rng) for _ in range(rng.randint(1, 3))]
        mutant = bytearray(b"".join(encode(p, V50) for p in packets))
        if index % 4 >= 2:
            for _ in range(rng.randint(1, 2)):
                mutant[rng.randrange(len(mutant))] = rng.randrange(256)
        if index % 8 == 7:
            del mutant[rng.randrange(len(mutant)) :]
        corpus.decode_case(Intent(None, "random"), bytes(mutant), V50, limits=ALIASES)


def _random_packet(rng: random.Random) -> P:
    if rng.random() < 0.3:
        kind = rng.choice(list(ACK_FIRST))
        code = rng.choice(sorted(R.ACK_REASON_CODES[kind])) if rng.random() < 0.5 else 0
        props: dict[str, object] = {}
        if rng.random() < 0.3:
            props["reason_string"] = rng.choice(["", "busy", "ü"])
        return _a(kind, rng.randrange(1, 65536), code, **props)
    qos = rng.randrange(3)
    topic = "/".join(rng.choice(["a", "b", "温度", "x1"]) for _ in range(rng.randint(1, 3)))
    props = {}
    if rng.random() < 0.4:
        props["topic_alias"] = rng.randint(1, 10)
        if rng.random() < 0.5:
            topic = ""
    if rng.random() < 0.3:
        props["user_properties"] = [["k", str(rng.randrange(100))]]
    if rng.random() < 0.2:
        props["subscription_identifiers"] = [rng.randint(1, 300)]
    if rng.random() < 0.2:
        props["message_expiry_interval"] = rng.randrange(2**32)
    return _p(
        topic,
        qos=qos,
        packet_id=rng.randrange(1, 65536) if qos else None,
        payload=bytes(rng.randrange(256) for _ in range(rng.randrange(0, 30))),
        dup=bool(qos) and rng.random() < 0.2,
        retain=rng.random() < 0.2,
        **props,
    )
