"""Capture files read back: the packet records of one split, in file order.

The workers read the byte ranges the driver's walk cut (:mod:`.capture_plan`), each alone
and in parallel: :func:`read_split` gives a :class:`~pubproof.pipeline.capture.Record` per
frame, :func:`read_frames` plain tuples (the engines read millions of them), without the
Ethernet frames a caller asks to skip. The walk has checked every block of a split (its
length and trailer), so the reader takes an Enhanced Packet Block, nearly every block of a
capture, in one unpacking; what a block says of itself that cannot be (an interface never
described, a captured length past its block) is a :class:`~pubproof.pipeline.capture.
Problem` for its frame.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Container, Iterator
from typing import Final

from pubproof.pipeline.capture import (
    _EPB,
    _IDB,
    _PACKET_BLOCKS,
    _PB,
    _PCAPNG_SHB,
    RELEASE_BYTES,
    Interface,
    Problem,
    RawRecord,
    Record,
    Split,
    _block_header,
    _interface,
    _release,
)
from pubproof.pipeline.dissect import ETHERNET, segment_key_at

#: the unpacking done once per block, compiled once per byte order (a format string built
#: and looked up in struct's cache per call cost more than the unpacking)
_U32X5: Final = {order: struct.Struct(order + "IIIII") for order in "<>"}
#: an Enhanced Packet Block's head: type, total length, interface, timestamp (two
#: words), captured and original length
_EPB_HEAD: Final = {order: struct.Struct(order + "IIIIIII") for order in "<>"}
_EPB_HEAD_BYTES: Final = 28


def read_split(split: Split) -> Iterator[Record | Problem]:
    """The packet records of one split, in file order (a packet block naming an interface
    that was never described gives a ``Problem`` for its frame)."""
    for item in read_frames(split):
        yield item if isinstance(item, Problem) else Record(*item)


def read_frames(
    split: Split, skip: Container[bytes] | None = None
) -> Iterator[RawRecord | Problem]:
    """:func:`read_split` without building a :class:`Record` per frame; with ``skip``,
    without the Ethernet frames whose :func:`~pubproof.pipeline.dissect.segment_key` is
    in it (passed over before their bytes are copied; the frame numbers of the others
    are the same)."""
    with (
        open(split.path, "rb") as handle,
        mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mm,
    ):
        if split.fmt == "pcap":
            yield from _read_pcap(mm, split, skip)
        else:
            yield from _read_pcapng(mm, split, skip)


def _read_pcap(mm: mmap.mmap, split: Split, skip: Container[bytes] | None) -> Iterator[RawRecord]:
    unpack = struct.Struct(split.endian + "IIII").unpack_from
    interface = split.interfaces[0]
    linktype = interface.linktype
    units = float(interface.units)
    if linktype != ETHERNET:
        skip = None
    pos, frame, end = split.start, split.first_frame, split.end
    released = pos
    seconds: int  # typed: machine integers in the compiled loop (once per record)
    fraction: int
    caplen: int
    origlen: int
    while pos < end:
        seconds, fraction, caplen, origlen = unpack(mm, pos)
        start = pos + 16
        pos = start + caplen
        if skip is None or segment_key_at(mm, start, caplen) not in skip:
            yield frame, linktype, caplen, origlen, mm[start:pos], seconds + fraction / units
        frame += 1
        if pos - released > RELEASE_BYTES:
            _release(mm, released, pos)
            released = pos


def _read_pcapng(
    mm: mmap.mmap, split: Split, skip: Container[bytes] | None
) -> Iterator[RawRecord | Problem]:
    endian, interfaces = split.endian, list(split.interfaces)
    pos, frame, end = split.start, split.first_frame, split.end
    released = pos
    head = _EPB_HEAD[endian].unpack_from  # bound: looked up once, not once per block
    # typed: machine integers in the compiled loop (once per block)
    block_type: int
    length: int
    iface: int
    caplen: int
    origlen: int
    while pos < end:
        if pos - released > RELEASE_BYTES:
            _release(mm, released, pos)
            released = pos
        if end - pos >= _EPB_HEAD_BYTES:
            # an Enhanced Packet Block, nearly every block of a capture, in one unpacking:
            # the plan's walk has checked every block of the split (length and trailer)
            block_type, length, iface, high, low, caplen, origlen = head(mm, pos)
            if block_type == _EPB and length >= 32:  # shorter: the general way's problem
                record = _packet_record(
                    mm, pos, length, pos + 28, iface, caplen, origlen, interfaces, split,
                    frame, skip, high << 32 | low,
                )  # fmt: skip
                if record is not None:
                    yield record
                frame += 1
                pos += length
                continue
        header = _block_header(mm, pos, end, endian)
        assert not isinstance(header, str), "the plan only cuts at valid blocks"
        block_type, length, endian = header
        head = _EPB_HEAD[endian].unpack_from
        if block_type == _PCAPNG_SHB:
            interfaces = []
        elif block_type == _IDB:
            interfaces.append(_interface(mm, pos, endian))
        elif block_type in _PACKET_BLOCKS:
            record = _packet_block(
                mm, pos, length, block_type, endian, interfaces, split, frame, skip
            )
            if record is not None:
                yield record
            frame += 1
        pos += length


def _packet_block(
    mm: mmap.mmap,
    pos: int,
    length: int,
    block_type: int,
    endian: str,
    interfaces: list[Interface],
    split: Split,
    frame: int,
    skip: Container[bytes] | None = None,
) -> RawRecord | Problem | None:
    """The packet block at ``pos``: its record, its problem, or None when ``skip`` has
    its Ethernet frame's segment key (:func:`read_frames`)."""
    iface: int  # typed: machine integers in the compiled reader (once per block)
    caplen: int
    origlen: int
    high: int
    low: int
    stamp = -1  # a Simple Packet Block has no timestamp
    if block_type == _EPB:
        iface, high, low, caplen, origlen = _U32X5[endian].unpack_from(mm, pos + 8)
        start = pos + 28
        stamp = high << 32 | low
    elif block_type == _PB:
        iface, _, high, low, caplen, origlen = struct.unpack_from(endian + "HHIIII", mm, pos + 8)
        start = pos + 28
        stamp = high << 32 | low
    else:  # Simple Packet Block: interface 0, the captured length is implied
        iface = 0
        origlen = struct.unpack_from(endian + "I", mm, pos + 8)[0]
        caplen = min(origlen, length - 16)
        if interfaces and interfaces[0].snaplen:
            caplen = min(caplen, interfaces[0].snaplen)
        start = pos + 12
    return _packet_record(
        mm, pos, length, start, iface, caplen, origlen, interfaces, split, frame, skip, stamp
    )


def _packet_record(
    mm: mmap.mmap,
    pos: int,
    length: int,
    start: int,
    iface: int,
    caplen: int,
    origlen: int,
    interfaces: list[Interface],
    split: Split,
    frame: int,
    skip: Container[bytes] | None,
    stamp: int = -1,
) -> RawRecord | Problem | None:
    """:func:`_packet_block`'s answer for the block at ``pos`` (``length`` bytes) whose
    data start at ``start``; ``stamp``: its timestamp in its interface's units (-1: none,
    a Simple Packet Block: its time is then 0)."""
    if iface >= len(interfaces):
        return Problem(
            capture=split.capture,
            frame=frame,
            reason="unknown-interface",
            detail=f"packet block names interface {iface}, never described",
            offset=pos,
            length=length,
        )
    if start + caplen > pos + length - 4:
        return Problem(
            capture=split.capture,
            frame=frame,
            reason="garbage",
            detail=f"captured length {caplen} exceeds its block",
            offset=pos,
            length=length,
        )
    interface = interfaces[iface]
    linktype = interface.linktype
    if skip is not None and linktype == ETHERNET and segment_key_at(mm, start, caplen) in skip:
        return None
    time = interface.time(stamp) if stamp >= 0 else 0.0
    return frame, linktype, caplen, origlen, mm[start : start + caplen], time
