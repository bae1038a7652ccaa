"""The reference encoder in MQTT 5.0: the shortest forms (of every acknowledgement's
Reason Code, of the Variable Byte Integers), every property in the contract's order,
round trips, and the refusal of what a 5.0 sender may not send."""

from __future__ import annotations

from typing import Any

import pytest
from support.wire50_cases import ACK_TYPES, ALIASES, CODES, V50, pub, s, verdict

from pubproof.model.editions import Edition, Limits
from pubproof.reference import (
    InvalidPacket,
    PubAck,
    PubComp,
    Publish,
    PubRel,
    decode_all,
    encode,
    from_p,
    to_p,
)
from pubproof.reference.properties import AckProperties, PublishProperties


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
