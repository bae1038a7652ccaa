"""The 5.0 fields of the reference's packets and properties, which validate themselves,
and their ``P`` form."""

from __future__ import annotations

from typing import Any

import pytest

from pubproof.reference import InvalidPacket, PubAck, Publish, PubRec, from_p, to_p
from pubproof.reference.properties import AckProperties, PublishProperties


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
