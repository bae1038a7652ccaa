"""From capture files to keyed frames: the reading stage both engines share.

:func:`inputs` resolves the command line's files and directories into captures (named as
given, relative); :func:`plans` walks them into splits; :func:`keyed_frames` reads one
split and gives, per frame, either its TCP segment keyed by the canonical (capture,
4-tuple) or its quarantine row. The key's 4-tuple is the two endpoints in sorted order, so
both directions of a connection share it without knowing yet which end is the client.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pubproof.pipeline.capture import DEFAULT_SPLIT_BYTES, Plan, Problem, Split
from pubproof.pipeline.capture_plan import plan
from pubproof.pipeline.capture_read import read_frames
from pubproof.pipeline.dissect import Segment, dissect, segment_key
from pubproof.pipeline.rows import QuarantineRow

CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".dmp")
QUARANTINE_GROUP: Final = ""  # the key group of frames that go straight to quarantine
KEYS_MAX: Final = 1 << 16  # 4-tuples whose key a reader remembers (memory stays bounded)

#: why a frame is no TCP segment, for the quarantine's detail column
REASONS: Final = {
    "unsupported-link-type": "a link type the pipeline does not read",
    "not-ip": "not an IPv4 or IPv6 packet",
    "not-tcp": "an IP packet that carries no TCP",
    "ip-fragment": "an IP fragment (not reassembled)",
    "truncated-header": "the snapshot length cut the link, IP or TCP header",
    "bad-header": "an IP or TCP header with impossible lengths",
    "unknown-interface": "a packet block naming an interface never described",
    "garbage": "bytes that are no record",
    "truncated-record": "the file ends inside this record",
    "truncated-block": "the file ends inside a block",
    "truncated-header-file": "the file header is cut short",
    "bad-magic": "not a pcap or pcapng file",
    "empty-file": "the file is empty",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Capture:
    """A capture file: its name as given (relative) and where to open it."""

    name: str
    path: str


class InputError(ValueError):
    """A path on the command line that is neither a file nor a directory of captures."""


def inputs(paths: Sequence[str]) -> list[Capture]:
    """The captures named by ``paths``: files as given, directories walked for capture
    files (sorted, named by the directory as given plus the relative path)."""
    found: dict[str, Capture] = {}
    for given in paths:
        if os.path.isdir(given):
            for root, dirs, files in os.walk(given):
                dirs.sort()
                for name in sorted(files):
                    if name.lower().endswith(CAPTURE_SUFFIXES):
                        full = os.path.join(root, name)
                        rel = os.path.normpath(full)
                        found.setdefault(rel, Capture(name=rel, path=os.path.abspath(full)))
        elif os.path.isfile(given):
            rel = os.path.normpath(given)
            found.setdefault(rel, Capture(name=rel, path=os.path.abspath(given)))
        else:
            raise InputError(f"{given}: no such file or directory")
    return sorted(found.values(), key=lambda c: c.name)


def plans(captures: Sequence[Capture], split_bytes: int = DEFAULT_SPLIT_BYTES) -> list[Plan]:
    """The splits of every capture (the driver's header walk)."""
    return [plan(c.name, c.path, split_bytes) for c in captures]


def problem_row(problem: Problem) -> QuarantineRow:
    """The quarantine row of a problem found while planning or reading."""
    frames = 1 if problem.frame is not None else 0
    return QuarantineRow(
        problem.capture,
        problem.frame,
        problem.frame,
        frames,
        problem.reason,
        None,
        problem.offset,
        problem.length,
        problem.detail,
    )


def canonical(segment: Segment) -> str:
    """Both directions' shared key: the two endpoints, sorted."""
    a, b = f"{segment.src}:{segment.sport}", f"{segment.dst}:{segment.dport}"
    return (
        f"{a}|{b}" if (segment.src, segment.sport) <= (segment.dst, segment.dport) else f"{b}|{a}"
    )


#: (group, frame, value): value is a Segment, or a quarantine row when group is ""
Keyed = tuple[str, int, Any]


def group_hash(capture: str, group: str) -> int:
    """The hash that spreads the 4-tuples over partitions: the same in every process
    (Python's own string hash is salted per process)."""
    return zlib.crc32(f"{capture}\x00{group}".encode())


def partition_of(capture: str, group: str, count: int) -> int:
    """Which of ``count`` partitions tracks the 4-tuple ``group`` of ``capture``."""
    return group_hash(capture, group) % count


def keyed_frames(split: Split, count: int = 1, partition: int = 0) -> Iterator[Keyed]:
    """Every frame of a split: its segment under its 4-tuple, or its quarantine row.

    With ``count`` above 1, only partition ``partition``'s share (:func:`partition_of`):
    the frames of its 4-tuples, and, for partition 0, the quarantine rows. That is the
    whole sequence filtered, except that a frame of a 4-tuple already found to be
    another partition's is passed over before it is dissected when its 12 address bytes
    tell (:func:`~pubproof.pipeline.dissect.segment_key`, looked up by the reader in the
    file's memory, before the frame is copied)."""
    capture = split.capture
    quarantine = partition == 0
    shared = count > 1
    # canonical() of the 4-tuples seen, or "" for another partition's
    keys: dict[tuple[str, int, str, int], str] = {}
    others: set[bytes] = set()  # segment_key() of frames of another partition's 4-tuples
    for record in read_frames(split, others if shared else None):
        if isinstance(record, Problem):
            assert record.frame is not None
            if quarantine:
                yield QUARANTINE_GROUP, record.frame, problem_row(record)
            continue
        frame, linktype, caplen, _, data, time = record
        result = dissect(linktype, data, time)
        if isinstance(result, str):
            if not quarantine:
                continue
            detail = REASONS.get(result, result)
            if result == "unsupported-link-type":
                detail = f"{detail} ({linktype})"
            row = QuarantineRow(capture, frame, frame, 1, result, None, None, caplen, detail)
            yield QUARANTINE_GROUP, frame, row
            continue
        endpoints = result[:4]
        key = keys.get(endpoints)
        if key is None:
            if len(keys) >= KEYS_MAX:
                keys.clear()
                others.clear()
            key = canonical(result)
            if shared and partition_of(capture, key, count) != partition:
                key = ""
            keys[endpoints] = key
        if not key:
            # the reader passes over the 4-tuple's next frames that have this key
            raw = segment_key(linktype, data)
            if raw is not None:
                others.add(raw)
            continue
        yield key, frame, result
