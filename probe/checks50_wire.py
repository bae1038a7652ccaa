"""MQTT 5.0 wire checks: PUBLISH packets and acknowledgements the model rejects (or judges
only under a reading), each sent to the broker on a connection whose CONNACK declared the
broker's limits. Must the broker close the connection, and with which DISCONNECT Reason
Code?

A check sends one *case*, then PINGREQ, and reads until PINGRESP or the end of the
connection. :func:`pubproof.probe.judge50.case_findings50` judges the outcome: the model's
decoding of the case with the broker's Topic Alias Maximum and Maximum Packet Size (and
under every reading), and for a case the wire format accepts, the 5.0 Topic Alias tables.

The cases the 3.x catalog has too (the QoS bits, DUP at QoS 0, packet identifier 0, the
topic name's '+' (here ``wire.topic-wildcard``), U+0000 and byte FF, the Remaining
Length's encodings, PUBACK's and PUBREL's flags) are not written here: they are the
shared definitions of :mod:`pubproof.probe.checks_wire`
(:data:`~pubproof.probe.checks_wire.SHARED`), laid out for 5.0 with an empty property
section, their titles naming the Reason Code.
"""

from __future__ import annotations

from collections.abc import Callable

from pubproof.judge.close import close_rules
from pubproof.judge.limits import Declared
from pubproof.model.editions import Edition
from pubproof.model.properties50 import BY_KEY
from pubproof.probe.check import Check, fixed
from pubproof.probe.checks_wire import (
    ACK_FLAGS,
    ACK_TYPE,
    PACKET_ID_ZERO,
    PUBLISH_DUP_QOS0,
    PUBLISH_QOS3,
    RL_FIVE_BYTES,
    RL_NON_MINIMAL,
    TOPIC_ILL_FORMED,
    TOPIC_NUL,
    TOPIC_PLUS,
    AckBuild,
    AckCase,
    PublishCase,
    ack_bytes,
    ack_case,
    publish_bytes,
    publish_case,
)
from pubproof.probe.context import CheckContext
from pubproof.probe.judge50 import case_findings50
from pubproof.probe.steps import connected, observe

V50 = Edition.V50
#: (topic name, the broker's declarations) -> the bytes of the case
Build = Callable[[str, Declared], bytes]
#: the property identifiers the cases write (Table 2-4)
TOPIC_ALIAS = BY_KEY["topic_alias"].identifier
CONTENT_TYPE = BY_KEY["content_type"].identifier
RESPONSE_TOPIC = BY_KEY["response_topic"].identifier


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
    """A 5.0 PUBLISH laid out field by field, faults and all (:func:`~pubproof.probe.
    checks_wire.publish_bytes` with its property section)."""
    return publish_bytes(
        first, topic, packet_id, payload, edition=V50, properties=properties,
        property_length=property_length, remaining_length=remaining_length,
    )  # fmt: skip


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


#: check id -> how it builds its case
BUILDS: dict[str, Build] = {}


def _case(cid: str, title: str, rule_id: str, build: Build) -> Check:
    BUILDS[cid] = build
    return Check(
        id=cid, title=title, rules=fixed(*_rules(rule_id)), run=publish_case(build),
        judge=case_findings50,
    )  # fmt: skip


def _take(case: PublishCase) -> Check:
    """A case both catalogs have (:mod:`pubproof.probe.checks_wire`): its 5.0 check, its
    build recorded."""
    BUILDS[case.v50.id] = case.built(V50)
    return case.v50


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
    _take(RL_NON_MINIMAL),
    _case(
        "wire.property-length-non-minimal",
        "PUBLISH with a Property Length of 0 in two bytes (80 00; reading rl-encoding)",
        "MQTT-1.5.5-1",
        lambda t, d: publish50_bytes(0x30, _t(t), property_length=b"\x80\x00"),
    ),
    _take(RL_FIVE_BYTES),
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
    _take(PUBLISH_QOS3),
    _take(PUBLISH_DUP_QOS0),
    _take(PACKET_ID_ZERO),
    _take(TOPIC_PLUS),
    _take(TOPIC_NUL),
    _take(TOPIC_ILL_FORMED),
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
        id=cid, title=title, rules=fixed(*_rules(rule_id)), run=ack_case(kind, build),
        judge=case_findings50,
    )  # fmt: skip


def _take_ack(case: AckCase) -> Check:
    """An acknowledgement case both catalogs have: its 5.0 check, its build recorded."""
    ACK_BUILDS[case.v50.id] = (case.kind, case.build)
    return case.v50


ACK_CHECKS: tuple[Check, ...] = (
    *(
        _ack_check(
            f"wire.{kind.lower()}-reason-code",
            f"{kind} with Reason Code 0x05, not one of {kind}'s (0x82)",
            kind,
            _REASON_RULE[kind],
            ack_bytes(first, 0x05),
        )
        for kind, first in ACK_TYPE.items()
    ),
    _take_ack(ACK_FLAGS["PUBACK"]),
    _take_ack(ACK_FLAGS["PUBREL"]),
    _ack_check(
        "wire.puback-property-length",
        "PUBACK whose Property Length runs past the packet (0x81)",
        "PUBACK",
        "PP50-2.2.2-property-length",
        ack_bytes(0x40, 0x00, 0x05),
    ),
    _ack_check(
        "wire.pubrec-property-unknown",
        "PUBREC with a Topic Alias property, which PUBREC does not have (0x81)",
        "PUBREC",
        "PP50-2.2.2-property-identifier",
        ack_bytes(0x50, 0x00, 0x03, TOPIC_ALIAS, 0x00, 0x01),
    ),
)

CHECKS: tuple[Check, ...] = (*PUBLISH_CHECKS, ALIAS_ACROSS, *ACK_CHECKS)
