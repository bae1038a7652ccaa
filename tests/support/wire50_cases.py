"""The reference codec's MQTT 5.0 cases, for the tests of the decoder, the encoder and
the fast path (``tests/test_reference50_*.py``): every rule of the wire contract on its
rejecting side (:data:`REJECT`: the rule, offset, kind and DISCONNECT Reason Code) and its
accepting side (:data:`ACCEPT`: the packets), and the builders of their bytes.

The expected verdicts are written out from docs/guides/mqtt5-wire.md (not computed by the
codec), so each check in the decoder is held by a case that fails when the check goes;
``tests/test_reference50_mutants.py`` removes checks one at a time and watches the table
fail.
"""

from __future__ import annotations

from typing import Any

from pubproof.model.editions import Edition, Limits
from pubproof.reference import Decoder, ProtocolError, PubAck, PubComp, Publish, PubRec, PubRel
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


ALL_CASES: list[tuple[str, bytes, dict[str, str], Limits | None, Any]] = [*REJECT, *ACCEPT]

#: each acknowledgement's class and its first byte, and the Reason Codes it may carry
ACK_TYPES = {PubAck: 0x40, PubRec: 0x50, PubRel: 0x62, PubComp: 0x70}
CODES = {
    PubAck: (0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99),
    PubRec: (0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99),
    PubRel: (0x00, 0x92),
    PubComp: (0x00, 0x92),
}
