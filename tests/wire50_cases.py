"""The reference codec in MQTT 5.0: every rule of the wire contract on its accepting and
its rejecting side, with the offset, kind and DISCONNECT Reason Code, whole and byte by
byte; the encoder's shortest forms, round trips and refusals; the 5.0 ``P`` form.

The expected verdicts are written out from docs/guides/mqtt5-wire.md (not computed by the
codec), so each check in the decoder is held by a case that fails when the check goes;
``test_each_check_is_live`` removes checks one at a time and watches the table fail.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest
from builds import pure_only
from hypothesis import given
from hypothesis import strategies as st

from pubproof.model.editions import Edition, Limits
from pubproof.reference import (
    NEED_DATA,
    Decoder,
    IncompleteStream,
    InvalidPacket,
    MalformedPacket,
    ProtocolError,
    ProtocolViolation,
    PubAck,
    PubComp,
    Publish,
    PubRec,
    PubRel,
    codec,
    decode50,
    decode_all,
    encode,
    fast50,
    from_p,
    section50,
    to_p,
)
from pubproof.reference.properties import AckProperties, PublishProperties

V50 = Edition.V50
ALIASES = Limits(topic_alias_maximum=10)


def vbi(value: int) -> bytes:
    out = bytearray()
    while True:
        value, digit = divmod(value, 128)
        out.append(digit | (0x80 if value else 0))
        if not value:
            return bytes(out)


def s(text: str | bytes) -> bytes:
    """A length-prefixed string (bytes as given, so that ill-formed ones can be written)."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return len(raw).to_bytes(2, "big") + raw


def pub(
    props: bytes = b"",
    *,
    topic: bytes = b"a",
    first: int = 0x30,
    packet_id: bytes = b"",
    payload: bytes = b"",
    property_length: bytes | None = None,
) -> bytes:
    """A PUBLISH: topic ``a`` at offsets 2-4, so a property section with a one-byte
    Property Length (offset 5, or 7 with a packet identifier) starts at offset 6 (8)."""
    length = vbi(len(props)) if property_length is None else property_length
    body = s(topic) + packet_id + length + props + payload
    return bytes((first,)) + vbi(len(body)) + body


def ack(first: int, body: bytes) -> bytes:
    return bytes((first,)) + vbi(len(body)) + body


def verdict(
    data: bytes,
    readings: dict[str, str] | None = None,
    limits: Limits | None = None,
    chunk: int | None = None,
) -> tuple[list[Any], tuple[str, int | None, str, int | None] | None]:
    decoder = Decoder(edition=V50, readings=readings, limits=limits)
    packets: list[Any] = []
    step = chunk or max(len(data), 1)
    try:
        for at in range(0, len(data), step):
            decoder.feed(data[at : at + step])
            packets.extend(decoder)
        decoder.close()
    except ProtocolError as error:
        return packets, (error.rule, error.offset, error.kind, error.reason_code)
    return packets, None


M, V = "malformed", "violation"

# (id, bytes, readings, limits, (rule, offset, kind, Reason Code))
REJECT: list[tuple[str, bytes, dict[str, str], Limits | None, tuple[str, int, str, int]]] = [
    # 1. first byte
    ("reserved type", b"\x00\x00", {}, None, ("PP50-2.1.2-reserved-type", 0, M, 0x81)),
    ("AUTH out of scope", b"\xf0\x00", {}, None, ("PP-scope-packet-type", 0, M, 0x81)),
    ("CONNECT out of scope", b"\x10\x00", {}, None, ("PP-scope-packet-type", 0, M, 0x81)),
    ("QoS 3", pub(first=0x36, packet_id=b"\x00\x01"), {}, None, ("MQTT-3.3.1-4", 0, M, 0x81)),
    ("DUP on QoS 0", pub(first=0x38), {}, None, ("MQTT-3.3.1-2", 0, V, 0x82)),
    ("PUBACK flags", ack(0x41, b"\x00\x01"), {}, None, ("MQTT-2.1.3-1", 0, M, 0x81)),
    ("PUBREL flags", ack(0x60, b"\x00\x01"), {}, None, ("MQTT-3.6.1-1", 0, M, 0x81)),
    # 2. Remaining Length
    ("RL fifth byte", b"\x30\xff\xff\xff\xff\x01", {}, None, ("PP50-1.5.5-four-bytes", 4, M, 0x81)),
    ("RL not minimal", b"\x40\x82\x00\x00\x01", {}, None, ("MQTT-1.5.5-1", 1, M, 0x81)),
    (
        "packet too large",
        ack(0x40, b"\x00\x01\x00"),
        {},
        Limits(maximum_packet_size=4),
        ("PP50-3.1.2-packet-too-large", 1, V, 0x95),
    ),
    (
        "too large before the payload arrives",
        b"\x30\xff\x7f",
        {},
        Limits(maximum_packet_size=16_385),
        ("PP50-3.1.2-packet-too-large", 1, V, 0x95),
    ),
    ("PUBACK RL 0", b"\x40\x00", {}, None, ("PP50-3.4.1-remaining-length", 1, M, 0x81)),
    ("PUBREC RL 1", b"\x50\x01\x00", {}, None, ("PP50-3.5.1-remaining-length", 1, M, 0x81)),
    ("PUBREL RL 1", b"\x62\x01\x00", {}, None, ("PP50-3.6.1-remaining-length", 1, M, 0x81)),
    ("PUBCOMP RL 0", b"\x70\x00", {}, None, ("PP50-3.7.1-remaining-length", 1, M, 0x81)),
    # 3. acknowledgement body
    ("PUBACK code 0x92", ack(0x40, b"\x00\x01\x92"), {}, None, ("MQTT-3.4.2-1", 4, V, 0x82)),
    ("PUBREC code 0x92", ack(0x50, b"\x00\x01\x92"), {}, None, ("MQTT-3.5.2-1", 4, V, 0x82)),
    ("PUBREL code 0x10", ack(0x62, b"\x00\x01\x10"), {}, None, ("MQTT-3.6.2-1", 4, V, 0x82)),
    ("PUBCOMP code 0x99", ack(0x70, b"\x00\x01\x99"), {}, None, ("MQTT-3.7.2-1", 4, V, 0x82)),
    (
        "ack bytes after the properties",
        ack(0x40, b"\x00\x01\x00\x00\xff"),
        {},
        None,
        ("PP50-3.4.1-remaining-length", 5, M, 0x81),
    ),
    (
        "ack trailing bytes judged before the properties",
        ack(0x50, b"\x00\x01\x00\x02\x01\x00\xff"),
        {},
        None,
        ("PP50-3.5.1-remaining-length", 5, M, 0x81),
    ),
    (
        "ack Property Length past the packet",
        ack(0x40, b"\x00\x01\x00\x80"),
        {},
        None,
        ("PP50-3.4.1-remaining-length", 5, M, 0x81),
    ),
    (
        "ack Property Length too long",
        ack(0x62, b"\x00\x01\x00\x05"),
        {},
        None,
        ("PP50-2.2.2-property-length", 5, M, 0x81),
    ),
    (
        "ack with a PUBLISH property",
        ack(0x40, b"\x00\x01\x00\x02\x01\x00"),
        {},
        None,
        ("PP50-2.2.2-property-identifier", 6, M, 0x81),
    ),
    (
        "Reason String twice",
        ack(0x70, b"\x00\x01\x00\x06\x1f" + s("") + b"\x1f" + s("")),
        {},
        None,
        ("PP50-2.2.2-property-once", 9, V, 0x82),
    ),
    (
        "Reason String with U+0000",
        ack(0x40, b"\x00\x01\x10\x05\x1f" + s("a\x00")),
        {},
        None,
        ("MQTT-1.5.4-2", 10, M, 0x81),
    ),
    (
        "Reason String ill-formed",
        ack(0x40, b"\x00\x01\x10\x05\x1f" + s(b"a\xff")),
        {},
        None,
        ("MQTT-1.5.4-1", 10, M, 0x81),
    ),
    (
        "Reason String disallowed",
        ack(0x40, b"\x00\x01\x10\x05\x1f" + s("a\x01")),
        {"discouraged-code-points": "reject"},
        None,
        ("PP50-1.5.4-disallowed", 10, M, 0x81),
    ),
    # 4. PUBLISH variable header
    (
        "no topic length",
        b"\x30\x01\x00",
        {},
        None,
        ("PP50-3.3.2-rl-covers-variable-header", 2, M, 0x81),
    ),
    (
        "topic too long",
        b"\x30\x03\x00\x05a",
        {},
        None,
        ("PP50-3.3.2-rl-covers-variable-header", 2, M, 0x81),
    ),
    ("topic ill-formed", pub(topic=b"a\xc3("), {}, None, ("MQTT-3.3.2-1", 5, M, 0x81)),
    ("topic U+0000", pub(topic=b"ab\x00"), {}, None, ("MQTT-4.7.3-2", 6, M, 0x81)),
    ("topic wildcard", pub(topic=b"a/+"), {}, None, ("MQTT-3.3.2-2", 6, V, 0x82)),
    (
        "topic disallowed",
        pub(topic=b"a\x7f"),
        {"discouraged-code-points": "reject"},
        None,
        ("PP50-1.5.4-disallowed", 5, M, 0x81),
    ),
    (
        "no room for the packet identifier",
        b"\x32\x04" + s("a") + b"\x00",
        {},
        None,
        ("PP50-3.3.2-rl-covers-variable-header", 5, M, 0x81),
    ),
    (
        "packet identifier 0",
        pub(first=0x32, packet_id=b"\x00\x00"),
        {},
        None,
        ("MQTT-2.2.1-3", 5, V, 0x82),
    ),
    ("no Property Length", b"\x30\x03" + s("a"), {}, None, ("MQTT-2.2.2-1", 5, M, 0x81)),
    (
        "no Property Length after the identifier",
        b"\x32\x05" + s("a") + b"\x00\x01",
        {},
        None,
        ("MQTT-2.2.2-1", 7, M, 0x81),
    ),
    # 5. the property section
    (
        "Property Length past the packet",
        pub(property_length=b"\x80"),
        {},
        None,
        ("MQTT-2.2.2-1", 5, M, 0x81),
    ),
    (
        "Property Length fifth byte",
        pub(property_length=b"\xff\xff\xff\xff", payload=b"\x01"),
        {},
        None,
        ("PP50-1.5.5-four-bytes", 8, M, 0x81),
    ),
    (
        "Property Length not minimal",
        pub(property_length=b"\x80\x00"),
        {},
        None,
        ("MQTT-1.5.5-1", 5, M, 0x81),
    ),
    (
        "Property Length past the Remaining Length",
        pub(property_length=b"\x01"),
        {},
        None,
        ("PP50-2.2.2-property-length", 5, M, 0x81),
    ),
    (
        "Reason String in a PUBLISH",
        pub(b"\x1f" + s("r")),
        {},
        None,
        ("PP50-2.2.2-property-identifier", 6, M, 0x81),
    ),
    (
        "two-byte identifier",
        pub(b"\x81\x01\x00"),
        {},
        None,
        ("PP50-2.2.2-property-identifier", 6, M, 0x81),
    ),
    ("PFI without its byte", pub(b"\x01"), {}, None, ("PP50-2.2.2-property-value", 6, M, 0x81)),
    ("MEI short", pub(b"\x02\x00\x00\x00"), {}, None, ("PP50-2.2.2-property-value", 6, M, 0x81)),
    ("Topic Alias short", pub(b"\x23\x00"), {}, None, ("PP50-2.2.2-property-value", 6, M, 0x81)),
    ("string prefix short", pub(b"\x03\x00"), {}, None, ("PP50-2.2.2-property-value", 6, M, 0x81)),
    (
        "string past the section",
        pub(b"\x08\x00\x02a"),
        {},
        None,
        ("PP50-2.2.2-property-value", 6, M, 0x81),
    ),
    (
        "binary past the section",
        pub(b"\x09\x00\x05ab"),
        {},
        None,
        ("PP50-2.2.2-property-value", 6, M, 0x81),
    ),
    (
        "pair value prefix missing",
        pub(b"\x26" + s("k")),
        {},
        None,
        ("PP50-2.2.2-property-value", 6, M, 0x81),
    ),
    (
        "pair value past",
        pub(b"\x26" + s("k") + b"\x00\x03v"),
        {},
        None,
        ("PP50-2.2.2-property-value", 6, M, 0x81),
    ),
    (
        "Subscription Identifier past",
        pub(b"\x0b\x80"),
        {},
        None,
        ("PP50-2.2.2-property-value", 6, M, 0x81),
    ),
    (
        "Subscription Identifier fifth byte",
        pub(b"\x0b\xff\xff\xff\xff\x01"),
        {},
        None,
        ("PP50-1.5.5-four-bytes", 10, M, 0x81),
    ),
    (
        "Subscription Identifier not minimal",
        pub(b"\x0b\x81\x00"),
        {},
        None,
        ("MQTT-1.5.5-1", 7, M, 0x81),
    ),
    ("Content Type U+0000", pub(b"\x03" + s("t\x00")), {}, None, ("MQTT-3.3.2-19", 10, M, 0x81)),
    (
        "Content Type ill-formed",
        pub(b"\x03" + s(b"\xed\xa0\x80")),
        {},
        None,
        ("MQTT-3.3.2-19", 9, M, 0x81),
    ),
    ("Response Topic U+0000", pub(b"\x08" + s("\x00")), {}, None, ("MQTT-3.3.2-13", 9, M, 0x81)),
    (
        "Response Topic ill-formed",
        pub(b"\x08" + s(b"r\xc0")),
        {},
        None,
        ("MQTT-3.3.2-13", 10, M, 0x81),
    ),
    ("Response Topic wildcard", pub(b"\x08" + s("r/#")), {}, None, ("MQTT-3.3.2-14", 11, V, 0x82)),
    (
        "User Property name U+0000",
        pub(b"\x26" + s("\x00") + s("v")),
        {},
        None,
        ("MQTT-1.5.7-1", 9, M, 0x81),
    ),
    (
        "User Property value ill-formed",
        pub(b"\x26" + s("k") + s(b"\x80")),
        {},
        None,
        ("MQTT-1.5.7-1", 12, M, 0x81),
    ),
    (
        "User Property name judged before the value's prefix",
        pub(b"\x26" + s(b"\xff") + b"\x00"),
        {},
        None,
        ("MQTT-1.5.7-1", 9, M, 0x81),
    ),
    (
        "User Property disallowed",
        pub(b"\x26" + s("k") + s("\ufffe")),
        {"discouraged-code-points": "reject"},
        None,
        ("PP50-1.5.4-disallowed", 12, M, 0x81),
    ),
    (
        "first offending character wins",
        pub(b"\x08" + s("a+\x00")),
        {},
        None,
        ("MQTT-3.3.2-14", 10, V, 0x82),
    ),
    (
        "Topic Alias twice",
        pub(b"\x23\x00\x01\x23\x00\x01"),
        {},
        ALIASES,
        ("PP50-2.2.2-property-once", 9, V, 0x82),
    ),
    (
        "Response Topic twice",
        pub(b"\x08" + s("r") + b"\x08" + s("r")),
        {},
        None,
        ("PP50-2.2.2-property-once", 10, V, 0x82),
    ),
    (
        "Correlation Data twice",
        pub(b"\x09" + s("") + b"\x09" + s("")),
        {},
        None,
        ("PP50-2.2.2-property-once", 9, V, 0x82),
    ),
    (
        "Content Type twice",
        pub(b"\x03" + s("") + b"\x03" + s("")),
        {},
        None,
        ("PP50-2.2.2-property-once", 9, V, 0x82),
    ),
    ("PFI twice", pub(b"\x01\x00\x01\x01"), {}, None, ("PP50-2.2.2-property-once", 8, V, 0x82)),
    (
        "MEI twice",
        pub(b"\x02\x00\x00\x00\x01" * 2),
        {},
        None,
        ("PP50-2.2.2-property-once", 11, V, 0x82),
    ),
    (
        "a duplicate's content before the duplicate",
        pub(b"\x03" + s("") + b"\x03" + s("\x00")),
        {},
        None,
        ("MQTT-3.3.2-19", 12, M, 0x81),
    ),
    (
        "a duplicate before its range",
        pub(b"\x01\x01\x01\x02"),
        {},
        None,
        ("PP50-2.2.2-property-once", 8, V, 0x82),
    ),
    ("PFI 2", pub(b"\x01\x02"), {}, None, ("PP50-3.3.2-payload-format-value", 6, V, 0x82)),
    ("Topic Alias 0", pub(b"\x23\x00\x00"), {}, ALIASES, ("MQTT-3.3.2-8", 6, V, 0x94)),
    (
        "Topic Alias above the maximum",
        pub(b"\x23\x00\x0b"),
        {},
        ALIASES,
        ("PP50-3.3.4-topic-alias-maximum", 6, V, 0x94),
    ),
    (
        "Topic Alias without a maximum",
        pub(b"\x23\x00\x01"),
        {},
        None,
        ("PP50-3.3.4-topic-alias-maximum", 6, V, 0x94),
    ),
    (
        "Subscription Identifier 0",
        pub(b"\x0b\x00"),
        {},
        None,
        ("PP50-3.3.2-subscription-identifier-zero", 6, V, 0x82),
    ),
    (
        "Subscription Identifier 0, longer form, lenient",
        pub(b"\x0b\x80\x00"),
        {"rl-encoding": "lenient"},
        None,
        ("PP50-3.3.2-subscription-identifier-zero", 6, V, 0x82),
    ),
    # 6. empty topic without a Topic Alias
    ("empty topic, no alias", pub(topic=b""), {}, None, ("PP50-3.3.2-topic-or-alias", 2, V, 0x82)),
    (
        "properties judged before the empty topic",
        pub(b"\x23\x00\x00", topic=b""),
        {},
        ALIASES,
        ("MQTT-3.3.2-8", 5, V, 0x94),
    ),
    (
        "empty topic before the payload",
        pub(b"\x01\x01", topic=b"", payload=b"\xff"),
        {},
        None,
        ("PP50-3.3.2-topic-or-alias", 2, V, 0x82),
    ),
    # 7. payload
    (
        "payload not UTF-8",
        pub(b"\x01\x01", payload=b"ok\xe2\x82"),
        {},
        None,
        ("PP50-3.3.2-payload-utf8", 10, V, 0x99),
    ),
    (
        "payload not UTF-8 after a packet identifier",
        pub(b"\x01\x01", first=0x34, packet_id=b"\x00\x07", payload=b"\xff"),
        {},
        None,
        ("PP50-3.3.2-payload-utf8", 10, V, 0x99),
    ),
]

# (id, bytes, readings, limits, the packets)
ACCEPT: list[tuple[str, bytes, dict[str, str], Limits | None, list[Any]]] = [
    (
        "DUP on QoS 0, ignored",
        pub(first=0x38),
        {"dup-qos0": "ignore"},
        None,
        [Publish(topic="a", dup=True, properties=PublishProperties())],
    ),
    (
        "RL longer form, lenient",
        b"\x40\x82\x00\x00\x01",
        {"rl-encoding": "lenient"},
        None,
        [PubAck(packet_id=1, properties=AckProperties())],
    ),
    (
        "packet of the maximum size",
        ack(0x40, b"\x00\x01\x00"),
        {},
        Limits(maximum_packet_size=5),
        [PubAck(packet_id=1, properties=AckProperties())],
    ),
    (
        "packet identifier 0 in an ack",
        ack(0x62, b"\x00\x00"),
        {},
        None,
        [PubRel(packet_id=0, properties=AckProperties())],
    ),
    (
        "PUBACK 0x99",
        ack(0x40, b"\x00\x01\x99"),
        {},
        None,
        [PubAck(packet_id=1, reason_code=0x99, properties=AckProperties())],
    ),
    (
        "PUBCOMP 0x92 with properties",
        ack(0x70, b"\x00\x02\x92\x0c\x1f" + s("gone") + b"\x26" + s("") + s("")),
        {},
        None,
        [
            PubComp(
                packet_id=2,
                reason_code=0x92,
                properties=AckProperties(reason_string="gone", user_properties=(("", ""),)),
            )
        ],
    ),
    (
        "every PUBLISH property",
        pub(
            b"\x01\x01\x02\x00\x00\x01\x00\x23\x00\x0a\x08"
            + s("re/ply")
            + b"\x09"
            + s(b"\x00\xff")
            + b"\x26"
            + s("k")
            + s("v")
            + b"\x26"
            + s("k")
            + s("w")
            + b"\x0b\x01\x0b\xff\xff\xff\x7f"
            + b"\x03"
            + s("text/plain"),
            topic=b"",
            payload="é".encode(),
        ),
        {},
        ALIASES,
        [
            Publish(
                topic="",
                payload="é".encode(),
                properties=PublishProperties(
                    payload_format_indicator=1,
                    message_expiry_interval=256,
                    topic_alias=10,
                    response_topic="re/ply",
                    correlation_data=b"\x00\xff",
                    user_properties=(("k", "v"), ("k", "w")),
                    subscription_identifiers=(1, 268_435_455),
                    content_type="text/plain",
                ),
            )
        ],
    ),
    (
        "PFI twice, accepted, the last counts",
        pub(b"\x01\x01\x01\x00", payload=b"\xff"),
        {"pfi-mei-once": "accept"},
        None,
        [
            Publish(
                topic="a", payload=b"\xff", properties=PublishProperties(payload_format_indicator=0)
            )
        ],
    ),
    (
        "payload not UTF-8, accepted",
        pub(b"\x01\x01", payload=b"\xff"),
        {"payload-utf8": "accept"},
        None,
        [
            Publish(
                topic="a", payload=b"\xff", properties=PublishProperties(payload_format_indicator=1)
            )
        ],
    ),
    (
        "payload not UTF-8 without PFI 1",
        pub(b"\x01\x00", payload=b"\xff"),
        {},
        None,
        [
            Publish(
                topic="a", payload=b"\xff", properties=PublishProperties(payload_format_indicator=0)
            )
        ],
    ),
    (
        "Subscription Identifier longer form, lenient",
        pub(b"\x0b\x85\x00"),
        {"rl-encoding": "lenient"},
        None,
        [Publish(topic="a", properties=PublishProperties(subscription_identifiers=(5,)))],
    ),
    (
        "disallowed code points accepted by default",
        pub(b"\x26" + s("\x01") + s("\uffff"), topic=b"\x7f"),
        {},
        None,
        [
            Publish(
                topic="\x7f", properties=PublishProperties(user_properties=(("\x01", "\uffff"),))
            )
        ],
    ),
    (
        "wildcards in a Content Type",
        pub(b"\x03" + s("a/+/#")),
        {},
        None,
        [Publish(topic="a", properties=PublishProperties(content_type="a/+/#"))],
    ),
]


@pytest.mark.parametrize(
    ("name", "data", "readings", "limits", "expected"), REJECT, ids=[c[0] for c in REJECT]
)
@pytest.mark.parametrize("chunk", [None, 1, 3])
def test_rejects(
    name: str,
    data: bytes,
    readings: dict[str, str],
    limits: Limits | None,
    expected: tuple[str, int, str, int],
    chunk: int | None,
) -> None:
    packets, error = verdict(data, readings, limits, chunk)
    assert packets == []
    assert error == expected, name


@pytest.mark.parametrize(
    ("name", "data", "readings", "limits", "expected"), ACCEPT, ids=[c[0] for c in ACCEPT]
)
@pytest.mark.parametrize("chunk", [None, 1, 3])
def test_accepts(
    name: str,
    data: bytes,
    readings: dict[str, str],
    limits: Limits | None,
    expected: list[Any],
    chunk: int | None,
) -> None:
    assert verdict(data * 2, readings, limits, chunk) == (expected * 2, None), name


ALL_CASES: list[tuple[str, bytes, dict[str, str], Limits | None, Any]] = [*REJECT, *ACCEPT]


@pytest.mark.parametrize(
    ("name", "data", "readings", "limits", "expected"), ALL_CASES, ids=[c[0] for c in ALL_CASES]
)
def test_a_prefix_is_incomplete_or_already_the_fault(
    name: str, data: bytes, readings: dict[str, str], limits: Limits | None, expected: Any
) -> None:
    """Missing bytes are never a fault, and a fault never waits for bytes it does not need."""
    whole = verdict(data, readings, limits)
    for cut in range(1, len(data)):
        _, error = verdict(data[:cut], readings, limits)
        assert error is not None
        if error[0] == "incomplete":
            assert (error[1], error[3]) == (0, None)
        else:
            assert error == whole[1], (name, cut)


def test_a_fault_is_reported_before_the_rest_of_the_packet_arrives() -> None:
    # A string that declares more than the property section holds: judged on its prefix.
    decoder = Decoder(edition=V50)
    decoder.feed(b"\x30\xff\x7f" + s("a") + b"\x10\x03\x00\xff")
    with pytest.raises(MalformedPacket) as raised:
        decoder.next_packet()
    assert (raised.value.rule, raised.value.offset) == ("PP50-2.2.2-property-value", 7)
    # A Topic Alias above the maximum, in a packet of 2 MB of which 12 bytes arrived.
    decoder = Decoder(edition=V50)
    decoder.feed(b"\x30\x80\x80\x80\x01" + s("a") + b"\x03\x23\x00\x01")
    with pytest.raises(ProtocolViolation) as violation:
        decoder.next_packet()
    assert (violation.value.rule, violation.value.reason_code) == (
        "PP50-3.3.4-topic-alias-maximum",
        0x94,
    )


@pure_only  # counts the calls of a method of the compiled decoder
def test_a_large_property_section_is_judged_once_as_it_arrives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Properties already judged are not judged again when more bytes come (the decoder
    keeps its place), and the packets are those of the whole stream."""
    pairs = tuple((f"k{i}", "v" * (i % 7)) for i in range(3000))
    packet = Publish(
        topic="t",
        qos=1,
        packet_id=4,
        payload=b"p" * 100,
        properties=PublishProperties(user_properties=pairs, content_type="c"),
    )
    data = encode(packet, edition=V50) + encode(PubAck(packet_id=4), edition=V50)
    calls = 0
    original = Decoder._string

    def counting(self: Decoder, *args: Any) -> str:
        nonlocal calls
        calls += 1
        return original(self, *args)

    monkeypatch.setattr(Decoder, "_string", counting)
    decoder = Decoder(edition=V50)
    got: list[Any] = []
    for at in range(0, len(data), 64):
        decoder.feed(data[at : at + 64])
        while (item := decoder.next_packet()) is not NEED_DATA:
            got.append(item)
    decoder.close()
    assert got == [packet, PubAck(packet_id=4, properties=AckProperties())]
    # Each string is judged once, but for a User Property's name whose value had not all
    # arrived (judged again with it): at most one more per chunk, never all of them again.
    feeds = -(-len(data) // 64)
    assert 2 * len(pairs) + 1 <= calls <= 2 * len(pairs) + 1 + feeds


def test_the_three_forms_of_a_success_are_one_packet() -> None:
    forms = ["40020001", "4003000100", "400400010000"]
    decoded = [decode_all(bytes.fromhex(form), edition=V50) for form in forms]
    assert (
        decoded[0] == decoded[1] == decoded[2] == [PubAck(packet_id=1, properties=AckProperties())]
    )
    assert to_p(decoded[2][0]) == {
        "type": "PUBACK",
        "packet_id": 1,
        "reason_code": 0,
        "properties": {},
    }
    assert encode(decoded[2][0], edition=V50).hex() == forms[0]
    # 3.1.1 knows only the first, without Reason Code or properties.
    assert decode_all(bytes.fromhex(forms[0])) == [PubAck(packet_id=1)]
    assert to_p(PubAck(packet_id=1)) == {"type": "PUBACK", "packet_id": 1}


def test_errors_carry_the_reason_code_only_in_5_0() -> None:
    with pytest.raises(ProtocolViolation) as v50:
        decode_all(b"\x30\x03" + s("") + b"\x00", edition=V50)
    assert v50.value.as_json()["reason_code"] == 0x82
    with pytest.raises(ProtocolViolation) as v311:
        decode_all(b"\x30\x03\x00\x01+")
    assert v311.value.reason_code is None and "reason_code" not in v311.value.as_json()
    # a kind that differs in 5.0: Disallowed code points make a Malformed Packet
    readings = {"discouraged-code-points": "reject"}
    with pytest.raises(ProtocolViolation):
        decode_all(b"\x30\x03\x00\x01\x01", readings=readings)
    with pytest.raises(MalformedPacket):
        decode_all(pub(topic=b"\x01"), edition=V50, readings=readings)
    with pytest.raises(IncompleteStream) as cut:
        decode_all(b"\x30\x05", edition=V50)
    assert cut.value.reason_code is None


def test_limits_exist_only_in_5_0() -> None:
    with pytest.raises(ValueError, match=r"3\.1\.1"):
        Decoder(limits=Limits(topic_alias_maximum=1))
    with pytest.raises(ValueError, match=r"edition 3\.1 "):
        encode(PubAck(packet_id=1), edition=Edition.V31, limits=Limits(maximum_packet_size=9))
    Decoder(limits=Limits())  # the defaults are every edition's


# --- packets -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"payload_format_indicator": 256}, "PP50-3.3.2-payload-format-value"),
        ({"message_expiry_interval": 2**32}, "PP50-2.2.2-property-value"),
        ({"message_expiry_interval": -1}, "PP50-2.2.2-property-value"),
        ({"topic_alias": 65536}, "PP50-3.3.4-topic-alias-maximum"),
        ({"response_topic": "\udc00"}, "MQTT-3.3.2-13"),
        ({"content_type": b"t"}, "MQTT-3.3.2-19"),
        ({"content_type": "é" * 32768}, "PP50-2.2.2-property-value"),
        ({"correlation_data": "x"}, "PP50-2.2.2-property-value"),
        ({"correlation_data": bytes(65536)}, "PP50-2.2.2-property-value"),
        ({"user_properties": [("k", "v")]}, "MQTT-1.5.7-1"),
        ({"user_properties": (("k",),)}, "MQTT-1.5.7-1"),
        ({"user_properties": (("k", 1),)}, "MQTT-1.5.7-1"),
        ({"subscription_identifiers": (268_435_456,)}, "PP50-1.5.5-four-bytes"),
        ({"subscription_identifiers": (-1,)}, "PP50-3.3.2-subscription-identifier-zero"),
        ({"subscription_identifiers": [1]}, "PP50-3.3.2-subscription-identifier-zero"),
    ],
)
def test_properties_validate_their_types(kwargs: dict[str, Any], rule: str) -> None:
    with pytest.raises(InvalidPacket) as raised:
        PublishProperties(**kwargs)
    assert raised.value.rule == rule


def test_packets_validate_their_5_0_fields() -> None:
    with pytest.raises(InvalidPacket):
        Publish(topic="a", properties={"topic_alias": 1})  # type: ignore[arg-type]
    with pytest.raises(InvalidPacket) as code:
        PubRec(packet_id=1, reason_code=256)
    assert code.value.rule == "MQTT-3.5.2-1"
    with pytest.raises(InvalidPacket):
        PubAck(packet_id=1, properties=PublishProperties())  # type: ignore[arg-type]
    with pytest.raises(InvalidPacket) as reason:
        AckProperties(reason_string="\ud800")
    assert reason.value.rule == "MQTT-1.5.4-1"
    assert PublishProperties() == PublishProperties(user_properties=())
    assert not hasattr(PublishProperties(), "__dict__")


# --- encoding ----------------------------------------------------------------------------

ACK_TYPES = {PubAck: 0x40, PubRec: 0x50, PubRel: 0x62, PubComp: 0x70}
CODES = {
    PubAck: (0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99),
    PubRec: (0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99),
    PubRel: (0x00, 0x92),
    PubComp: (0x00, 0x92),
}


@pytest.mark.parametrize("cls", list(ACK_TYPES), ids=lambda cls: cls.__name__)
def test_every_reason_code_of_every_ack_round_trips_in_its_shortest_form(cls: Any) -> None:
    for code in CODES[cls]:
        for props in (None, AckProperties(), AckProperties(reason_string="why")):
            packet = cls(packet_id=0x1234, reason_code=code, properties=props)
            data = encode(packet, edition=V50)
            if props is None or props == AckProperties():
                expected = b"\x12\x34" if code == 0 else bytes((0x12, 0x34, code))
            else:
                expected = bytes((0x12, 0x34, code, 6, 0x1F)) + s("why")
            assert data == bytes((ACK_TYPES[cls], len(expected))) + expected
            decoded = decode_all(data, edition=V50)
            assert decoded == [
                cls(packet_id=0x1234, reason_code=code, properties=props or AckProperties())
            ]
            assert from_p(to_p(decoded[0])) == decoded[0]
    for code in set(range(256)) - set(CODES[cls]):
        with pytest.raises(InvalidPacket) as raised:
            encode(cls(packet_id=1, reason_code=code), edition=V50)
        assert raised.value.rule == f"MQTT-3.{4 + list(ACK_TYPES).index(cls)}.2-1"


PROPERTY_CASES: list[tuple[PublishProperties, bytes]] = [
    (PublishProperties(payload_format_indicator=0), b"\x01\x00"),
    (PublishProperties(payload_format_indicator=1), b"\x01\x01"),
    (PublishProperties(message_expiry_interval=0xFFFF_FFFF), b"\x02\xff\xff\xff\xff"),
    (PublishProperties(topic_alias=65535), b"\x23\xff\xff"),
    (PublishProperties(response_topic="r/é"), b"\x08" + s("r/é")),
    (PublishProperties(correlation_data=b""), b"\x09\x00\x00"),
    (
        PublishProperties(user_properties=(("a", ""), ("a", "b"))),
        b"\x26" + s("a") + s("") + b"\x26" + s("a") + s("b"),
    ),
    (
        PublishProperties(subscription_identifiers=(127, 128, 16_384, 268_435_455)),
        b"\x0b\x7f\x0b\x80\x01\x0b\x80\x80\x01\x0b\xff\xff\xff\x7f",
    ),
    (PublishProperties(content_type=""), b"\x03\x00\x00"),
    # the contract's order, whatever the order of the keywords
    (
        PublishProperties(
            content_type="c",
            subscription_identifiers=(2,),
            user_properties=(("k", "v"),),
            correlation_data=b"d",
            response_topic="r",
            topic_alias=1,
            message_expiry_interval=1,
            payload_format_indicator=1,
        ),
        b"\x01\x01\x02\x00\x00\x00\x01\x23\x00\x01\x08"
        + s("r")
        + b"\x09"
        + s("d")
        + b"\x26"
        + s("k")
        + s("v")
        + b"\x0b\x02\x03"
        + s("c"),
    ),
]


@pytest.mark.parametrize(("props", "section"), PROPERTY_CASES)
def test_every_property_round_trips(props: PublishProperties, section: bytes) -> None:
    packet = Publish(topic="t", qos=2, packet_id=3, payload=b"x", properties=props)
    data = encode(packet, edition=V50)
    assert data == pub(section, topic=b"t", first=0x34, packet_id=b"\x00\x03", payload=b"x")
    limits = Limits(topic_alias_maximum=65535)
    for chunk in (None, 1):
        assert verdict(data, limits=limits, chunk=chunk) == ([packet], None)
    assert from_p(to_p(packet)) == packet


def test_long_sections_use_the_shortest_variable_byte_integers() -> None:
    props = PublishProperties(content_type="c" * 200)
    data = encode(Publish(topic="t", payload=b"p" * 100, properties=props), edition=V50)
    # Remaining Length 2 + 1 + 2 + (1 + 2 + 200) + 100 = 308: two bytes; Property Length
    # 203: two bytes.
    assert data[:3] == b"\x30\xb4\x02" and data[6:8] == b"\xcb\x01"
    assert decode_all(data, edition=V50)[0].properties == props


@pytest.mark.parametrize(
    ("packet", "readings", "limits", "rule"),
    [
        (Publish(topic="a", properties=PublishProperties(topic_alias=0)), {}, None, "MQTT-3.3.2-8"),
        (
            Publish(topic="a", properties=PublishProperties(topic_alias=11)),
            {},
            ALIASES,
            "PP50-3.3.4-topic-alias-maximum",
        ),
        (
            Publish(topic="a", properties=PublishProperties(subscription_identifiers=(1, 0))),
            {},
            None,
            "PP50-3.3.2-subscription-identifier-zero",
        ),
        (
            Publish(topic="a", properties=PublishProperties(payload_format_indicator=2)),
            {},
            None,
            "PP50-3.3.2-payload-format-value",
        ),
        (
            Publish(topic="a", properties=PublishProperties(response_topic="a/#")),
            {},
            None,
            "MQTT-3.3.2-14",
        ),
        (
            Publish(topic="a", properties=PublishProperties(response_topic="\x00")),
            {},
            None,
            "MQTT-3.3.2-13",
        ),
        (
            Publish(topic="a", properties=PublishProperties(content_type="\x00")),
            {},
            None,
            "MQTT-3.3.2-19",
        ),
        (
            Publish(topic="a", properties=PublishProperties(user_properties=(("k", "\x00"),))),
            {},
            None,
            "MQTT-1.5.7-1",
        ),
        (
            Publish(topic="a", properties=PublishProperties(content_type="\x01")),
            {"discouraged-code-points": "reject"},
            None,
            "PP50-1.5.4-disallowed",
        ),
        (Publish(topic="a+"), {}, None, "MQTT-3.3.2-2"),
        (Publish(topic="\x00"), {}, None, "MQTT-4.7.3-2"),
        (Publish(topic=""), {}, None, "PP50-3.3.2-topic-or-alias"),
        (Publish(topic="", properties=PublishProperties()), {}, None, "PP50-3.3.2-topic-or-alias"),
        (Publish(topic="a", dup=True), {}, None, "MQTT-3.3.1-2"),
        (Publish(topic="a", qos=3, packet_id=1), {}, None, "MQTT-3.3.1-4"),
        (
            Publish(
                topic="a", payload=b"\xff", properties=PublishProperties(payload_format_indicator=1)
            ),
            {},
            None,
            "PP50-3.3.2-payload-utf8",
        ),
        (
            Publish(topic="a", payload=b"x" * 10),
            {},
            Limits(maximum_packet_size=15),
            "PP50-3.1.2-packet-too-large",
        ),
        (
            PubAck(packet_id=1, properties=AckProperties(reason_string="\x00")),
            {},
            None,
            "MQTT-1.5.4-2",
        ),
        (
            PubRel(packet_id=1, properties=AckProperties(user_properties=(("\x00", ""),))),
            {},
            None,
            "MQTT-1.5.7-1",
        ),
        (PubRel(packet_id=1, reason_code=0x10), {}, None, "MQTT-3.6.2-1"),
        (PubComp(packet_id=1), {}, Limits(maximum_packet_size=3), "PP50-3.1.2-packet-too-large"),
        # the decoder's order: the first byte, then the topic, then the properties
        (
            Publish(topic="+", dup=True, properties=PublishProperties(topic_alias=0)),
            {},
            None,
            "MQTT-3.3.1-2",
        ),
        (Publish(topic="+", properties=PublishProperties(topic_alias=0)), {}, None, "MQTT-3.3.2-2"),
        (
            Publish(
                topic="", payload=b"\xff", properties=PublishProperties(payload_format_indicator=1)
            ),
            {},
            None,
            "PP50-3.3.2-topic-or-alias",
        ),
    ],
)
def test_encode_refuses_what_a_5_0_sender_may_not_send(
    packet: Any, readings: dict[str, str], limits: Limits | None, rule: str
) -> None:
    with pytest.raises(InvalidPacket) as raised:
        encode(packet, edition=V50, readings=readings, limits=limits)
    assert raised.value.rule == rule


def test_encode_accepts_what_the_readings_and_limits_allow() -> None:
    bad = Publish(
        topic="a", payload=b"\xff", properties=PublishProperties(payload_format_indicator=1)
    )
    assert encode(bad, edition=V50, readings={"payload-utf8": "accept"}) == pub(
        b"\x01\x01", payload=b"\xff"
    )
    alias = Publish(topic="", properties=PublishProperties(topic_alias=65535))
    assert encode(alias, edition=V50) == pub(b"\x23\xff\xff", topic=b"")  # no limits: any alias
    assert encode(
        alias, edition=V50, limits=Limits(topic_alias_maximum=65535, maximum_packet_size=9)
    )
    assert (
        encode(Publish(topic="a", dup=True), edition=V50, readings={"dup-qos0": "ignore"})[0]
        == 0x38
    )


@pytest.mark.parametrize("edition", [Edition.V31, Edition.V311])
@pytest.mark.parametrize(
    "packet",
    [
        Publish(topic="a", properties=PublishProperties()),
        PubAck(packet_id=1, reason_code=0x10),
        PubRel(packet_id=1, properties=AckProperties()),
    ],
)
def test_3_x_refuses_every_5_0_field(edition: Edition, packet: Any) -> None:
    with pytest.raises(InvalidPacket) as raised:
        encode(packet, edition=edition)
    assert raised.value.rule == "PP-scope-packet-type"


# --- the P form --------------------------------------------------------------------------


def test_p_form_of_5_0_packets() -> None:
    packet = Publish(
        topic="",
        qos=1,
        packet_id=2,
        payload=b"\x01",
        properties=PublishProperties(
            topic_alias=3,
            correlation_data=b"\xab",
            user_properties=(("k", "v"),),
            subscription_identifiers=(7,),
        ),
    )
    p = to_p(packet)
    assert p == {
        "type": "PUBLISH",
        "dup": False,
        "qos": 1,
        "retain": False,
        "topic": "",
        "packet_id": 2,
        "payload_hex": "01",
        "properties": {
            "topic_alias": 3,
            "correlation_data_hex": "ab",
            "user_properties": [["k", "v"]],
            "subscription_identifiers": [7],
        },
    }
    assert list(p["properties"]) == ["topic_alias", "correlation_data_hex", "user_properties",
                                     "subscription_identifiers"]  # fmt: skip
    assert from_p(p) == packet
    assert "properties" not in to_p(Publish(topic="a"))
    rec = PubRec(packet_id=1, reason_code=0x10, properties=AckProperties(reason_string="r"))
    assert to_p(rec) == {
        "type": "PUBREC",
        "packet_id": 1,
        "reason_code": 16,
        "properties": {"reason_string": "r"},
    }
    assert from_p(to_p(rec)) == rec
    for bad in (
        {"type": "PUBLISH", "topic": "a", "properties": {"alias": 1}},
        {"type": "PUBLISH", "topic": "a", "properties": {"correlation_data_hex": "x"}},
        {"type": "PUBLISH", "topic": "a", "properties": {"user_properties": [["k"]]}},
        {"type": "PUBACK", "packet_id": 1, "properties": {"content_type": "c"}},
        {"type": "PUBACK", "packet_id": 1, "properties": []},
    ):
        with pytest.raises(InvalidPacket):
            from_p(bad)


# --- each check is live --------------------------------------------------------------------


@contextmanager
def patched(modules: tuple[ModuleType, ...], name: str, value: object) -> Iterator[None]:
    """``name`` replaced by ``value`` in each of ``modules`` (those whose code reads it)."""
    originals = [getattr(module, name) for module in modules]
    for module in modules:
        setattr(module, name, value)
    codec.clear_caches()
    try:
        yield
    finally:
        for module, original in zip(modules, originals, strict=True):
            setattr(module, name, original)
        codec.clear_caches()


def _widened_codes() -> dict[int, frozenset[int]]:
    return {kind: frozenset(range(256)) for kind in decode50._ACK_CODES}


#: mutant -> (the modules whose code reads the name, the name, its mutated value)
MUTANTS: dict[str, tuple[tuple[ModuleType, ...], str, Any]] = {
    "any ack Reason Code": ((decode50,), "_ACK_CODES", _widened_codes()),
    "Reason String valid in PUBLISH": (
        (section50,),
        "_PUBLISH_IDS",
        section50._PUBLISH_IDS | {0x1F},
    ),
    "PFI valid in acks": ((section50,), "_ACK_IDS", section50._ACK_IDS | {0x01}),
    "Response Topic wildcards allowed": (
        (section50,),
        "_WILDCARD_BYTES",
        re.compile(rb"[^\x00-\xff]"),
    ),
    "MEI three bytes": ((section50,), "_FIXED_SIZE", {**section50._FIXED_SIZE, 0x02: 3}),
    "no minimal rule": ((decode50, section50), "_vbi_size", lambda value: 4),
    "Content Type judged as a Reason String": (
        (section50,),
        "_STRING_RULES",
        {**section50._STRING_RULES, 0x03: section50._STRING_RULES[0x1F]},
    ),
}


def _table_fails() -> bool:
    for _, data, readings, limits, expected in REJECT:
        for chunk in (None, 1):
            if verdict(data, readings, limits, chunk) != ([], expected):
                return True
    for _, data, readings, limits, packets in ACCEPT:
        for chunk in (None, 1):
            if verdict(data, readings, limits, chunk) != (packets, None):
                return True
    return False


#: the mutants that replace a function of the decoder, which its compiled callers call
#: directly: they run in the pure pass
PATCH_COMPILED_CODE = {"no minimal rule"}


@pytest.mark.parametrize(
    "mutant",
    [pytest.param(m, marks=pure_only) if m in PATCH_COMPILED_CODE else m for m in sorted(MUTANTS)],
)
def test_each_check_is_live(mutant: str) -> None:
    modules, name, value = MUTANTS[mutant]
    with patched(modules, name, value):
        assert _table_fails(), f"the case table does not notice: {mutant}"
    assert not _table_fails()


def test_the_fast_path_and_the_judging_path_agree() -> None:
    """Iteration (the fast path where it can) and next_packet (always judging) give the
    same packets and errors on every case of the table, whole and byte by byte."""
    for _, data, readings, limits, _ in ALL_CASES:
        for chunk in (len(data), 1):
            slow = Decoder(edition=V50, readings=readings, limits=limits)
            slow_out: list[Any] = []
            try:
                for at in range(0, len(data), chunk):
                    slow.feed(data[at : at + chunk])
                    while (item := slow.next_packet()) is not NEED_DATA:
                        slow_out.append(item)
            except ProtocolError as error:
                slow_out.append((error.rule, error.offset))
            fast = Decoder(edition=V50, readings=readings, limits=limits)
            fast_out: list[Any] = []
            try:
                for at in range(0, len(data), chunk):
                    fast.feed(data[at : at + chunk])
                    fast_out.extend(fast)
            except ProtocolError as error:
                fast_out.append((error.rule, error.offset))
            assert fast_out == slow_out


def test_the_fast_paths_shared_memory_of_property_sections_is_bounded_and_per_receiver() -> None:
    section = b"\x23\x00\x05\x26" + s("k") + s("v")
    data = pub(section) * 3
    expected = Publish(
        topic="a",
        properties=PublishProperties(topic_alias=5, user_properties=(("k", "v"),)),
    )
    assert decode_all(data, edition=V50, limits=ALIASES) == [expected] * 3
    # the same bytes, another receiver: its own limits judge them
    with pytest.raises(ProtocolViolation) as raised:
        decode_all(data, edition=V50, limits=Limits(topic_alias_maximum=4))
    assert raised.value.rule == "PP50-3.3.4-topic-alias-maximum"
    decoder = Decoder(edition=V50)
    many = [
        Publish(topic="t", properties=PublishProperties(user_properties=(("n", str(i)),)))
        for i in range(fast50._SECTION_CACHE_SIZE + 1000)
    ]
    decoder.feed(b"".join(encode(packet, edition=V50) for packet in many))
    assert list(decoder) == many
    memory = fast50._PUBLISH_SECTIONS[False]
    assert 0 < len(memory) <= fast50._SECTION_CACHE_SIZE
    # one receiver's packet puts the section in the memory (its alias judged against the
    # largest maximum); a receiver of a smaller maximum still refuses it, and one of a
    # larger maximum is handed the same object
    first = decode_all(pub(section), edition=V50, limits=ALIASES)[0]
    kept = memory[section]
    assert kept.properties is first.properties and kept.topic_alias == 5
    with pytest.raises(ProtocolViolation) as raised:
        decode_all(pub(section), edition=V50, limits=Limits(topic_alias_maximum=4))
    assert raised.value.rule == "PP50-3.3.4-topic-alias-maximum"
    assert memory[section] is kept
    wider = decode_all(pub(section), edition=V50, limits=Limits(topic_alias_maximum=9))
    assert wider[0].properties is kept.properties


# --- properties of random packets ------------------------------------------------------------

_text = st.text(
    st.one_of(st.sampled_from(list("ab/xé温🌡 ")), st.characters(blacklist_categories=["Cs"])),
    max_size=8,
)
_clean_text = _text.filter(lambda text: "\x00" not in text)
_topic_text = _clean_text.filter(lambda text: "+" not in text and "#" not in text)


@st.composite
def _properties(draw: st.DrawFn) -> PublishProperties:
    def maybe(strategy: st.SearchStrategy[Any]) -> Any:
        return draw(st.one_of(st.none(), strategy))

    return PublishProperties(
        payload_format_indicator=maybe(st.just(0)),
        message_expiry_interval=maybe(st.integers(0, 0xFFFF_FFFF)),
        topic_alias=maybe(st.integers(1, 0xFFFF)),
        response_topic=maybe(_topic_text),
        correlation_data=maybe(st.binary(max_size=8)),
        user_properties=tuple(draw(st.lists(st.tuples(_clean_text, _clean_text), max_size=3))),
        subscription_identifiers=tuple(draw(st.lists(st.integers(1, 268_435_455), max_size=3))),
        content_type=maybe(_clean_text),
    )


@st.composite
def _packets(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        qos = draw(st.integers(0, 2))
        properties = draw(_properties())
        topic = draw(_topic_text)
        if not topic and properties.topic_alias is None:
            topic = "t"
        return Publish(
            topic=topic,
            qos=qos,
            packet_id=draw(st.integers(1, 0xFFFF)) if qos else None,
            payload=draw(st.binary(max_size=40)),
            dup=bool(qos) and draw(st.booleans()),
            retain=draw(st.booleans()),
            properties=properties,
        )
    cls = draw(st.sampled_from(list(ACK_TYPES)))
    return cls(
        packet_id=draw(st.integers(0, 0xFFFF)),
        reason_code=draw(st.sampled_from(CODES[cls])),
        properties=AckProperties(
            reason_string=draw(st.one_of(st.none(), _clean_text)),
            user_properties=tuple(draw(st.lists(st.tuples(_clean_text, _clean_text), max_size=2))),
        ),
    )


_RECEIVER = Limits(topic_alias_maximum=0xFFFF)


@given(st.lists(_packets(), min_size=1, max_size=4), st.integers(1, 9))
def test_random_packets_round_trip_in_any_chunks(packets: list[Any], chunk: int) -> None:
    data = b"".join(encode(packet, edition=V50) for packet in packets)
    assert verdict(data, limits=_RECEIVER, chunk=chunk) == (packets, None)
    assert [from_p(to_p(packet)) for packet in packets] == packets


@given(
    st.lists(_packets(), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=3),
    st.integers(1, 9),
    st.sampled_from([None, Limits(), Limits(topic_alias_maximum=3, maximum_packet_size=40)]),
)
def test_mutated_streams_raise_only_protocol_errors_and_never_depend_on_chunks(
    packets: list[Any], changes: list[tuple[int, int]], chunk: int, limits: Limits | None
) -> None:
    data = bytearray(b"".join(encode(packet, edition=V50) for packet in packets))
    for at, value in changes:
        data[at % len(data)] = value
    whole = verdict(bytes(data), limits=limits)
    assert verdict(bytes(data), limits=limits, chunk=chunk) == whole
    if whole[1] is not None:
        assert 0 <= whole[1][1] <= len(data)  # type: ignore[operator]
