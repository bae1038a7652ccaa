"""The dissector's fast path (Ethernet, a 20-byte IPv4 header, TCP, with remembered
endpoints) gives exactly what the general path gives, for sound frames and for frames
whose headers are damaged or cut anywhere."""

from __future__ import annotations

import ipaddress
import struct

from hypothesis import example, given
from hypothesis import strategies as st
from support.pipeline_builder import ether, ipv4, tcp

from pubproof.pipeline import dissect as D


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    payload = draw(st.binary(max_size=40))
    body = tcp(
        draw(st.integers(0, 65535)), draw(st.sampled_from([1883, 8883, 80])),
        draw(st.integers(0, 2**32 - 1)), 0, draw(st.integers(0, 255)), payload,
    )  # fmt: skip
    src = draw(st.sampled_from(["10.0.0.1", "10.0.0.2", "192.168.1.255"]))
    frame = bytearray(ether(ipv4(src, "10.0.0.9", body, frag=draw(st.sampled_from([0, 0x4000])))))
    # ethertype, version/IHL, total length, flags/fragment, protocol, TCP data offset
    decisive = st.sampled_from([12, 13, 14, 16, 17, 20, 21, 23, 46])
    for _ in range(draw(st.integers(0, 3))):  # damage header bytes
        frame[draw(decisive | st.integers(0, len(frame) - 1))] = draw(st.integers(0, 255))
    # a snapshot length cuts the frame: anywhere, or about the end of the headers
    cut = draw(st.none() | st.integers(0, len(frame)) | st.integers(50, 80))
    return bytes(frame[:cut])


@given(frames())
def test_fast_path_equals_the_general_path(frame: bytes) -> None:
    assert D.dissect(D.ETHERNET, frame) == D._dissect(D.ETHERNET, frame)


def test_remembered_endpoints_stay_bounded() -> None:
    D._ENDPOINTS.clear()
    for port in range(D._ENDPOINTS_MAX + 10):
        frame = ether(ipv4("10.0.0.1", "10.0.0.2", tcp(port & 0xFFFF, 1883, 1, 0, 0x18, b"x")))
        segment = D.dissect(D.ETHERNET, frame)
        assert not isinstance(segment, str) and segment.sport == port & 0xFFFF
    assert len(D._ENDPOINTS) <= D._ENDPOINTS_MAX


def _sound(data_offset: int = 5, cut: int | None = None) -> bytes:
    frame = bytearray(ether(ipv4("10.0.0.1", "10.0.0.9", tcp(40000, 1883, 7, 0, 0x18, b"m" * 30))))
    frame[46] = data_offset << 4
    return bytes(frame[:cut])


@example(_sound())
@example(_sound(data_offset=4))  # a TCP header under 20 bytes: bad-header
@example(_sound(data_offset=15))  # a TCP header past the IP packet: bad-header
@example(_sound(data_offset=6, cut=56))  # the options cut by the snapshot length
@given(frames())
def test_segment_key_names_the_segments_endpoints(frame: bytes) -> None:
    """A frame with a key is a segment whose endpoints the key's 12 bytes give, so a
    reader may pass over it by its key alone (``keyed_frames`` of one partition)."""
    raw = D.segment_key(D.ETHERNET, frame)
    segment = D._dissect(D.ETHERNET, frame)
    if raw is not None:
        assert not isinstance(segment, str), segment
        assert len(raw) == 12
        sport, dport = struct.unpack(">HH", raw[8:])
        ends = (
            str(ipaddress.IPv4Address(raw[:4])),
            sport,
            str(ipaddress.IPv4Address(raw[4:8])),
            dport,
        )
        assert (segment.src, segment.sport, segment.dst, segment.dport) == ends


def test_segment_key_of_the_common_frame_only() -> None:
    assert D.segment_key(D.ETHERNET, _sound()) == _sound()[26:38]
    for damaged in (_sound(data_offset=4), _sound(data_offset=15), _sound(data_offset=6, cut=56)):
        assert isinstance(D.dissect(D.ETHERNET, damaged), str)
        assert D.segment_key(D.ETHERNET, damaged) is None
    # a segment the dissector's general way gives has no key: it is dissected
    assert (
        D.segment_key(
            D.ETHERNET, ether(ipv4("10.0.0.1", "10.0.0.9", tcp(1, 2, 3, 0, 0)), vlan=True)
        )
        is None
    )
    assert D.segment_key(D.RAW, ipv4("10.0.0.1", "10.0.0.9", tcp(1, 2, 3, 0, 0))) is None
