"""Packets validate themselves; the encoder refuses what the edition forbids."""

from __future__ import annotations

import dataclasses

import pytest

from pubproof.model.editions import Edition
from pubproof.reference import InvalidPacket, PubAck, Publish, PubRel, encode, from_p, to_p


def test_packets_are_frozen_slotted_keyword_only() -> None:
    packet = Publish(topic="a", qos=1, packet_id=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        packet.qos = 2  # type: ignore[misc]
    assert not hasattr(packet, "__dict__")
    with pytest.raises(TypeError):
        Publish("a")  # type: ignore[call-arg]  # deliberately positional: keyword-only


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"topic": "a", "qos": 0, "packet_id": 1}, "MQTT-2.3.1-5"),
        ({"topic": "a", "qos": 1}, "MQTT-2.3.1-5"),
        ({"topic": "a", "qos": 1, "packet_id": 0}, "MQTT-2.3.1-1"),
        ({"topic": "a", "qos": 2, "packet_id": 65536}, "MQTT-2.3.1-1"),
        ({"topic": "a", "qos": 4, "packet_id": 1}, "MQTT-3.3.1-4"),
        ({"topic": "\ud800"}, "MQTT-1.5.3-1"),
        ({"topic": "é" * 32768}, "MQTT-4.7.3-3"),
        ({"topic": b"a"}, "MQTT-1.5.3-1"),
        ({"topic": "a", "payload": "text"}, "PP311-3.3.3-payload"),
        ({"topic": "a", "dup": 1}, "MQTT-3.3.1-2"),
    ],
)
def test_construction_rejects(kwargs: dict[str, object], rule: str) -> None:
    with pytest.raises(InvalidPacket) as raised:
        Publish(**kwargs)  # type: ignore[arg-type]
    assert raised.value.rule == rule


@pytest.mark.parametrize(
    ("packet", "edition", "readings", "rule"),
    [
        (Publish(topic="a/+"), Edition.V311, {}, "MQTT-3.3.2-2"),
        (Publish(topic=""), Edition.V311, {}, "MQTT-4.7.3-1"),
        (Publish(topic="a\x00"), Edition.V311, {}, "MQTT-1.5.3-2"),
        (Publish(topic="a", dup=True), Edition.V311, {}, "MQTT-3.3.1-2"),
        (Publish(topic="a", qos=3, packet_id=1), Edition.V311, {}, "MQTT-3.3.1-4"),
        (Publish(topic="a", qos=3, packet_id=1), Edition.V31, {}, "PP31-2.1-qos-reserved"),
        (Publish(topic="#"), Edition.V31, {"topic-rules": "as-3.1.1"}, "PP31-3.3-topic-wildcards"),
        (
            Publish(topic="a\x01"),
            Edition.V311,
            {"discouraged-code-points": "reject"},
            "PP311-1.5.3-discouraged-code-points",
        ),
    ],
)
def test_encode_refuses_what_the_edition_forbids(
    packet: Publish, edition: Edition, readings: dict[str, str], rule: str
) -> None:
    with pytest.raises(InvalidPacket) as raised:
        encode(packet, edition=edition, readings=readings)
    assert raised.value.rule == rule


def test_readings_that_allow_are_honoured() -> None:
    assert encode(Publish(topic="#", dup=True), edition=Edition.V31) == b"\x38\x03\x00\x01#"
    assert (
        encode(
            Publish(topic="a", qos=3, packet_id=1), edition=Edition.V31, readings={"qos3": "accept"}
        )[0]
        == 0x36
    )


def test_the_worked_example_encodes_as_the_figure_draws_it() -> None:
    assert encode(Publish(topic="a/b", qos=1, packet_id=10)) == bytes.fromhex("32070003612f62000a")
    assert encode(PubRel(packet_id=10)) == bytes.fromhex("6202000a")


def test_p_round_trip() -> None:
    for packet in (Publish(topic="a/b", qos=1, packet_id=10, payload=b"hi"), PubAck(packet_id=0)):
        assert from_p(to_p(packet)) == packet
    with pytest.raises(InvalidPacket):
        from_p({"type": "PUBLISH", "topic": "a", "extra": 1})
    with pytest.raises(InvalidPacket):
        from_p({"type": "CONNECT"})
    with pytest.raises(InvalidPacket):
        from_p({"type": "PUBLISH", "topic": "a", "payload_hex": "zz"})
    with pytest.raises(InvalidPacket):
        from_p([1, 2])
