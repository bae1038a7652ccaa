"""Write pcap and pcapng files of TCP traffic, byte-correct, for tests and benchmarks.

The readers of :mod:`pubproof.pipeline` are tested against files this module writes, and
the synthetic captures of :mod:`pubproof.pipeline.synth` are written with it; tshark reads
them without complaint (IPv4 header and TCP checksums are right, lengths agree).

Three layers, each usable alone:

* **TCP**: :class:`TcpConnection` keeps both directions' sequence numbers and hands out
  :class:`~pubproof.pipeline.synth.pcapwrite.Segment` values (handshake, data cut into segments,
  pure ACKs, FIN, RST).
  Segments are plain frozen values: write one twice for a retransmission, swap two for
  out-of-order delivery, leave one out for a gap (lost from the capture), or take
  :meth:`Segment.slice` of one for an overlapping retransmission.
* **IP and link**: :func:`ip_packet` turns a segment into an IPv4 or IPv6 packet (chosen
  by the address family of the endpoints); :func:`link_frame` wraps it for a link type
  (Ethernet, Linux cooked SLL and SLL2, BSD loopback/null, raw IP).
* **Files**: :class:`PcapWriter` (classic pcap, micro- or nanosecond timestamps, either
  byte order) and :class:`PcapngWriter` (section header, interface descriptions, enhanced
  packet blocks) write records; both cut frames to the snapshot length like a capturing
  tool would. :class:`CaptureWriter` ties the layers together: ``write(segment, ts_ns)``.

Timestamps are integers in nanoseconds since the epoch, so output is byte-for-byte
reproducible.

>>> import io
>>> out = io.BytesIO()
>>> client, server = Endpoint("10.0.0.1", 50000), Endpoint("10.0.0.2", 1883)
>>> conn = TcpConnection(client, server, client_isn=1000, server_isn=2000)
>>> with CaptureWriter(out, fmt="pcap") as capture:
...     for i, segment in enumerate(conn.handshake() + conn.send(C2S, b"\\xe0\\x00")):
...         capture.write(segment, ts_ns=1_000_000_000 + i * 1000)
>>> capture.frames
4
"""

from __future__ import annotations

import enum
import ipaddress
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import BinaryIO, Literal

# -- link types (tcpdump.org LINKTYPE_ values) -------------------------------------------

LINKTYPE_NULL = 0  # BSD loopback: a 4-byte address family in the writer's byte order
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101  # the IP packet, nothing before it
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276
LINK_TYPES = (
    LINKTYPE_NULL,
    LINKTYPE_ETHERNET,
    LINKTYPE_RAW,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
)

ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
#: BSD loopback address families for IPv6 differ per system (NetBSD/OpenBSD 24, FreeBSD
#: 28, Darwin 30); readers accept all three.
NULL_AF_INET = 2
NULL_AF_INET6 = (24, 28, 30)

# -- TCP flags --------------------------------------------------------------------------

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
IPPROTO_TCP = 6


class Direction(enum.Enum):
    """Which way a segment travels: from the client (who sent SYN) or from the server."""

    C2S = "c2s"
    S2C = "s2c"

    @property
    def reverse(self) -> Direction:
        return Direction.S2C if self is Direction.C2S else Direction.C2S


C2S, S2C = Direction.C2S, Direction.S2C


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An IP address (v4 or v6, as text) and a TCP port."""

    address: str
    port: int
    packed: bytes = field(init=False, repr=False, compare=False)
    version: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parsed = ipaddress.ip_address(self.address)  # raises ValueError on a bad address
        if not 0 <= self.port <= 0xFFFF:
            raise ValueError(f"port {self.port} is not in 0..65535")
        # computed once: every frame needs them
        object.__setattr__(self, "packed", parsed.packed)
        object.__setattr__(self, "version", parsed.version)


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """One TCP segment: who sends it to whom, sequence and acknowledgement numbers, flags
    and payload. ``options`` are raw TCP option bytes (padded to 4 bytes when written)."""

    src: Endpoint
    dst: Endpoint
    seq: int
    ack: int
    flags: int
    payload: bytes = b""
    window: int = 65535
    options: bytes = b""

    def slice(self, start: int, stop: int | None = None) -> Segment:
        """The part of this segment's payload ``[start:stop]``, at its own sequence number
        (for overlapping retransmissions)."""
        payload = self.payload[start:stop]
        return replace(self, seq=(self.seq + start) & 0xFFFFFFFF, payload=payload)

    @property
    def next_seq(self) -> int:
        """The sequence number after this segment (SYN and FIN count one each)."""
        length = len(self.payload) + (1 if self.flags & SYN else 0) + (1 if self.flags & FIN else 0)
        return (self.seq + length) & 0xFFFFFFFF


def _ones_complement_sum(data: bytes) -> int:
    """The 16-bit one's complement sum of ``data`` (RFC 1071), padded to even length.

    Because 2**16 = 1 (mod 65535), the sum of the big-endian 16-bit words is the whole
    buffer read as one big-endian integer, modulo 65535; only zero needs care (a non-zero
    buffer sums to 0xFFFF, never 0, in one's complement).
    """
    if len(data) & 1:
        data += b"\x00"
    value = int.from_bytes(data, "big")
    if value == 0:
        return 0
    return value % 0xFFFF or 0xFFFF


def checksum(data: bytes) -> int:
    """The Internet checksum of ``data`` (IPv4 header, TCP with pseudo-header)."""
    return ~_ones_complement_sum(data) & 0xFFFF


def tcp_header(segment: Segment, *, pseudo_header: bytes) -> bytes:
    """The TCP header (with options) of ``segment``, its checksum computed over
    ``pseudo_header`` + header + payload."""
    options = segment.options + b"\x00" * (-len(segment.options) % 4)
    offset = (20 + len(options)) // 4
    header = (
        struct.pack(
            "!HHIIBBHHH",
            segment.src.port,
            segment.dst.port,
            segment.seq & 0xFFFFFFFF,
            segment.ack & 0xFFFFFFFF,
            offset << 4,
            segment.flags,
            segment.window,
            0,
            0,
        )
        + options
    )
    total = checksum(pseudo_header + header + segment.payload)
    return header[:16] + struct.pack("!H", total) + header[18:]


def ip_packet(segment: Segment, *, ident: int = 0, ttl: int = 64, hop_limit: int = 64) -> bytes:
    """``segment`` in an IPv4 or IPv6 packet (the endpoints' family), checksums computed.

    ``ident`` is the IPv4 identification field; IPv4 packets carry Don't Fragment.
    """
    version = segment.src.version
    if version != segment.dst.version:
        raise ValueError("the endpoints of a segment must share an address family")
    src, dst = segment.src.packed, segment.dst.packed
    tcp_length = 20 + len(segment.options) + (-len(segment.options) % 4) + len(segment.payload)
    if version == 4:
        pseudo = src + dst + struct.pack("!BBH", 0, IPPROTO_TCP, tcp_length)
        total_length = 20 + tcp_length
        if total_length > 0xFFFF:
            raise ValueError(f"an IPv4 packet of {total_length} bytes is too long")
        header = struct.pack(
            "!BBHHHBBH4s4s", 0x45, 0, total_length, ident & 0xFFFF, 0x4000, ttl, IPPROTO_TCP, 0,
            src, dst,
        )  # fmt: skip
        header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    else:
        pseudo = src + dst + struct.pack("!IxxxB", tcp_length, IPPROTO_TCP)
        if tcp_length > 0xFFFF:
            raise ValueError(f"an IPv6 payload of {tcp_length} bytes needs a jumbogram")
        header = struct.pack("!IHBB16s16s", 6 << 28, tcp_length, IPPROTO_TCP, hop_limit, src, dst)
    return header + tcp_header(segment, pseudo_header=pseudo) + segment.payload


def _mac(address: bytes) -> bytes:
    """A locally administered unicast MAC derived from an IP address (stable per host)."""
    tail = address[-4:]
    return b"\x02\x00" + tail


def link_frame(
    linktype: int,
    packet: bytes,
    *,
    version: int,
    src_mac: bytes = b"\x02\x00\x00\x00\x00\x01",
    dst_mac: bytes = b"\x02\x00\x00\x00\x00\x02",
    outgoing: bool = True,
    byteorder: Literal["little", "big"] = "little",
    null_af_inet6: int = NULL_AF_INET6[0],
    ifindex: int = 1,
) -> bytes:
    """An IP ``packet`` (of IP ``version``) wrapped for ``linktype``.

    ``outgoing`` sets the Linux cooked packet type (4, sent by us; else 0, to us);
    ``byteorder`` is that of the file, which BSD loopback's address family follows.
    """
    ethertype = ETHERTYPE_IPV4 if version == 4 else ETHERTYPE_IPV6
    if linktype == LINKTYPE_ETHERNET:
        return dst_mac + src_mac + struct.pack("!H", ethertype) + packet
    if linktype == LINKTYPE_RAW:
        return packet
    if linktype == LINKTYPE_NULL:
        family = NULL_AF_INET if version == 4 else null_af_inet6
        return family.to_bytes(4, byteorder) + packet
    packet_type = 4 if outgoing else 0
    if linktype == LINKTYPE_LINUX_SLL:
        # packet type, ARPHRD_ETHER, address length, address (8, zero-padded), protocol
        return struct.pack("!HHH8sH", packet_type, 1, 6, src_mac, ethertype) + packet
    if linktype == LINKTYPE_LINUX_SLL2:
        # protocol, reserved, interface index, ARPHRD_ETHER, packet type, address length, address
        return struct.pack("!HHIHBB8s", ethertype, 0, ifindex, 1, packet_type, 6, src_mac) + packet
    raise ValueError(f"link type {linktype} is not one this writer makes")


# -- files ----------------------------------------------------------------------------------


class PcapWriter:
    """A classic pcap file (libpcap format 2.4): global header, then one record per frame.

    ``nanosecond`` selects the 0xA1B23C4D magic (nanosecond timestamps); ``byteorder``
    the file's byte order. Frames longer than ``snaplen`` are cut, their original length
    kept in the record, as a capturing tool does.
    """

    def __init__(
        self,
        out: BinaryIO,
        *,
        linktype: int = LINKTYPE_ETHERNET,
        snaplen: int = 262144,
        nanosecond: bool = False,
        byteorder: Literal["little", "big"] = "little",
    ) -> None:
        self.out = out
        self.linktype = linktype
        self.snaplen = snaplen
        self.nanosecond = nanosecond
        self.byteorder: Literal["little", "big"] = byteorder
        self._prefix = "<" if byteorder == "little" else ">"
        self._record = struct.Struct(self._prefix + "IIII")
        magic = 0xA1B23C4D if nanosecond else 0xA1B2C3D4
        out.write(struct.pack(self._prefix + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype))

    def write(self, frame: bytes, ts_ns: int, *, orig_len: int | None = None) -> None:
        """Append one record: ``frame`` (cut to the snapshot length) at time ``ts_ns``."""
        seconds, fraction = divmod(ts_ns, 1_000_000_000)
        if not self.nanosecond:
            fraction //= 1000
        kept = frame[: self.snaplen]
        length = len(frame) if orig_len is None else orig_len
        self.out.write(self._record.pack(seconds, fraction, len(kept), length))
        self.out.write(kept)


class PcapngWriter:
    """A pcapng file: one section header block, interface description blocks, and an
    enhanced packet block per frame. Timestamps are in nanoseconds (``if_tsresol`` = 9) or,
    with ``nanosecond=False``, microseconds (the format's default resolution)."""

    def __init__(
        self,
        out: BinaryIO,
        *,
        linktype: int = LINKTYPE_ETHERNET,
        snaplen: int = 262144,
        nanosecond: bool = True,
        byteorder: Literal["little", "big"] = "little",
    ) -> None:
        self.out = out
        self.nanosecond = nanosecond
        self.byteorder: Literal["little", "big"] = byteorder
        self._prefix = "<" if byteorder == "little" else ">"
        self._snaplens: list[int] = []
        # section header: byte-order magic, version 1.0, section length unknown (-1)
        body = struct.pack(self._prefix + "IHHq", 0x1A2B3C4D, 1, 0, -1)
        self._block(0x0A0D0D0A, body)
        self.add_interface(linktype, snaplen=snaplen)

    def _block(self, kind: int, body: bytes) -> None:
        body += b"\x00" * (-len(body) % 4)
        length = len(body) + 12
        self.out.write(struct.pack(self._prefix + "II", kind, length))
        self.out.write(body)
        self.out.write(struct.pack(self._prefix + "I", length))

    def add_interface(self, linktype: int, *, snaplen: int = 262144) -> int:
        """Describe another interface; returns its id for :meth:`write`."""
        options = b""
        if self.nanosecond:
            # if_tsresol (code 9): 10**-9 seconds; value padded to 4 bytes
            options += struct.pack(self._prefix + "HH", 9, 1) + b"\x09\x00\x00\x00"
        options += struct.pack(self._prefix + "HH", 0, 0)  # opt_endofopt
        self._block(0x00000001, struct.pack(self._prefix + "HHI", linktype, 0, snaplen) + options)
        self._snaplens.append(snaplen)
        return len(self._snaplens) - 1

    def write(
        self, frame: bytes, ts_ns: int, *, orig_len: int | None = None, interface: int = 0
    ) -> None:
        """Append an enhanced packet block for ``frame`` on ``interface``."""
        units = ts_ns if self.nanosecond else ts_ns // 1000
        kept = frame[: self._snaplens[interface]]
        length = len(frame) if orig_len is None else orig_len
        head = struct.pack(
            self._prefix + "IIIII", interface, units >> 32, units & 0xFFFFFFFF, len(kept), length
        )
        self._block(0x00000006, head + kept)


# -- TCP connections -------------------------------------------------------------------


@dataclass(slots=True)
class _Side:
    endpoint: Endpoint
    next_seq: int  # the next sequence number this side sends
    acked: int  # the peer's sequence number this side acknowledges next


@dataclass(slots=True)
class TcpConnection:
    """Both directions of one TCP connection; each method returns the segments it makes
    and advances the sequence numbers as the sender would.

    Nothing is written here: the caller decides which segments reach the capture, in
    which order and how often. Data segments carry ACK and, on the last one of a
    :meth:`send`, PSH. Each side acknowledges everything sent to it so far (the capture
    point sees no loss unless the caller makes one).
    """

    client: Endpoint
    server: Endpoint
    client_isn: int = 1
    server_isn: int = 1
    mss: int = 1460
    window: int = 65535
    _sides: dict[Direction, _Side] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._sides = {
            C2S: _Side(self.client, self.client_isn & 0xFFFFFFFF, self.server_isn & 0xFFFFFFFF),
            S2C: _Side(self.server, self.server_isn & 0xFFFFFFFF, self.client_isn & 0xFFFFFFFF),
        }

    def _segment(
        self, direction: Direction, flags: int, payload: bytes = b"", **extra: bytes
    ) -> Segment:
        side, peer = self._sides[direction], self._sides[direction.reverse]
        segment = Segment(
            src=side.endpoint, dst=peer.endpoint, seq=side.next_seq,
            ack=side.acked if flags & ACK else 0, flags=flags, payload=payload,
            window=self.window, **extra,
        )  # fmt: skip
        side.next_seq = segment.next_seq
        peer.acked = segment.next_seq
        return segment

    def handshake(self) -> list[Segment]:
        """SYN (with an MSS option), SYN-ACK, ACK: the sequence numbers start at the ISNs."""
        mss = b"\x02\x04" + self.mss.to_bytes(2, "big")
        return [
            self._segment(C2S, SYN, options=mss),
            self._segment(S2C, SYN | ACK, options=mss),
            self._segment(C2S, ACK),
        ]

    def send(
        self, direction: Direction, data: bytes, *, sizes: Iterable[int] | None = None
    ) -> list[Segment]:
        """``data`` sent one way, cut into segments of ``sizes`` bytes each (the last size
        repeats; default: the MSS)."""
        cuts = iter(sizes or ())
        size = self.mss
        segments: list[Segment] = []
        position = 0
        while position < len(data):
            size = next(cuts, size)
            if size <= 0:
                raise ValueError("segment sizes must be positive")
            chunk = data[position : position + size]
            position += len(chunk)
            flags = ACK | (PSH if position == len(data) else 0)
            segments.append(self._segment(direction, flags, chunk))
        return segments

    def ack(self, direction: Direction) -> Segment:
        """A pure ACK from the side that sends ``direction``."""
        return self._segment(direction, ACK)

    def fin(self, direction: Direction) -> Segment:
        """FIN (with ACK): the side sending ``direction`` closes its half."""
        return self._segment(direction, FIN | ACK)

    def rst(self, direction: Direction) -> Segment:
        """RST (with ACK): the side sending ``direction`` aborts the connection."""
        return self._segment(direction, RST | ACK)

    def close(self, first: Direction = C2S) -> list[Segment]:
        """The orderly four-way close: FIN, ACK, FIN, ACK, starting from ``first``."""
        return [self.fin(first), self.ack(first.reverse), self.fin(first.reverse), self.ack(first)]

    def next_seq(self, direction: Direction) -> int:
        """The sequence number the next segment sent ``direction`` will carry."""
        return self._sides[direction].next_seq


class CaptureWriter:
    """Segments to a pcap or pcapng file: builds IP packets and link frames, numbers IPv4
    identifications per sender, and counts frames and bytes written.

    ``fmt`` is ``"pcap"`` or ``"pcapng"``; other keywords go to the file writer. Use as a
    context manager, or call :meth:`close` (which closes ``out`` only if it opened it).
    """

    def __init__(
        self,
        out: BinaryIO | str,
        *,
        fmt: Literal["pcap", "pcapng"] = "pcap",
        linktype: int = LINKTYPE_ETHERNET,
        snaplen: int = 262144,
        nanosecond: bool = False,
        byteorder: Literal["little", "big"] = "little",
    ) -> None:
        self._owned = isinstance(out, str)
        self.out: BinaryIO = open(out, "wb", buffering=1 << 20) if isinstance(out, str) else out  # noqa: SIM115
        self.linktype = linktype
        self.byteorder: Literal["little", "big"] = byteorder
        self.writer: PcapWriter | PcapngWriter
        if fmt == "pcap":
            self.writer = PcapWriter(
                self.out, linktype=linktype, snaplen=snaplen, nanosecond=nanosecond,
                byteorder=byteorder,
            )  # fmt: skip
        elif fmt == "pcapng":
            self.writer = PcapngWriter(
                self.out, linktype=linktype, snaplen=snaplen, nanosecond=nanosecond,
                byteorder=byteorder,
            )  # fmt: skip
        else:
            raise ValueError(f"format {fmt!r} is not pcap or pcapng")
        self.frames = 0
        self.tcp_payload_bytes = 0
        self._ident: dict[bytes, int] = {}

    def frame_for(self, segment: Segment, *, outgoing: bool = True) -> bytes:
        """The link-layer frame that carries ``segment``."""
        src = segment.src.packed
        ident = self._ident.get(src, 0)
        self._ident[src] = (ident + 1) & 0xFFFF
        packet = ip_packet(segment, ident=ident)
        return link_frame(
            self.linktype, packet, version=segment.src.version, src_mac=_mac(src),
            dst_mac=_mac(segment.dst.packed), outgoing=outgoing, byteorder=self.byteorder,
        )  # fmt: skip

    def write(self, segment: Segment, ts_ns: int, *, outgoing: bool = True) -> None:
        """Write ``segment`` as the next frame, at ``ts_ns``."""
        self.writer.write(self.frame_for(segment, outgoing=outgoing), ts_ns)
        self.frames += 1
        self.tcp_payload_bytes += len(segment.payload)

    def write_all(self, segments: Sequence[Segment], ts_ns: int, step_ns: int = 1000) -> int:
        """Write ``segments`` ``step_ns`` apart from ``ts_ns``; returns the next free time."""
        for segment in segments:
            self.write(segment, ts_ns)
            ts_ns += step_ns
        return ts_ns

    def write_raw(self, frame: bytes, ts_ns: int, *, orig_len: int | None = None) -> None:
        """Write any bytes as a frame (garbage, non-TCP traffic): counted like the rest."""
        self.writer.write(frame, ts_ns, orig_len=orig_len)
        self.frames += 1

    def close(self) -> None:
        self.out.flush()
        if self._owned:
            self.out.close()

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
