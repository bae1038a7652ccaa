"""One captured frame taken apart: link layer, IPv4 or IPv6, TCP.

:func:`dissect` returns a :class:`~pubproof.pipeline.dissect.Segment` (the TCP segment, its
endpoints and the payload bytes actually captured) or the reason the frame is no TCP
segment, which puts it in quarantine: ``unsupported-link-type``, ``not-ip``, ``not-tcp``,
``ip-fragment``, ``truncated-header`` (the snapshot length cut the headers themselves),
``bad-header``.

Link types (tcpdump.org ``LINKTYPE_`` numbers): Ethernet (1, with 802.1Q/802.1ad VLAN tags),
Linux cooked SLL (113) and SLL2 (276), BSD null/loopback (0, address family in the
capturing host's byte order, so both are accepted), OpenBSD loop (108, network order), and
raw IP (101, 228 IPv4, 229 IPv6). IPv6 extension headers (hop-by-hop, routing,
destination options, AH) are skipped; a fragment header quarantines the frame.

A frame the snapshot length cut (caplen < len) still gives its segment: ``payload`` is
what was captured, ``payload_len`` what the TCP segment carried; the rest is a gap.
"""

from __future__ import annotations

import ipaddress
import struct
from typing import Any, Final, NamedTuple

from pubproof.pipeline.fast.layout import new_tuple

ETHERNET: Final = 1
RAW: Final = 101
LINUX_SLL: Final = 113
LINUX_SLL2: Final = 276
NULL: Final = 0
LOOP: Final = 108
RAW_IPV4: Final = 228
RAW_IPV6: Final = 229
_VLAN = (0x8100, 0x88A8, 0x9100)
_ETH_IPV4: Final = 0x0800
_ETH_IPV6: Final = 0x86DD
_AF_INET6 = (10, 24, 28, 30)  # Linux, NetBSD/OpenBSD, FreeBSD, Darwin
_IPV6_SKIP = (0, 43, 60)  # hop-by-hop, routing, destination options: (len + 1) * 8 bytes
_IPV6_AH, _IPV6_FRAGMENT = 51, 44
FIN: Final = 0x01
SYN: Final = 0x02
RST: Final = 0x04
ACK: Final = 0x10


class Segment(NamedTuple):
    """A TCP segment as captured. (A NamedTuple, not a dataclass: millions of these are
    pickled between Spark workers, and tuples pickle smallest and fastest.)"""

    src: str  # address as text ("10.0.0.1", "[::1]")
    sport: int
    dst: str
    dport: int
    seq: int
    flags: int
    payload: bytes  # the captured part of the payload
    payload_len: int  # the payload the segment carried (more when the snapshot cut it)


#: a Segment made by ``tuple.__new__``, once per frame (:mod:`pubproof.pipeline.fast.layout`)
_new: Final = new_tuple

#: endpoints seen lately: the 12 bytes of IPv4 source, destination and TCP ports -> the
#: segment's (src, sport, dst, dport); bounded (cleared when full), so memory is too
_ENDPOINTS: Final[dict[bytes, tuple[str, int, str, int]]] = {}
_ENDPOINTS_MAX: Final = 1 << 16
_ETH_IPV4_TCP: Final = struct.Struct(">12xHBxH2xHxB")  # ethertype, version/IHL, total, frag, proto
_TCP_FIXED: Final = struct.Struct(">I4xB")  # sequence number, (skip ack), data offset
# their unpack_from bound once: the compiled build calls a Final callable directly, where
# a method of a Struct is looked up at every call (once per frame each)
_ETH_IPV4_TCP_UNPACK: Final = _ETH_IPV4_TCP.unpack_from
_TCP_FIXED_UNPACK: Final = _TCP_FIXED.unpack_from


#: the class, as a Final name: the compiled build reads it as a C static once per frame
_SEGMENT: Final = Segment


def dissect(linktype: int, data: bytes) -> Segment | str:
    """The TCP segment in one frame, or the reason there is none."""
    if linktype == ETHERNET and len(data) >= 54:
        # the common case first: Ethernet, IPv4 without options, TCP, not a fragment
        # (typed: machine integers in the compiled build, not objects compared)
        ethertype: int
        first: int
        total: int
        fragment: int
        protocol: int
        ethertype, first, total, fragment, protocol = _ETH_IPV4_TCP_UNPACK(data)
        if ethertype == _ETH_IPV4 and first == 0x45 and protocol == 6:
            if total < 20:
                return "bad-header"
            if fragment & 0x3FFF:  # More Fragments, or a fragment offset
                return "ip-fragment"
            return _ipv4_tcp(data, total)
    return _dissect(linktype, data)


def segment_key(linktype: int, data: bytes) -> bytes | None:
    """The 12 bytes (IPv4 source and destination, TCP ports) that give the endpoints of the
    segment :func:`dissect` returns when it takes its common way (Ethernet, IPv4 without
    options, TCP, not a fragment, the headers whole); None for any other frame, which may
    still be a segment. A reader uses it to pass over a frame of a 4-tuple it does not
    track without dissecting it."""
    if linktype != ETHERNET or len(data) < 54:
        return None
    return _key(data, len(data))


def segment_key_at(buffer: Any, start: int, size: int) -> bytes | None:
    """:func:`segment_key` of the Ethernet frame of ``size`` bytes at ``start`` in
    ``buffer`` (bytes, or a capture file's memory map), copying its first 47 bytes only."""
    if size < 54:
        return None
    head: bytes = buffer[start : start + 47]
    return _key(head, size)


def _key(head: bytes, size: int) -> bytes | None:
    """:func:`segment_key` of a frame of ``size`` bytes that begins with ``head`` (47
    bytes or more), byte by byte (no tuple of fields)."""
    # Ethernet type IPv4, version 4 with a 20-byte header, protocol TCP
    if head[12] != 0x08 or head[13] != 0x00 or head[14] != 0x45 or head[23] != 6:
        return None
    if head[20] & 0x3F or head[21]:  # More Fragments, or a fragment offset
        return None
    total = head[16] << 8 | head[17]
    header = (head[46] >> 4) * 4
    # the checks of _ipv4_tcp: a TCP header of 20 bytes or more, within the IP packet
    # (34 + header <= 14 + total) and captured whole
    if total < 20 or header < 20 or 20 + header > total or size < 34 + header:
        return None
    return head[26:38]


def _ipv4_tcp(data: bytes, total: int) -> Segment | str:
    """Ethernet + a 20-byte IPv4 header + TCP: the same answer as ``_ipv4(data, 14)``."""
    key = data[26:38]
    endpoints = _ENDPOINTS.get(key)
    if endpoints is None:
        if len(_ENDPOINTS) >= _ENDPOINTS_MAX:
            _ENDPOINTS.clear()
        sport, dport = struct.unpack_from(">HH", data, 34)
        endpoints = _ENDPOINTS[key] = (_v4(data[26:30]), sport, _v4(data[30:34]), dport)
    seq: int  # typed: machine integers in the compiled build (once per frame)
    offset: int
    seq, offset = _TCP_FIXED_UNPACK(data, 38)
    header = (offset >> 4) * 4
    end = 14 + total
    if header < 20 or 34 + header > end:
        return "bad-header"
    if len(data) < 34 + header:
        return "truncated-header"
    src, sport, dst, dport = endpoints
    payload = data[34 + header : end]
    return _new(_SEGMENT, (src, sport, dst, dport, seq, data[47], payload, end - 34 - header))


def _dissect(linktype: int, data: bytes) -> Segment | str:
    size = len(data)
    if linktype == ETHERNET:
        if size < 14:
            return "truncated-header"
        ethertype = data[12] << 8 | data[13]
        start = 14
        while ethertype in _VLAN:
            if size < start + 4:
                return "truncated-header"
            ethertype = data[start + 2] << 8 | data[start + 3]
            start += 4
        return _by_ethertype(ethertype, data, start)
    if linktype == LINUX_SLL:
        if size < 16:
            return "truncated-header"
        return _by_ethertype(data[14] << 8 | data[15], data, 16)
    if linktype == LINUX_SLL2:
        if size < 20:
            return "truncated-header"
        return _by_ethertype(data[0] << 8 | data[1], data, 20)
    if linktype in (NULL, LOOP):
        if size < 4:
            return "truncated-header"
        family = struct.unpack_from(">I" if linktype == LOOP else "<I", data)[0]
        if family > 0xFFFF:  # written in the other byte order
            family = struct.unpack_from("<I" if linktype == LOOP else ">I", data)[0]
        if family == 2:
            return _ipv4(data, 4)
        if family in _AF_INET6:
            return _ipv6(data, 4)
        return "not-ip"
    if linktype in (RAW, RAW_IPV4, RAW_IPV6):
        if size < 1:
            return "truncated-header"
        version = data[0] >> 4
        return _ipv4(data, 0) if version == 4 else _ipv6(data, 0) if version == 6 else "not-ip"
    return "unsupported-link-type"


def _by_ethertype(ethertype: int, data: bytes, start: int) -> Segment | str:
    if ethertype == _ETH_IPV4:
        return _ipv4(data, start)
    if ethertype == _ETH_IPV6:
        return _ipv6(data, start)
    return "not-ip"


def _ipv4(data: bytes, start: int) -> Segment | str:
    if len(data) < start + 20:
        return "truncated-header"
    first = data[start]
    if first >> 4 != 4:
        return "bad-header"
    header = (first & 0x0F) * 4
    total = data[start + 2] << 8 | data[start + 3]
    if header < 20 or total < header:
        return "bad-header"
    flags_fragment = data[start + 6] << 8 | data[start + 7]
    if flags_fragment & 0x3FFF:  # More Fragments, or a fragment offset
        return "ip-fragment"
    if data[start + 9] != 6:
        return "not-tcp"
    src = _v4(data[start + 12 : start + 16])
    dst = _v4(data[start + 16 : start + 20])
    return _tcp(data, start + header, start + total, src, dst)


def _ipv6(data: bytes, start: int) -> Segment | str:
    if len(data) < start + 40:
        return "truncated-header"
    if data[start] >> 4 != 6:
        return "bad-header"
    payload_length = data[start + 4] << 8 | data[start + 5]
    end = start + 40 + payload_length
    following = data[start + 6]
    pos = start + 40
    while following != 6:
        if following in _IPV6_SKIP or following == _IPV6_AH:
            if len(data) < pos + 2:
                return "truncated-header"
            size = (data[pos + 1] + 2) * 4 if following == _IPV6_AH else (data[pos + 1] + 1) * 8
            following = data[pos]
            pos += size
        elif following == _IPV6_FRAGMENT:
            return "ip-fragment"
        else:
            return "not-tcp"
    src = _v6(data[start + 8 : start + 24])
    dst = _v6(data[start + 24 : start + 40])
    return _tcp(data, pos, end, src, dst)


_V6_TEXT: dict[bytes, str] = {}  # IPv6 addresses seen lately, as text (bounded)


def _v6(raw: bytes) -> str:
    """``[addr]`` in the compressed form; remembered, since ``ipaddress`` is slow."""
    text = _V6_TEXT.get(raw)
    if text is None:
        if len(_V6_TEXT) >= _ENDPOINTS_MAX:
            _V6_TEXT.clear()
        text = _V6_TEXT[raw] = "[" + str(ipaddress.IPv6Address(raw)) + "]"
    return text


def _v4(raw: bytes) -> str:
    return f"{raw[0]}.{raw[1]}.{raw[2]}.{raw[3]}"


def _tcp(data: bytes, start: int, end: int, src: str, dst: str) -> Segment | str:
    if len(data) < start + 20:
        return "truncated-header"
    sport, dport, seq = struct.unpack_from(">HHI", data, start)
    header = (data[start + 12] >> 4) * 4
    if header < 20 or start + header > end:
        return "bad-header"
    if len(data) < start + header:
        return "truncated-header"
    payload_len = end - start - header
    payload = bytes(data[start + header : end])  # the captured part (snaplen) only
    return _new(_SEGMENT, (src, sport, dst, dport, seq, data[start + 13], payload, payload_len))
