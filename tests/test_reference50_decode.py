"""The reference decoder in MQTT 5.0: every case of the wire contract's tables
(:mod:`wire50_cases`) rejected with its rule, offset, kind and DISCONNECT Reason Code, or
accepted with its packets, whole and in chunks; a prefix is incomplete or already the
fault, a fault is reported before the rest of the packet arrives, a large property section
is judged once as it arrives; the Reason Code and the limits only in 5.0."""

from __future__ import annotations

from typing import Any

import pytest
from support.builds import pure_only
from support.wire50_cases import ACCEPT, ALL_CASES, REJECT, V50, pub, s, verdict

from pubproof.model.editions import Edition, Limits
from pubproof.reference import (
    NEED_DATA,
    Decoder,
    IncompleteStream,
    MalformedPacket,
    ProtocolViolation,
    PubAck,
    Publish,
    decode_all,
    encode,
    to_p,
)
from pubproof.reference.properties import AckProperties, PublishProperties


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
