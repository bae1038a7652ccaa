"""Capture files (pcap, pcapng) cut into splits on record boundaries, and read back.

The driver calls :func:`plan` once per file: it walks the record (block) headers only,
seeking from header to header without reading any packet data, and cuts the file into
byte ranges of about ``split_bytes`` that start and end on record boundaries. Each
:class:`Split` carries what a worker needs to read its range alone: the format, the byte
order, the interfaces defined so far (pcapng) and the number of its first frame. The
workers then read their ranges with :func:`read_split`, in parallel.

Frames are numbered as tshark numbers them: 1, 2, ... over the packet records of the
file (pcap records; pcapng Enhanced, Simple and obsolete Packet Blocks). Other pcapng
blocks (name resolution, statistics, decryption secrets, custom...) are skipped and
counted. Whatever cannot be read is a :class:`Problem` naming the reason, the byte offset
and the bytes it covers, never an exception: a bad magic number (``bad-magic``, the whole
file), a record cut short by the end of the file (``truncated-record``, counted as a
frame), an impossible length or block (``garbage``).

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
from collections.abc import Container, Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final

from pubproof.pipeline.dissect import ETHERNET, segment_key_at

#: pcap magic numbers (as read little-endian) -> (byte order, nanosecond timestamps)
_PCAP_MAGIC = {
    0xA1B2C3D4: ("<", False),
    0xD4C3B2A1: (">", False),
    0xA1B23C4D: ("<", True),
    0x4D3CB2A1: (">", True),
}
_PCAPNG_SHB: Final = 0x0A0D0D0A
_BYTE_ORDER_MAGIC: Final = 0x1A2B3C4D
_IDB: Final = 1
_PB: Final = 2
_SPB: Final = 3
_EPB: Final = 6
_PACKET_BLOCKS: Final = (_PB, _SPB, _EPB)
#: the block types a resynchronising walk may start again at: the section header, the
#: interface description, the packet blocks, name resolution (4), interface statistics (5)
#: and decryption secrets (10)
_RESYNC_BLOCKS = (_PCAPNG_SHB, _IDB, _PB, _SPB, _EPB, 4, 5, 10)
#: the largest difference in seconds between the timestamp of a pcap record found by a
#: resynchronising walk and the last good one's (a day: records are in capture order)
_RESYNC_SECONDS: Final = 86400
#: A record longer than this is not a record: the file is garbage from here on.
MAX_RECORD: Final = 0x4000000  # 64 MiB, far above any real snapshot length (262,144)
DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024
#: the smallest split :func:`split_bytes_for` chooses (a split's task has a fixed cost)
MIN_AUTO_SPLIT_BYTES = 4 * 1024 * 1024


#: the unpacking done once per record or block, compiled once per byte order (a format
#: string built and looked up in struct's cache per call cost more than the unpacking)
_U32: Final = {order: struct.Struct(order + "I") for order in "<>"}
_U32X2: Final = {order: struct.Struct(order + "II") for order in "<>"}
_U32X4: Final = {order: struct.Struct(order + "IIII") for order in "<>"}
_U32X5: Final = {order: struct.Struct(order + "IIIII") for order in "<>"}
# unpack_from of _U32, _U32X2 and _U32X4 bound once per byte order: a Struct's method is
# looked up at every call in the compiled build (the plan's walk reads every block's and
# every record's header)
_U32_UNPACK: Final = {order: unpacker.unpack_from for order, unpacker in _U32.items()}
_U32X2_UNPACK: Final = {order: unpacker.unpack_from for order, unpacker in _U32X2.items()}
_U32X4_UNPACK: Final = {order: unpacker.unpack_from for order, unpacker in _U32X4.items()}
#: an Enhanced Packet Block's head: type, total length, interface, timestamp (two
#: words), captured and original length
_EPB_HEAD: Final = {order: struct.Struct(order + "IIIIIII") for order in "<>"}
_EPB_HEAD_BYTES: Final = 28


def split_bytes_for(total_bytes: int, workers: int) -> int:
    """A split size for ``total_bytes`` of captures read by ``workers`` at once: about
    two splits per worker (so the last split to finish is a small one), between
    :data:`MIN_AUTO_SPLIT_BYTES` and :data:`DEFAULT_SPLIT_BYTES`.

    A fixed 64 MiB left one core idle on a 77 MB capture (splits of 64 and 13 MB)."""
    wanted = -(-total_bytes // max(1, 2 * workers))
    return max(MIN_AUTO_SPLIT_BYTES, min(DEFAULT_SPLIT_BYTES, wanted))


def _by_fields(item: Any) -> tuple[Any, tuple[Any, ...]]:
    """How to pickle a frozen dataclass: by its class and fields, given back to its
    constructor (the compiled build cannot restore one by setting its fields one by one,
    and Spark pickles the splits it sends to its workers)."""
    return _build, (type(item), {f.name: getattr(item, f.name) for f in fields(item)})


def _build(kind: Any, values: dict[str, Any]) -> Any:
    return kind(**values)


@dataclass(frozen=True, slots=True, kw_only=True)
class Interface:
    """A capture interface: its link type, snapshot length and how its timestamps count
    (``units`` per second, and pcapng's ``if_tsoffset``: seconds to add)."""

    linktype: int
    snaplen: int
    units: int = 1_000_000
    offset: int = 0

    def time(self, stamp: int) -> float:
        """A timestamp of this interface (a whole number of its units) in seconds since
        the epoch."""
        return stamp / self.units + self.offset

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _by_fields(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Split:
    """A byte range of one capture file that starts and ends on record boundaries."""

    capture: str  # the file name as given on the command line
    path: str  # where to open it
    fmt: str  # "pcap" | "pcapng"
    endian: str  # "<" | ">" at the start of the range
    interfaces: tuple[Interface, ...]  # pcapng: the section's interfaces so far; pcap: one
    start: int
    end: int
    first_frame: int
    frames: int  # packet records in the range

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _by_fields(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """Something in a capture file that is not a readable record."""

    capture: str
    frame: int | None  # the frame number when the problem is a (cut) packet record
    reason: str
    detail: str
    offset: int  # byte offset in the file
    length: int  # bytes of the file it covers

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _by_fields(self)


@dataclass(slots=True)
class Plan:
    """The splits of one file, what ended it early, and the blocks skipped."""

    capture: str
    size: int
    splits: list[Split] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    frames: int = 0  # packet records, including a truncated last one
    skipped_blocks: dict[str, int] = field(default_factory=dict)

    @property
    def unreadable(self) -> Problem | None:
        """The problem that kept every frame of the file from being read (a file that is
        no capture, an empty one, a header cut short, nothing but damage), or None when
        the file gave at least one frame or has no problem (a capture with no packets)."""
        if self.frames or not self.problems:
            return None
        return self.problems[0]


@dataclass(frozen=True, slots=True)
class Record:
    """One packet record: frame number, interface, lengths and where its data is."""

    frame: int
    linktype: int
    caplen: int
    origlen: int
    data: bytes
    time: float = 0.0  # seconds since the epoch, as the capture stamped it


# -- planning ---------------------------------------------------------------------------


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


def _block_header(
    mm: mmap.mmap | bytes, pos: int, size: int, endian: str
) -> tuple[int, int, str] | str:
    """(block type, total length, byte order) of the block at ``pos``, or a problem reason."""
    if pos + 12 > size:
        if pos + 4 <= size and struct.unpack_from(endian + "I", mm, pos)[0] in _PACKET_BLOCKS:
            return "truncated-record"
        return "truncated-block"
    # typed: the compiled reader compares machine integers (once per block)
    magic: int
    block_type: int
    length: int
    trailer: int
    # the type and length in one unpacking, in the byte order so far: a Section Header
    # Block's type reads the same in both orders, and its magic gives the order of its
    # length and of the section it starts
    block_type, length = _U32X2_UNPACK[endian](mm, pos)
    if block_type == _PCAPNG_SHB:
        magic = _U32_UNPACK["<"](mm, pos + 8)[0]
        if magic == _BYTE_ORDER_MAGIC:
            endian = "<"
        elif magic == 0x4D3C2B1A:
            endian = ">"
        else:
            return "garbage"
        length = _U32_UNPACK[endian](mm, pos + 4)[0]
    if length < 12 or length % 4 or length > MAX_RECORD:
        return "garbage"
    if pos + length > size:
        return "truncated-record" if block_type in _PACKET_BLOCKS else "truncated-block"
    trailer = _U32_UNPACK[endian](mm, pos + length - 4)[0]
    if trailer != length:
        return "garbage"
    return block_type, length, endian


#: the options of an Interface Description Block that say how its timestamps count
_IF_TSRESOL, _IF_TSOFFSET, _OPT_END = 9, 14, 0


def _interface(mm: mmap.mmap | bytes, pos: int, endian: str) -> Interface:
    linktype, _, snaplen = struct.unpack_from(endian + "HHI", mm, pos + 8)
    length = struct.unpack_from(endian + "I", mm, pos + 4)[0]
    units, offset = 1_000_000, 0  # microseconds, no offset: the format's defaults
    at, end = pos + 16, pos + length - 4
    while at + 4 <= end:
        code, size = struct.unpack_from(endian + "HH", mm, at)
        if code == _OPT_END:
            break
        if at + 4 + size > end:
            break  # a damaged option: the defaults stand
        if code == _IF_TSRESOL and size >= 1:
            # "the most significant bit ... 0: the remaining bits indicate the resolution
            # of the timestamp as a negative power of 10 ... 1: a negative power of 2"
            value = mm[at + 4]
            units = 2 ** (value & 0x7F) if value & 0x80 else 10 ** (value & 0x7F)
        elif code == _IF_TSOFFSET and size >= 8:
            offset = struct.unpack_from(endian + "q", mm, at + 4)[0]
        at += 4 + size + (-size % 4)
    return Interface(linktype=linktype, snaplen=snaplen, units=max(units, 1), offset=offset)


# -- reading ----------------------------------------------------------------------------


def read_split(split: Split) -> Iterator[Record | Problem]:
    """The packet records of one split, in file order (a packet block naming an interface
    that was never described gives a ``Problem`` for its frame)."""
    for item in read_frames(split):
        yield item if isinstance(item, Problem) else Record(*item)


#: a packet record as a plain tuple: (frame, link type, captured length, original length,
#: data, time), the fields of :class:`Record` in order (the engines read millions of them)
RawRecord = tuple[int, int, int, int, bytes, float]


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


#: bytes read between two releases of the pages behind (see :func:`_release`)
RELEASE_BYTES: Final = 16 * 1024 * 1024


def _release(mm: mmap.mmap, start: int, end: int) -> None:
    """Unmap from this process the pages of ``mm`` between ``start`` and ``end``, which
    the reader has passed: a read-only file mapping keeps every page it touched resident
    (counted in the process's memory) until unmapped, so without this a reader's memory
    would grow with the file. The pages stay in the page cache; nothing is lost."""
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE  # whole pages only
    last = end // mmap.PAGESIZE * mmap.PAGESIZE
    if last > first and hasattr(mmap, "MADV_DONTNEED"):
        mm.madvise(mmap.MADV_DONTNEED, first, last - first)


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
