"""The dissector's fast path (Ethernet, a 20-byte IPv4 header, TCP, with remembered
endpoints) gives exactly what the general path gives, for sound frames and for frames
whose headers are damaged or cut anywhere."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pipeline_builder import ether, ipv4, tcp

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
