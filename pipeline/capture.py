"""Capture files (pcap, pcapng): what the planning and the reading of them share.

The driver cuts each file into splits on record boundaries (:mod:`.capture_plan`: it walks
the record and block headers only, and each :class:`Split` carries what a worker needs to
read its byte range alone); the workers then read their ranges, in parallel
(:mod:`.capture_read`). Here: the formats' constants, the records and their splits, the
problems found, and the readers of a pcapng block's header and of an interface description,
which both use.

Frames are numbered as tshark numbers them: 1, 2, ... over the packet records of the
file (pcap records; pcapng Enhanced, Simple and obsolete Packet Blocks). Other pcapng
blocks (name resolution, statistics, decryption secrets, custom...) are skipped and
counted. Whatever cannot be read is a :class:`Problem` naming the reason, the byte offset
and the bytes it covers, never an exception: a bad magic number (``bad-magic``, the whole
file), a record cut short by the end of the file (``truncated-record``, counted as a
frame), an impossible length or block (``garbage``).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field, fields
from typing import Any, Final

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
#: A record longer than this is not a record: the file is garbage from here on.
MAX_RECORD: Final = 0x4000000  # 64 MiB, far above any real snapshot length (262,144)
DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024
#: the smallest split :func:`split_bytes_for` chooses (a split's task has a fixed cost)
MIN_AUTO_SPLIT_BYTES = 4 * 1024 * 1024


#: the unpacking done once per record or block, compiled once per byte order (a format
#: string built and looked up in struct's cache per call cost more than the unpacking)
_U32: Final = {order: struct.Struct(order + "I") for order in "<>"}
_U32X2: Final = {order: struct.Struct(order + "II") for order in "<>"}
# unpack_from of _U32 and _U32X2 bound once per byte order: a Struct's method is
# looked up at every call in the compiled build (the plan's walk reads every block's and
# every record's header)
_U32_UNPACK: Final = {order: unpacker.unpack_from for order, unpacker in _U32.items()}
_U32X2_UNPACK: Final = {order: unpacker.unpack_from for order, unpacker in _U32X2.items()}


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
        # whole seconds apart from the rest: a nanosecond stamp (about 1.8e18) is past
        # 2**53, where the compiled build's division (both to double first) and Python's
        # exact one round apart; both parts here convert exactly, so both builds agree
        whole, rest = divmod(stamp, self.units)
        return whole + rest / self.units + self.offset

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


#: a packet record as a plain tuple: (frame, link type, captured length, original length,
#: data, time), the fields of :class:`Record` in order (the engines read millions of them)
RawRecord = tuple[int, int, int, int, bytes, float]


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
