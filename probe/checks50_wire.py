"""MQTT 5.0 wire checks: PUBLISH packets and acknowledgements the model rejects (or judges
only under a reading), each sent to the broker on a connection whose CONNACK declared the
broker's limits. Must the broker close the connection, and with which DISCONNECT Reason
Code?

A check sends one *case*, then PINGREQ, and reads until PINGRESP or the end of the
connection. :func:`pubproof.probe.judge50.case_findings50` judges the outcome: the model's
decoding of the case with the broker's Topic Alias Maximum and Maximum Packet Size (and
under every reading), and for a case the wire format accepts, the 5.0 Topic Alias tables.
"""

from __future__ import annotations

from collections.abc import Callable

from pubproof.judge.close import close_rules
from pubproof.judge.limits import Declared
from pubproof.judge.limits import declared as declared_by
from pubproof.model.editions import Edition
from pubproof.model.properties50 import BY_KEY
from pubproof.model.wire import encode_remaining_length
from pubproof.probe.check import Check, Run, fixed
from pubproof.probe.context import CheckContext
from pubproof.probe.judge50 import case_findings50
from pubproof.probe.steps import connected, observe, subscriber
from pubproof.reference.packets import Publish, PubRec, PubRel

#: (topic name, the broker's declarations) -> the bytes of the case
Build = Callable[[str, Declared], bytes]
#: the property identifiers the cases write (Table 2-4)
TOPIC_ALIAS = BY_KEY["topic_alias"].identifier
CONTENT_TYPE = BY_KEY["content_type"].identifier
RESPONSE_TOPIC = BY_KEY["response_topic"].identifier


def _vbi(value: int) -> bytes:
    return encode_remaining_length(value)


def publish50_bytes(
    first: int,
    topic: bytes,
    packet_id: int | None = None,
    properties: bytes = b"",
    payload: bytes = b"x",
    *,
    property_length: bytes | None = None,
    remaining_length: bytes | None = None,
) -> bytes:
    """A 5.0 PUBLISH laid out field by field, faults and all."""
    body = len(topic).to_bytes(2, "big") + topic
    if packet_id is not None:
        body += packet_id.to_bytes(2, "big")
    body += (_vbi(len(properties)) if property_length is None else property_length) + properties
    body += payload
    length = _vbi(len(body)) if remaining_length is None else remaining_length
    return bytes((first,)) + length + body


def prop_two(identifier: int, value: int) -> bytes:
    """A property with a Two Byte Integer value."""
    return bytes((identifier,)) + value.to_bytes(2, "big")


def prop_string(identifier: int, value: bytes) -> bytes:
    """A property with a UTF-8 Encoded String (or Binary Data) value, bytes as given."""
    return bytes((identifier,)) + len(value).to_bytes(2, "big") + value


def alias(value: int) -> bytes:
    """A Topic Alias property."""
    return prop_two(TOPIC_ALIAS, value)


def _t(topic: str) -> bytes:
    return topic.encode("utf-8")


def _rules(rule_id: str) -> tuple[str, ...]:
    """The rule a case breaks and those that make the broker close ([MQTT-4.13.1-1])."""
    return close_rules(rule_id, Edition.V50)


def _publish_case(build: Build) -> Run:
    def run(ctx: CheckContext) -> None:
        pub = connected(ctx, "pub")
        assert pub.connack is not None
        theirs = declared_by(pub.connack.get("properties", {}))
        pub.send_raw(build(ctx.topic(), theirs), case=True)
        observe(ctx, pub)

    return run


#: check id -> how it builds its case
BUILDS: dict[str, Build] = {}


def _case(cid: str, title: str, rule_id: str, build: Build) -> Check:
    BUILDS[cid] = build
    return Check(
        id=cid, title=title, rules=fixed(*_rules(rule_id)), run=_publish_case(build),
        judge=case_findings50,
    )  # fmt: skip


def _too_large(topic: str, theirs: Declared) -> bytes:
    """One byte over the broker's Maximum Packet Size (4 KiB of payload if it has none)."""
    head = publish50_bytes(0x30, _t(topic), payload=b"")
    size = theirs.maximum_packet_size
    payload = 4096 if size is None else size + 1 - len(head)
    for _ in range(3):  # the Remaining Length may grow by a byte with the payload
        data = publish50_bytes(0x30, _t(topic), payload=b"x" * max(payload, 0))
        if size is None or len(data) == size + 1:
            return data
        payload += size + 1 - len(data)
    return data


PUBLISH_CHECKS: tuple[Check, ...] = (
    _case(
        "wire.topic-alias-zero",
        "PUBLISH with Topic Alias 0 (DISCONNECT 0x94)",
        "MQTT-3.3.2-8",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=alias(0)),
    ),
    _case(
        "wire.topic-alias-above-maximum",
        "PUBLISH with a Topic Alias one above the broker's Topic Alias Maximum (0x94)",
        "PP50-3.3.4-topic-alias-maximum",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=alias(d.topic_alias_maximum + 1)),
    ),
    _case(
        "wire.topic-alias-unknown",
        "PUBLISH with an empty topic name and an alias never set on the connection (0x82)",
        "PP50-3.3.2-topic-alias-unknown",
        lambda t, d: publish50_bytes(0x30, b"", properties=alias(1)),
    ),
    _case(
        "wire.topic-empty-no-alias",
        "PUBLISH with an empty topic name and no Topic Alias (0x82)",
        "PP50-3.3.2-topic-or-alias",
        lambda t, d: publish50_bytes(0x30, b""),
    ),
    _case(
        "wire.topic-alias-twice",
        "PUBLISH with the Topic Alias twice (0x82)",
        "PP50-2.2.2-property-once",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=alias(1) + alias(1)),
    ),
    _case(
        "wire.content-type-twice",
        "PUBLISH with the Content Type twice (0x82)",
        "PP50-2.2.2-property-once",
        lambda t, d: publish50_bytes(
            0x30,
            _t(t),
            properties=prop_string(CONTENT_TYPE, b"a") + prop_string(CONTENT_TYPE, b"b"),
        ),
    ),
    _case(
        "wire.payload-format-twice",
        "PUBLISH with the Payload Format Indicator twice (reading pfi-mei-once)",
        "PP50-2.2.2-property-once",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=bytes.fromhex("01000100")),
    ),
    _case(
        "wire.property-unknown",
        "PUBLISH with a property PUBLISH does not have (0x11 Session Expiry Interval; 0x81)",
        "PP50-2.2.2-property-identifier",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=bytes.fromhex("1100000005")),
    ),
    _case(
        "wire.property-length-past-packet",
        "PUBLISH whose Property Length runs past the packet (0x81)",
        "PP50-2.2.2-property-length",
        lambda t, d: publish50_bytes(0x30, _t(t), property_length=b"\x10", payload=b"\x01\x00"),
    ),
    _case(
        "wire.property-value-past-section",
        "PUBLISH whose Content Type runs past the property section (0x81)",
        "PP50-2.2.2-property-value",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=b"\x03\x00\x05ab", payload=b"payload"),
    ),
    _case(
        "wire.no-property-length",
        "PUBLISH that ends after its topic name, with no Property Length (0x81)",
        "MQTT-2.2.2-1",
        lambda t, d: publish50_bytes(0x30, _t(t), property_length=b"", payload=b""),
    ),
    _case(
        "wire.rl-non-minimal",
        "PUBLISH with a Remaining Length in more bytes than needed (reading rl-encoding)",
        "MQTT-1.5.5-1",
        lambda t, d: publish50_bytes(
            0x30, _t(t), remaining_length=bytes((len(t) + 4 | 0x80, 0x00))
        ),
    ),
    _case(
        "wire.property-length-non-minimal",
        "PUBLISH with a Property Length of 0 in two bytes (80 00; reading rl-encoding)",
        "MQTT-1.5.5-1",
        lambda t, d: publish50_bytes(0x30, _t(t), property_length=b"\x80\x00"),
    ),
    _case(
        "wire.rl-five-bytes",
        "a Remaining Length of five bytes (0x81)",
        "PP50-1.5.5-four-bytes",
        lambda t, d: bytes.fromhex("30ffffffff7f"),
    ),
    _case(
        "wire.packet-too-large",
        "PUBLISH one byte over the broker's Maximum Packet Size (0x95)",
        "PP50-3.1.2-packet-too-large",
        _too_large,
    ),
    _case(
        "wire.subscription-identifier-zero",
        "PUBLISH with Subscription Identifier 0 (0x82)",
        "PP50-3.3.2-subscription-identifier-zero",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=b"\x0b\x00"),
    ),
    _case(
        "wire.payload-format-value",
        "PUBLISH with Payload Format Indicator 2 (0x82)",
        "PP50-3.3.2-payload-format-value",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=b"\x01\x02"),
    ),
    _case(
        "wire.payload-not-utf8",
        "PUBLISH with Payload Format Indicator 1 and payload FF (0x99; reading payload-utf8)",
        "PP50-3.3.2-payload-utf8",
        lambda t, d: publish50_bytes(0x30, _t(t), properties=b"\x01\x01", payload=b"\xff"),
    ),
    _case(
        "wire.publish-qos3",
        "PUBLISH with both QoS bits set (0x81)",
        "MQTT-3.3.1-4",
        lambda t, d: publish50_bytes(0x36, _t(t), 1),
    ),
    _case(
        "wire.publish-dup-qos0",
        "PUBLISH QoS 0 with DUP set (0x82; reading dup-qos0)",
        "MQTT-3.3.1-2",
        lambda t, d: publish50_bytes(0x38, _t(t)),
    ),
    _case(
        "wire.packet-id-zero",
        "PUBLISH QoS 1 with packet identifier 0 (0x82)",
        "MQTT-2.2.1-3",
        lambda t, d: publish50_bytes(0x32, _t(t), 0),
    ),
    _case(
        "wire.topic-wildcard",
        "PUBLISH topic name with '+' (0x82)",
        "MQTT-3.3.2-2",
        lambda t, d: publish50_bytes(0x30, _t(t + "/+")),
    ),
    _case(
        "wire.topic-nul",
        "PUBLISH topic name with U+0000 (0x81)",
        "MQTT-4.7.3-2",
        lambda t, d: publish50_bytes(0x30, _t(t) + b"/\x00"),
    ),
    _case(
        "wire.topic-ill-formed-utf8",
        "PUBLISH topic name with byte FF (0x81)",
        "MQTT-3.3.2-1",
        lambda t, d: publish50_bytes(0x30, _t(t) + b"/\xff"),
    ),
    _case(
        "wire.response-topic-wildcard",
        "PUBLISH with a Response Topic containing '#' (0x82)",
        "MQTT-3.3.2-14",
        lambda t, d: publish50_bytes(
            0x30, _t(t), properties=prop_string(RESPONSE_TOPIC, b"reply/#")
        ),
    ),
    _case(
        "wire.content-type-ill-formed",
        "PUBLISH with a Content Type holding byte FF (0x81)",
        "MQTT-3.3.2-19",
        lambda t, d: publish50_bytes(
            0x30, _t(t), properties=prop_string(CONTENT_TYPE, b"text\xff")
        ),
    ),
    _case(
        "wire.user-property-nul",
        "PUBLISH with a User Property whose name holds U+0000 (0x81)",
        "MQTT-1.5.7-1",
        lambda t, d: publish50_bytes(
            0x30, _t(t), properties=b"\x26" + b"\x00\x03k\x00k" + b"\x00\x01v"
        ),
    ),
)


def _alias_after_reconnect(ctx: CheckContext) -> None:
    """An alias set on one connection, used alone on the next: [MQTT-3.3.2-7] "A receiver
    MUST NOT carry forward any Topic Alias mappings from one Network Connection to
    another", so the broker holds no mapping for it (DISCONNECT 0x82)."""
    topic = ctx.topic()
    pub = connected(ctx, "pub")
    pub.send_raw(publish50_bytes(0x30, _t(topic), properties=alias(1)))
    pub.ping()
    pub.reconnect(clean=True)
    pub.send_raw(publish50_bytes(0x30, b"", properties=alias(1)), case=True)
    observe(ctx, pub)


ALIAS_ACROSS = Check(
    id="wire.topic-alias-across-connections",
    title="an alias set on one connection, used alone on the next (0x82)",
    rules=fixed("PP50-3.3.2-topic-alias-unknown", "MQTT-3.3.2-7", "MQTT-4.13.1-1"),
    run=_alias_after_reconnect,
    judge=case_findings50,
)


# -- acknowledgements: each sent where the flow calls for it, with a fault --------------

AckBuild = Callable[[int], bytes]  # packet identifier -> the bytes of the case


def _ack_case(kind: str, build: AckBuild) -> Run:
    """The subscriber answers a forwarded message (PUBACK, PUBREC, PUBCOMP), or the
    publisher releases its own (PUBREL), with the case."""

    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        if kind == "PUBREL":
            pub = connected(ctx, "pub")
            pub.hold = lambda p: isinstance(p, PubRec)
            message = pub.publish(topic, b"ack", qos=2)
            ctx.wait_for(pub, "PUBREC", lambda: bool(pub.held))
            assert message.packet_id is not None
            pub.send_raw(build(message.packet_id), case=True)
            observe(ctx, pub)
            return
        qos = 1 if kind == "PUBACK" else 2
        sub = subscriber(ctx, "sub", (topic, qos))
        if kind == "PUBCOMP":
            sub.hold = lambda p: isinstance(p, PubRel)
        else:
            sub.hold = lambda p: isinstance(p, Publish)
        pub = connected(ctx, "pub")
        pub.publish(topic, b"ack", qos=qos)
        ctx.wait_for(sub, "PUBREL" if kind == "PUBCOMP" else "PUBLISH", lambda: bool(sub.held))
        packet_id = sub.held[0].packet_id
        assert packet_id is not None
        sub.send_raw(build(packet_id), case=True)
        observe(ctx, sub)

    return run


def _ack(first: int, *rest: int) -> AckBuild:
    """An acknowledgement: first byte, packet identifier, then ``rest`` (Remaining Length
    counted)."""
    return lambda packet_id: (
        bytes((first, 2 + len(rest))) + packet_id.to_bytes(2, "big") + bytes(rest)
    )


_FIRST = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}
_REASON_RULE = {
    "PUBACK": "MQTT-3.4.2-1",
    "PUBREC": "MQTT-3.5.2-1",
    "PUBREL": "MQTT-3.6.2-1",
    "PUBCOMP": "MQTT-3.7.2-1",
}


#: check id -> the acknowledgement its case is, and how it builds it
ACK_BUILDS: dict[str, tuple[str, AckBuild]] = {}


def _ack_check(cid: str, title: str, kind: str, rule_id: str, build: AckBuild) -> Check:
    ACK_BUILDS[cid] = (kind, build)
    return Check(
        id=cid, title=title, rules=fixed(*_rules(rule_id)), run=_ack_case(kind, build),
        judge=case_findings50,
    )  # fmt: skip


ACK_CHECKS: tuple[Check, ...] = (
    *(
        _ack_check(
            f"wire.{kind.lower()}-reason-code",
            f"{kind} with Reason Code 0x05, not one of {kind}'s (0x82)",
            kind,
            _REASON_RULE[kind],
            _ack(first, 0x05),
        )
        for kind, first in _FIRST.items()
    ),
    _ack_check(
        "wire.puback-flags",
        "PUBACK with flags 0010 (0x81)",
        "PUBACK",
        "MQTT-2.1.3-1",
        _ack(0x42),
    ),
    _ack_check(
        "wire.pubrel-flags",
        "PUBREL with flags 0000 (0x81)",
        "PUBREL",
        "MQTT-3.6.1-1",
        _ack(0x60),
    ),
    _ack_check(
        "wire.puback-property-length",
        "PUBACK whose Property Length runs past the packet (0x81)",
        "PUBACK",
        "PP50-2.2.2-property-length",
        _ack(0x40, 0x00, 0x05),
    ),
    _ack_check(
        "wire.pubrec-property-unknown",
        "PUBREC with a Topic Alias property, which PUBREC does not have (0x81)",
        "PUBREC",
        "PP50-2.2.2-property-identifier",
        _ack(0x50, 0x00, 0x03, TOPIC_ALIAS, 0x00, 0x01),
    ),
)

CHECKS: tuple[Check, ...] = (*PUBLISH_CHECKS, ALIAS_ACROSS, *ACK_CHECKS)
