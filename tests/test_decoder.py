"""The reference decoder as a receiver meets it: any bytes, any chunks, bounded memory."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.strategies import edition_and_readings

from pubproof.model.editions import Edition
from pubproof.reference import (
    NEED_DATA,
    Decoder,
    IncompleteStream,
    MalformedPacket,
    ProtocolError,
    ProtocolViolation,
    PubAck,
    Publish,
    decode_all,
    encode,
)


@given(edition_and_readings(), st.lists(st.binary(max_size=40), max_size=6))
def test_raises_only_protocol_errors_on_any_bytes(
    setting: tuple[Edition, dict[str, str]], chunks: list[bytes]
) -> None:
    edition, readings = setting
    decoder = Decoder(edition=edition, readings=readings)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            for _ in decoder:
                pass
        decoder.close()
    except ProtocolError as error:
        assert error.rule
        assert error.offset is not None and 0 <= error.offset <= sum(map(len, chunks))
        assert error.edition == edition.value
        assert error.message


def test_a_declared_huge_packet_reserves_nothing() -> None:
    """A PUBLISH that declares 268,435,455 bytes: the decoder holds only what arrived."""
    header = b"\x30\xff\xff\xff\x7f" + b"\x00\x03a/b"
    decoder = Decoder()
    tracemalloc.start()
    try:
        decoder.feed(header)
        assert decoder.next_packet() is NEED_DATA
        for _ in range(64):
            decoder.feed(b"\x00" * 1024)
            assert decoder.next_packet() is NEED_DATA
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert decoder.buffered == len(header) + 64 * 1024
    assert peak < 2 * 1024 * 1024  # what was received (64 KiB) and change, not 256 MB


def test_a_bad_topic_is_reported_before_the_payload_arrives() -> None:
    decoder = Decoder()
    decoder.feed(b"\x30\xff\xff\xff\x7f\x00\x03a+b")
    with pytest.raises(ProtocolViolation) as raised:
        decoder.next_packet()
    assert (raised.value.rule, raised.value.offset) == ("MQTT-3.3.2-2", 8)


def test_errors_are_sticky_like_a_closed_connection() -> None:
    decoder = Decoder()
    decoder.feed(b"\x36\x00")
    with pytest.raises(MalformedPacket) as first:
        decoder.next_packet()
    decoder.feed(b"\x40\x02\x00\x01")
    with pytest.raises(MalformedPacket) as again:
        decoder.next_packet()
    assert again.value is first.value
    with pytest.raises(MalformedPacket):
        decoder.close()


def test_close_reports_a_stream_that_ends_inside_a_packet() -> None:
    decoder = Decoder()
    decoder.feed(encode(PubAck(packet_id=5)) + b"\x32\x09\x00\x03a/")
    assert list(decoder) == [PubAck(packet_id=5)]
    with pytest.raises(IncompleteStream) as raised:
        decoder.close()
    assert (raised.value.rule, raised.value.offset) == ("incomplete", 4)


def test_close_on_a_clean_boundary_is_quiet_and_offsets_count_the_whole_stream() -> None:
    decoder = Decoder()
    packet = Publish(topic="t", qos=2, packet_id=9, payload=b"x" * 300)
    data = encode(packet) * 3
    for at in range(0, len(data), 7):
        decoder.feed(data[at : at + 7])
    assert list(decoder) == [packet] * 3
    assert decoder.offset == len(data)
    decoder.close()


def test_what_lies_past_a_packet_belongs_to_the_next() -> None:
    one = encode(Publish(topic="a", payload=b"12"))
    two = encode(PubAck(packet_id=1))
    assert decode_all(one + two) == [Publish(topic="a", payload=b"12"), PubAck(packet_id=1)]


def test_offsets_survive_buffer_compaction() -> None:
    good = encode(Publish(topic="ok", qos=1, packet_id=1, payload=b"p" * 50))
    decoder = Decoder()
    for _ in range(100):
        decoder.feed(good[:20])
        decoder.feed(good[20:])
        assert isinstance(decoder.next_packet(), Publish)
    decoder.feed(b"\x30\x04\x00\x02a#")
    with pytest.raises(ProtocolViolation) as raised:
        decoder.next_packet()
    assert raised.value.offset == 100 * len(good) + 5
