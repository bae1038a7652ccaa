"""Capture files cut into splits on record boundaries: the driver's walk of each file.

The driver calls :func:`plan` once per file: it walks the record (block) headers only,
seeking from header to header without reading any packet data, and cuts the file into
byte ranges of about ``split_bytes`` that start and end on record boundaries. Each
:class:`~pubproof.pipeline.capture.Split` carries what a worker needs to read its range
alone: the format, the byte order, the interfaces defined so far (pcapng) and the number of
its first frame. The workers then read their ranges with
:func:`~pubproof.pipeline.capture_read.read_split`, in parallel.

Damage does not end the read: after bytes that are no valid record or block, the walk
looks for the next place where valid ones start again (:meth:`_Walker.resync`: a record or
block whose header is plausible, whose lengths agree and which is followed by another valid
one or the end of the file), quarantines the bytes in between as ``garbage`` and goes on
from there. The splits never cover damaged bytes, so a worker reads only records the walk
accepted. Only when nothing valid follows does the problem run to the end of the file.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Final

from pubproof.pipeline.capture import (
    _EPB,
    _IDB,
    _PACKET_BLOCKS,
    _PB,
    _PCAP_MAGIC,
    _PCAPNG_SHB,
    _SPB,
    DEFAULT_SPLIT_BYTES,
    MAX_RECORD,
    RELEASE_BYTES,
    Interface,
    Plan,
    Problem,
    Split,
    _block_header,
    _interface,
    _release,
)

#: the block types a resynchronising walk may start again at: the section header, the
#: interface description, the packet blocks, name resolution (4), interface statistics (5)
#: and decryption secrets (10)
_RESYNC_BLOCKS = (_PCAPNG_SHB, _IDB, _PB, _SPB, _EPB, 4, 5, 10)
#: the largest difference in seconds between the timestamp of a pcap record found by a
#: resynchronising walk and the last good one's (a day: records are in capture order)
_RESYNC_SECONDS: Final = 86400
#: a pcap record's header, unpacked once per record (bound once per byte order: a Struct's
#: method is looked up at every call in the compiled build)
_U32X4: Final = {order: struct.Struct(order + "IIII") for order in "<>"}
_U32X4_UNPACK: Final = {order: unpacker.unpack_from for order, unpacker in _U32X4.items()}


def plan(capture: str, path: str, split_bytes: int = DEFAULT_SPLIT_BYTES) -> Plan:
    """Walk the record headers of one file and cut it into splits of about ``split_bytes``."""
    size = os.path.getsize(path)
    result = Plan(capture=capture, size=size)
    if size == 0:
        result.problems.append(
            Problem(
                capture=capture,
                frame=None,
                reason="empty-file",
                detail="the file is empty",
                offset=0,
                length=0,
            )
        )
        return result
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        head = mm[:4]
        magic = struct.unpack("<I", head)[0] if len(head) == 4 else None
        walker: _Walker
        if magic in _PCAP_MAGIC:
            walker = _PcapWalker(mm, capture)
        elif magic == _PCAPNG_SHB:
            walker = _PcapngWalker(mm, capture)
        else:
            shown = head.hex() or "nothing"
            result.problems.append(
                Problem(
                    capture=capture,
                    frame=None,
                    reason="bad-magic",
                    detail=f"not a pcap or pcapng file (first bytes {shown})",
                    offset=0,
                    length=size,
                )
            )
            return result
        walker.walk(result, path, split_bytes)
    return result


class _Walker:
    """Shared bookkeeping of the two formats' header walks."""

    fmt = ""

    def __init__(self, mm: mmap.mmap, capture: str) -> None:
        self.mm = mm
        self.capture = capture
        self.size = len(mm)
        self.endian = "<"
        self.interfaces: tuple[Interface, ...] = ()
        self.last = -1  # where the last packet record read starts (-1: none since damage)
        # pcap: the timestamps' resolution, the snapshot length, the last record's time
        self.fraction = 1_000_000
        self.snaplen = 0
        self.seconds = -1

    def walk(self, result: Plan, path: str, split_bytes: int) -> None:
        start, pos = self.begin(result)
        if start < 0:
            return
        split_start, split_frame, split_frames = start, 1, 0
        split_state = (self.endian, self.interfaces)
        released = pos
        while pos < self.size:
            step = self.step(pos, result)
            if step is None:
                break
            if isinstance(step, _Resync):
                if step.undo:  # the last record was damaged too: not a frame
                    result.frames -= 1
                    if step.start < split_start:  # it ended the split just cut: shorten it
                        cut = result.splits.pop()
                        if step.start > cut.start:
                            result.splits.append(
                                replace(cut, end=step.start, frames=cut.frames - 1)
                            )
                        split_start = step.start
                    else:
                        split_frames -= 1
                if step.start > split_start:
                    result.splits.append(
                        self._split(
                            path, split_state, split_start, step.start, split_frame, split_frames
                        )
                    )
                pos = step.end
                split_start, split_frame, split_frames = pos, result.frames + 1, 0
                split_state = (self.endian, self.interfaces)
                self.last = -1
                continue
            end, is_frame = step
            if end - released > RELEASE_BYTES:
                _release(self.mm, released, min(end, self.size))
                released = end
            if is_frame:
                result.frames += 1
                split_frames += 1
                self.last = pos
            pos = end
            if pos - split_start >= split_bytes and pos < self.size:
                result.splits.append(
                    self._split(path, split_state, split_start, pos, split_frame, split_frames)
                )
                split_start, split_frame, split_frames = pos, result.frames + 1, 0
                split_state = (self.endian, self.interfaces)
        end = min(pos, self.size)
        if end > split_start:
            result.splits.append(
                self._split(path, split_state, split_start, end, split_frame, split_frames)
            )

    def resync(self, result: Plan, pos: int, *, suspect: bool = False) -> _Resync | None:
        """Look for valid records again after the damage found at ``pos``; when found,
        quarantine the bytes in between as ``garbage`` and say where to go on. The search
        starts inside the last packet record read, if any: valid records starting there
        mean its own length was damaged (its end landed inside the next record), so it is
        part of the damage, no frame; so it is when ``suspect`` (what lies at ``pos`` is
        no record header at all: the last record's length was damaged to end short)."""
        last = self.last
        found = self.next_valid(last + 1 if last >= 0 else pos + 1)
        if found is None:
            return None
        start = last if last >= 0 and (found < pos or suspect) else pos
        result.problems.append(
            Problem(
                capture=self.capture,
                frame=None,
                reason="garbage",
                detail=f"damaged bytes {start} to {found} (no valid record); "
                f"read on from byte {found}",
                offset=start,
                length=found - start,
            )
        )
        return _Resync(start=start, end=found, undo=start < pos)

    def next_valid(self, search: int) -> int | None:
        """Where valid records start again at or after ``search`` (None: nowhere)."""
        raise NotImplementedError

    def _split(
        self,
        path: str,
        state: tuple[str, tuple[Interface, ...]],
        start: int,
        end: int,
        first_frame: int,
        frames: int,
    ) -> Split:
        return Split(
            capture=self.capture,
            path=path,
            fmt=self.fmt,
            endian=state[0],
            interfaces=state[1],
            start=start,
            end=end,
            first_frame=first_frame,
            frames=frames,
        )

    def problem(
        self, result: Plan, reason: str, detail: str, offset: int, frame: int | None = None
    ) -> None:
        result.problems.append(
            Problem(
                capture=self.capture,
                frame=frame,
                reason=reason,
                detail=detail,
                offset=offset,
                length=self.size - offset,
            )
        )

    def begin(self, result: Plan) -> tuple[int, int]:
        raise NotImplementedError

    def step(self, pos: int, result: Plan) -> tuple[int, bool] | _Resync | None:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class _Resync:
    """A walk's step over damage: ``start`` to ``end`` quarantined, read on at ``end``;
    ``undo``: the last record counted (at ``start``) was part of the damage."""

    start: int
    end: int
    undo: bool


class _PcapWalker(_Walker):
    fmt = "pcap"

    def begin(self, result: Plan) -> tuple[int, int]:
        if self.size < 24:
            self.problem(result, "truncated-header", "the pcap file header is cut short", 0)
            return -1, 0
        self.endian, nano = _PCAP_MAGIC[struct.unpack_from("<I", self.mm, 0)[0]]
        self.fraction = 1_000_000_000 if nano else 1_000_000
        snaplen, network = struct.unpack_from(self.endian + "II", self.mm, 16)
        self.snaplen = snaplen
        # the upper bits of the link-type field may carry FCS information
        self.interfaces = (
            Interface(linktype=network & 0x0FFFFFFF, snaplen=snaplen, units=self.fraction),
        )
        return 24, 24

    def step(self, pos: int, result: Plan) -> tuple[int, bool] | _Resync | None:
        if pos + 16 > self.size:
            self.problem(
                result,
                "truncated-record",
                "the file ends inside a record header",
                pos,
                frame=result.frames + 1,
            )
            result.frames += 1
            return None
        # typed: the compiled walk compares machine integers, not objects (once per record)
        seconds: int
        fraction: int
        caplen: int
        origlen: int
        seconds, fraction, caplen, origlen = _U32X4_UNPACK[self.endian](self.mm, pos)
        end = pos + 16 + caplen
        # a fraction of a second of a second or more, or a jump in time of more than a day
        # (followed by no record of that time): no record header, but bytes inside a record
        # whose length was damaged
        jump = self.seconds >= 0 and abs(seconds - self.seconds) > _RESYNC_SECONDS
        # (a packet of no bytes at all is none either)
        headless = fraction >= self.fraction or jump or not origlen
        if (
            jump
            and fraction < self.fraction
            and origlen
            and caplen <= MAX_RECORD
            and end + 16 <= self.size
            and self.plausible(end, seconds) >= 0
        ):
            headless = False  # a jump in time indeed (two captures merged, say)
        if (
            headless
            or caplen > MAX_RECORD
            or origlen > 0xFFFFFFF
            or caplen > origlen  # more captured than the packet had: a damaged length
            or end > self.size
        ):
            # damage: valid records may follow
            resync = self.resync(result, pos, suspect=headless)
            if resync is not None:
                return resync
            if end > self.size and caplen <= min(MAX_RECORD, origlen) <= 0xFFFFFFF:
                self.problem(
                    result,
                    "truncated-record",
                    f"the file ends inside a record of {caplen} bytes",
                    pos,
                    frame=result.frames + 1,
                )
                result.frames += 1
                return None
            what = "no record header" if headless else f"a record of {caplen} bytes"
            self.problem(result, "garbage", f"{what} at byte {pos} is impossible", pos)
            return None
        self.seconds = seconds
        return end, True

    def plausible(self, pos: int, reference: int) -> int:
        """The end of a plausible record at ``pos`` (-1: none): its fraction of a second
        below one, its captured length within the snapshot length and the original
        length, within the file, and its time within a day of ``reference`` (the last
        record's, -1: any)."""
        if pos + 16 > self.size:
            return -1
        seconds: int
        fraction: int
        caplen: int
        origlen: int
        seconds, fraction, caplen, origlen = struct.unpack_from(self.endian + "IIII", self.mm, pos)
        end = pos + 16 + caplen
        if (
            fraction >= self.fraction
            or not origlen
            or caplen > origlen
            or caplen > (self.snaplen or MAX_RECORD)
            or origlen > 0xFFFFFFF
            or end > self.size
            or (reference >= 0 and abs(seconds - reference) > _RESYNC_SECONDS)
        ):
            return -1
        return end

    def next_valid(self, search: int) -> int | None:
        for pos in self._candidates(search):
            end = self.plausible(pos, self.seconds)
            # and the record after it too (or the end of the file, or a header cut short)
            if end >= 0 and (end + 16 > self.size or self.plausible(end, self.seconds) >= 0):
                return pos
        return None

    def _candidates(self, search: int) -> Iterator[int]:
        """Every position from ``search`` on, or, once a record was read, only those whose
        timestamp's upper 16 bits are within one of its (found with ``mmap.find``, so a
        long damaged stretch is not walked byte by byte in Python)."""
        last = self.size - 16
        if self.seconds < 0:
            yield from range(search, last + 1)
            return
        high = self.seconds >> 16
        at = 2 if self.endian == "<" else 0  # where the upper half of the seconds is
        patterns = {
            struct.pack(self.endian + "H", h): 0 for h in (high - 1, high, high + 1) if h >= 0
        }
        for pattern in patterns:
            patterns[pattern] = self.mm.find(pattern, search + at)
        while True:
            found = [p for p in patterns.values() if p >= 0]
            if not found:
                return
            pos = min(found)
            if pos - at > last:
                return
            if pos - at >= search:
                yield pos - at
            for pattern, value in patterns.items():
                if value == pos:
                    patterns[pattern] = self.mm.find(pattern, pos + 1)


class _PcapngWalker(_Walker):
    fmt = "pcapng"

    def begin(self, result: Plan) -> tuple[int, int]:
        return 0, 0

    def step(self, pos: int, result: Plan) -> tuple[int, bool] | _Resync | None:
        header = _block_header(self.mm, pos, self.size, self.endian)
        if isinstance(header, str):
            resync = self.resync(result, pos)
            if resync is not None:
                return resync
            frame = None
            if header == "truncated-record":
                result.frames += 1
                frame = result.frames
            detail = {
                "truncated-record": "the file ends inside a packet block",
                "truncated-block": "the file ends inside a block",
                "garbage": f"no valid block at byte {pos}",
            }[header]
            self.problem(result, header, detail, pos, frame=frame)
            return None
        block_type, length, endian = header
        self.endian = endian
        if block_type == _PCAPNG_SHB:
            self.interfaces = ()
        elif block_type == _IDB:
            self.interfaces = (*self.interfaces, _interface(self.mm, pos, endian))
        elif block_type in _PACKET_BLOCKS:
            return pos + length, True
        else:
            name = f"0x{block_type:08x}"
            result.skipped_blocks[name] = result.skipped_blocks.get(name, 0) + 1
        return pos + length, False

    def valid(self, pos: int) -> int:
        """The end of a valid block at ``pos`` of a type a walk resynchronises on (-1:
        none); a packet block's interface must be known and its data within it."""
        header = _block_header(self.mm, pos, self.size, self.endian)
        if isinstance(header, str) or header[0] not in _RESYNC_BLOCKS:
            return -1
        block_type, length, endian = header
        if block_type == _EPB:
            iface, _, _, caplen = struct.unpack_from(endian + "IIII", self.mm, pos + 8)
            if iface >= len(self.interfaces) or 32 + caplen > length:
                return -1
        elif block_type == _PB:
            iface = struct.unpack_from(endian + "H", self.mm, pos + 8)[0]
            caplen = struct.unpack_from(endian + "I", self.mm, pos + 20)[0]
            if iface >= len(self.interfaces) or 32 + caplen > length:
                return -1
        elif block_type == _SPB and not self.interfaces:
            return -1
        return pos + length

    def next_valid(self, search: int) -> int | None:
        mm, size = self.mm, self.size
        patterns = {struct.pack(self.endian + "I", t) for t in _RESYNC_BLOCKS}
        found = {p: mm.find(p, search) for p in patterns}
        while True:
            candidates = [at for at in found.values() if at >= 0]
            if not candidates:
                return None
            pos = min(candidates)
            end = self.valid(pos)
            if end >= 0:
                after = _block_header(mm, end, size, self.endian) if end < size else None
                # followed by another valid block, the end of the file or a block cut short
                if after is None or not isinstance(after, str) or after != "garbage":
                    return pos
            for pattern, at in found.items():
                if at == pos:
                    found[pattern] = mm.find(pattern, pos + 1)
