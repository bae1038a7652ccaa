"""The 5.0 decoder's fast path on what the capture pipeline feeds it most: whole packets
with a Remaining Length of two to four bytes, and PUBLISH packets whose topic name is
empty because a Topic Alias stands for it. Iteration (the fast path where it can) must
give exactly the packets and errors of ``next_packet`` (always judging), at the same
offsets, whole and chunked: among them the Remaining Lengths that are not the shortest
form, a fourth byte with its continuation bit, a packet one byte over the receiver's
Maximum Packet Size, and an empty topic name without an alias. The two paths agree on
every case of the wire contract's tables too (:mod:`wire50_cases`), and the fast path's
memory of the property sections it has judged is bounded and serves every receiver.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.wire50_cases import ALIASES, ALL_CASES, pub, s

from pubproof.model.editions import Edition, Limits
from pubproof.reference import (
    NEED_DATA,
    Decoder,
    ProtocolError,
    ProtocolViolation,
    decode_all,
    encode,
    fast50,
)
from pubproof.reference.common import Whole5
from pubproof.reference.fast50 import whole_of
from pubproof.reference.packets import PubAck, PubComp, Publish, PubRec, PubRel
from pubproof.reference.properties import AckProperties, PublishProperties

V50 = Edition.V50


def _string(text: str) -> bytes:
    data = text.encode()
    return len(data).to_bytes(2, "big") + data


def _rl(value: int, extra: int = 0) -> bytes:
    """``value`` as a Variable Byte Integer, ``extra`` bytes longer than the shortest."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value or extra else 0))
        if not value:
            break
    for number in range(extra):
        out.append(0x80 if number < extra - 1 else 0x00)
    return bytes(out)


def _publish(
    topic: str, payload: bytes, properties: bytes, *, qos: int = 1, extra: int = 0
) -> bytes:
    body = _string(topic) + (b"\x00\x07" if qos else b"")
    body += _rl(len(properties)) + properties + payload
    return bytes((0x30 | qos << 1,)) + _rl(len(body), extra) + body


ALIAS = b"\x23\x00\x02"
USER = b"\x26" + _string("k") + _string("v")
CASES: list[tuple[str, bytes, Limits]] = []
for size in (10, 120, 200, 20_000, 2_100_000):
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    wide = Limits(topic_alias_maximum=5)
    CASES += [
        (f"topic and alias, {size}", _publish("a/b", payload, ALIAS + USER), wide),
        (f"alias only, {size}", _publish("", payload, ALIAS), wide),
        (f"alias only, QoS 0, {size}", _publish("", payload, ALIAS + USER, qos=0), wide),
        (f"empty topic, no alias, {size}", _publish("", payload, USER), wide),
        (f"alias above the maximum, {size}", _publish("", payload, b"\x23\x00\x09"), wide),
        (f"one byte longer than needed, {size}", _publish("a", payload, USER, extra=1), wide),
    ]
    packet = _publish("a/b", payload, USER)
    CASES += [
        (f"at the Maximum Packet Size, {size}", packet, Limits(maximum_packet_size=len(packet))),
        (f"over it, {size}", packet, Limits(maximum_packet_size=len(packet) - 1)),
    ]


def _ack(first: int, code: int, section: bytes, *, length: bytes | None = None) -> bytes:
    """A 5.0 acknowledgement with identifier 7, ``code`` and a property section
    (``length``: its Property Length as sent, when not the section's)."""
    body = b"\x00\x07" + bytes((code,)) + (_rl(len(section)) if length is None else length)
    return bytes((first,)) + _rl(len(body + section)) + body + section


REASON = b"\x1f" + _string("quota exceeded")
ACK_CASES: list[tuple[str, bytes]] = [
    ("PUBACK 0x97 with a Reason String", _ack(0x40, 0x97, REASON)),
    ("PUBREC 0x10 with User Properties", _ack(0x50, 0x10, USER + USER)),
    ("PUBREL 0x92 with both", _ack(0x62, 0x92, USER + REASON + USER)),
    ("PUBCOMP 0x00, Property Length 0", _ack(0x70, 0x00, b"")),
    ("PUBACK, a Reason String twice", _ack(0x40, 0x80, REASON + REASON)),
    ("PUBACK, a Reason String with U+0000", _ack(0x40, 0x80, b"\x1f" + _string("a\x00"))),
    ("PUBACK, a Reason String not UTF-8", _ack(0x40, 0x80, b"\x1f\x00\x01\xff")),
    ("PUBACK, a User Property cut short", _ack(0x40, 0x80, b"\x26\x00\x01k\x00\x05v")),
    ("PUBACK, a Topic Alias", _ack(0x40, 0x80, b"\x23\x00\x01a")),
    ("PUBACK, a Reason Code of PUBCOMP's", _ack(0x40, 0x92, REASON)),
    ("PUBACK, the Property Length short", _ack(0x40, 0x80, REASON, length=b"\x03")),
    ("PUBACK, the Property Length long", _ack(0x40, 0x80, REASON, length=b"\x7f")),
    ("PUBACK, the Property Length not shortest", _ack(0x40, 0x80, REASON, length=b"\x90\x00")),
    (  # a first byte of 0x81: the Property Length goes on (3969), past the packet
        "PUBACK, a Property Length of two bytes",
        _ack(0x40, 0x80, b"\x1f" + _string("x" * 126), length=b"\x81"),
    ),
    ("PUBACK, a Disallowed code point", _ack(0x40, 0x80, b"\x1f" + _string("\x01"))),
]
CASES += [(name, data, Limits()) for name, data in ACK_CASES]
CASES += [
    ("a fourth byte with its continuation bit", b"\x32\xff\xff\xff\xff\x01" + bytes(8), Limits()),
    ("three bytes, the last zero", b"\x32\x80\x80\x00", Limits()),
    ("acknowledgement with a long Remaining Length", b"\x40\x80\x01" + bytes(128), Limits()),
]


def _outcome(decoder: Decoder, chunks: list[bytes], *, iterate: bool) -> list[Any]:
    out: list[Any] = []
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            if iterate:
                out.extend(decoder)
            else:
                while (item := decoder.next_packet()) is not NEED_DATA:
                    out.append(item)
        decoder.close()
    except ProtocolError as error:
        out.append((error.rule, error.offset))
    return out


@pytest.mark.parametrize(("name", "data", "limits"), CASES, ids=[c[0] for c in CASES])
def test_iteration_is_next_packet(name: str, data: bytes, limits: Limits) -> None:
    stream = data + data  # a second packet after the first: where the first ends counts
    # chunked finely only where that stays quick (a 2 MB packet 7 bytes at a time is slow)
    for size in (len(stream), 4096, 7) if len(stream) < 100_000 else (len(stream), 65536):
        chunks = [stream[at : at + size] for at in range(0, len(stream), size)]
        fast = _outcome(Decoder(edition=V50, limits=limits), chunks, iterate=True)
        slow = _outcome(Decoder(edition=V50, limits=limits), chunks, iterate=False)
        assert fast == slow, (name, size)


#: the cases the fast path takes whole (every other one is judged by ``next_packet``)
TAKEN = (
    "topic and alias", "alias only", "at the Maximum Packet Size", "PUBACK 0x97", "PUBREC 0x10",
    "PUBREL 0x92", "PUBCOMP 0x00", "PUBACK, a Disallowed",
)  # fmt: skip


@pytest.mark.parametrize(("name", "data", "limits"), CASES, ids=[c[0] for c in CASES])
def test_whole_packet_is_feed_then_iteration(name: str, data: bytes, limits: Limits) -> None:
    """``whole5`` (the capture pipeline's call for a framed packet) gives what ``feed``
    and iteration give, and leaves the decoder as they leave it: the next packet's
    outcome (its error's offset too) is the same. Where it does not take the bytes (not
    one whole packet, a doubt, something buffered) it changes nothing."""
    lead = _publish("x", b"lead", USER)  # taken before: the stream offsets are not 0
    for stream in (data, data + data, data[:-1]):  # one packet; two; one cut short
        whole = Decoder(edition=V50, limits=limits)
        fed = Decoder(edition=V50, limits=limits)
        for decoder in (whole, fed):
            decoder.feed(lead)
            assert len(list(decoder)) == 1
        packet = whole.whole5(stream)
        if stream is data and name.startswith(TAKEN):
            assert packet is not None, name
        fed.feed(stream)
        if packet is None:
            whole.feed(stream)  # unchanged: as if whole5 had not been called
        else:
            assert stream is data
            assert packet == next(iter(fed))
        assert whole.offset == fed.offset and whole.buffered == fed.buffered
        after = [data[:3], data[3:]]  # the next packet, in two parts
        assert _outcome(whole, after, iterate=True) == _outcome(fed, after, iterate=True)


def _fields(whole: Whole5) -> tuple[Any, ...]:
    return (whole.kind, whole.topic, whole.payload, whole.qos, whole.packet_id, whole.dup,
            whole.retain, whole.reason_code, whole.properties, whole.topic_alias)  # fmt: skip


@pytest.mark.parametrize(("name", "data", "limits"), CASES, ids=[c[0] for c in CASES])
def test_the_record_is_the_packet(name: str, data: bytes, limits: Limits) -> None:
    """``scan_whole5`` (the capture pipeline's call: the fast path's record, no packet
    object) takes what ``whole5`` takes, with the fields of the packet ``whole5`` gives
    (``whole_of``), and leaves the decoder as ``whole5`` leaves it; where it does not take
    the bytes it changes nothing. The record is the decoder's own, filled anew."""
    scanning, whole = Decoder(edition=V50, limits=limits), Decoder(edition=V50, limits=limits)
    record = scanning.scan_whole5(data)
    packet = whole.whole5(data)
    assert (record is None) == (packet is None), name
    assert (scanning.offset, scanning.buffered) == (whole.offset, whole.buffered)
    if packet is None:
        return
    assert record is not None
    expected = whole_of(packet)
    assert _fields(record) == _fields(expected)
    alias = (
        packet.properties.topic_alias
        if isinstance(packet, Publish) and packet.properties is not None
        else None
    )
    assert record.topic_alias == alias
    assert record.kind == data[0] >> 4
    properties = record.properties
    assert scanning.scan_whole5(data) is record  # one record per decoder, filled anew
    assert record.properties is properties  # the section memory's one object


def test_a_record_from_the_judging_path() -> None:
    """``whole_of`` on what the judging path decodes: every field, each acknowledgement
    type's number, a PUBLISH's Topic Alias from its properties."""
    props = PublishProperties(topic_alias=3, content_type="text/plain")
    publish = Publish(topic="a/b", payload=b"x", qos=2, packet_id=9, dup=True, retain=True,
                      properties=props)  # fmt: skip
    assert _fields(whole_of(publish)) == (3, "a/b", b"x", 2, 9, True, True, 0, props, 3)
    assert whole_of(Publish(topic="t", properties=None)).topic_alias is None
    reason = AckProperties(reason_string="no")
    for kind, cls in ((4, PubAck), (5, PubRec), (6, PubRel), (7, PubComp)):
        code = 0x92 if cls in (PubRel, PubComp) else 0x80
        ack = cls(packet_id=5, reason_code=code, properties=reason)
        assert _fields(whole_of(ack)) == (kind, "", b"", 0, 5, False, False, code, reason, None)


def _buffer_type(decoder: Decoder) -> type:
    return type(decoder._buf)


def test_a_bytearray_buffer_is_judged_and_gives_the_same_packets() -> None:
    """A long packet that grew in place leaves a bytearray buffer, which the fast path
    (it reads bytes) leaves to ``next_packet``; what follows the packet it takes is bytes
    again, for the fast path, at the same stream offsets: the packets and an error's
    offset are those of the stream fed at once."""
    big = _publish("a/b", bytes(5000), USER)
    small = _publish("c", b"hi", USER)
    bad = _publish("", b"x", USER)  # an empty topic name and no alias
    expected = _outcome(Decoder(edition=V50), [big + small + small + bad], iterate=False)
    decoder = Decoder(edition=V50)
    decoder.feed(big[:100])
    assert list(decoder) == []
    decoder.feed(big[100:] + small + small)  # grows in place: nothing was consumed
    assert _buffer_type(decoder) is bytearray
    packets = iter(decoder)
    assert next(packets) == expected[0]
    assert _buffer_type(decoder) is bytes  # the rest, for the fast path
    assert list(packets) == expected[1:3]
    assert decoder.offset == len(big + small + small)
    assert _outcome(decoder, [bad], iterate=True) == expected[3:]
    assert expected[3][1] == len(big + small + small) + 2  # the error's stream offset


def test_whole_packet_not_after_an_error_or_with_bytes_buffered() -> None:
    packet = _publish("a/b", b"hi", ALIAS, qos=1)
    wide = Limits(topic_alias_maximum=5)
    buffered = Decoder(edition=V50, limits=wide)
    buffered.feed(packet[:4])
    assert buffered.whole5(packet) is None
    assert buffered.buffered == 4
    failed = Decoder(edition=V50)  # no alias allowed: the packet is an error
    failed.feed(packet)
    with pytest.raises(ProtocolError):
        list(failed)
    valid = _publish("a/b", b"hi", USER)
    assert Decoder(edition=V50).whole5(valid) is not None
    assert failed.whole5(valid) is None  # the decoder keeps raising its error


@pytest.mark.parametrize("reject", [False, True])
def test_acknowledgement_sections_by_reading(reject: bool) -> None:
    """The fast path's acknowledgement sections are kept per reading of Disallowed code
    points: a section one reading accepts and the other rejects is judged by each as
    itself, whichever came first; an accepted section is one object for every packet."""
    data = _ack(0x40, 0x80, b"\x1f" + _string("\x01") + USER)
    strict = {"discouraged-code-points": "reject"}
    order = [strict, None] if reject else [None, strict]
    for readings in order + order:
        chunks = [data + data]
        fast = _outcome(Decoder(edition=V50, readings=readings), chunks, iterate=True)
        slow = _outcome(Decoder(edition=V50, readings=readings), chunks, iterate=False)
        assert fast == slow
        assert len(fast) == (1 if readings else 2)  # rejected at once, or two packets
        if readings is None:
            assert fast[0].properties is fast[1].properties
            assert fast[0].properties.reason_string == "\x01"


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
