"""The capture readers: pcap and pcapng in both byte orders, splits on record boundaries,
and every kind of broken file ending in a problem with a reason, never an exception."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from support.pipeline_builder import Conn, ether, ipv4, other_block, pcap, pcapng, sll, tcp

from pubproof.pipeline.capture import Plan, Problem, Record
from pubproof.pipeline.capture_plan import plan
from pubproof.pipeline.capture_read import read_split


def _frames(count: int) -> list[bytes]:
    conn = Conn()
    return [ether(conn.segment("c2s", bytes([i % 256]) * (10 + i))) for i in range(count)]


def _read(path: Path, split_bytes: int = 1 << 30) -> tuple[list[Record | Problem], Plan]:
    result = plan(path.name, str(path), split_bytes)
    items = [item for split in result.splits for item in read_split(split)]
    return items, result


@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_pcap_both_byte_orders_and_resolutions(tmp_path: Path, endian: str, nano: bool) -> None:
    frames = _frames(5)
    path = tmp_path / "a.pcap"
    path.write_bytes(pcap(frames, endian=endian, nano=nano))
    items, result = _read(path)
    assert [r.frame for r in items] == [1, 2, 3, 4, 5]
    assert [r.data for r in items] == frames  # type: ignore[union-attr]
    assert result.frames == 5 and not result.problems


@pytest.mark.parametrize("endian", ["<", ">"])
def test_pcapng_interfaces_link_types_and_skipped_blocks(tmp_path: Path, endian: str) -> None:
    frames = _frames(4)
    body = pcapng(
        [(0, frames[0]), (1, sll(frames[1][14:])), (0, frames[2]), (1, sll(frames[3][14:]))],
        interfaces=((1, 65535), (113, 65535)),
        endian=endian,
        extra=other_block(endian) + other_block(endian, 4),
    )
    path = tmp_path / "a.pcapng"
    path.write_bytes(body)
    items, result = _read(path)
    assert [(r.frame, r.linktype) for r in items] == [(1, 1), (2, 113), (3, 1), (4, 113)]  # type: ignore[union-attr]
    assert result.skipped_blocks == {"0x00000005": 1, "0x00000004": 1}


@pytest.mark.parametrize("split_bytes", [1, 1 << 30])
def test_pcapng_sections_of_both_byte_orders_in_one_file(tmp_path: Path, split_bytes: int) -> None:
    """A file of two sections, little-endian then big-endian (each with its own interface,
    a different link type): every frame read, each with its section's interface; the
    reader follows the byte order from one Section Header Block to the next."""
    frames = _frames(6)
    path = tmp_path / "two.pcapng"
    path.write_bytes(
        pcapng([(0, f) for f in frames[:3]], endian="<")
        + pcapng([(0, sll(f[14:])) for f in frames[3:]], interfaces=((113, 65535),), endian=">")
    )
    items, result = _read(path, split_bytes)
    read = [(r.frame, r.linktype) for r in items]  # type: ignore[union-attr]
    assert read == [(1, 1), (2, 1), (3, 1), (4, 113), (5, 113), (6, 113)]
    assert [r.data for r in items] == frames[:3] + [sll(f[14:]) for f in frames[3:]]  # type: ignore[union-attr]
    assert result.frames == 6 and not result.problems


def test_simple_packet_blocks(tmp_path: Path) -> None:
    frames = _frames(3)
    path = tmp_path / "s.pcapng"
    path.write_bytes(pcapng([(0, f) for f in frames], simple=True))
    items, _ = _read(path)
    assert [r.data for r in items] == frames  # type: ignore[union-attr]


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
@pytest.mark.parametrize("split_bytes", [1, 100, 333, 10_000])
def test_splits_cover_every_record_once(tmp_path: Path, fmt: str, split_bytes: int) -> None:
    frames = _frames(40)
    path = tmp_path / f"a.{fmt}"
    path.write_bytes(pcap(frames) if fmt == "pcap" else pcapng([(0, f) for f in frames]))
    items, result = _read(path, split_bytes)
    assert [r.frame for r in items] == list(range(1, 41))
    assert [r.data for r in items] == frames  # type: ignore[union-attr]
    splits = result.splits
    if split_bytes < 10_000:
        assert len(splits) > 1
    assert all(a.end == b.start for a, b in itertools.pairwise(splits))
    assert sum(s.frames for s in splits) == 40
    assert [s.first_frame for s in splits] == [1] + [
        1 + sum(s.frames for s in splits[:i]) for i in range(1, len(splits))
    ]


def test_bad_magic_and_empty_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"GET / HTTP/1.1\r\n" * 4)
    result = plan("bad.pcap", str(bad))
    assert [(p.reason, p.frame) for p in result.problems] == [("bad-magic", None)]
    assert result.frames == 0 and not result.splits
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    assert [p.reason for p in plan("empty.pcap", str(empty)).problems] == ["empty-file"]


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
@pytest.mark.parametrize("cut", [1, 7, 20])
def test_truncated_last_record(tmp_path: Path, fmt: str, cut: int) -> None:
    frames = _frames(3)
    body = pcap(frames) if fmt == "pcap" else pcapng([(0, f) for f in frames])
    path = tmp_path / f"t.{fmt}"
    path.write_bytes(body[:-cut])
    items, result = _read(path)
    assert [r.frame for r in items] == [1, 2]
    problems = result.problems
    assert [(p.reason, p.frame) for p in problems] == [("truncated-record", 3)]
    assert result.frames == 3


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_garbage_after_records_ends_the_file(tmp_path: Path, fmt: str) -> None:
    frames = _frames(3)
    body = pcap(frames) if fmt == "pcap" else pcapng([(0, f) for f in frames])
    path = tmp_path / f"g.{fmt}"
    path.write_bytes(body + b"\xff" * 64)
    items, result = _read(path)
    assert [r.frame for r in items] == [1, 2, 3]
    assert [p.reason for p in result.problems] == ["garbage"]
    assert result.problems[0].offset == len(body)


def test_snaplen_cut_record_keeps_both_lengths(tmp_path: Path) -> None:
    frame = ether(ipv4("10.0.0.1", "10.0.0.2", tcp(5, 1883, 1, 0, 0x18, b"x" * 200)))
    path = tmp_path / "cut.pcap"
    path.write_bytes(pcap([frame], snaplen=100))
    items, _ = _read(path)
    record = items[0]
    assert isinstance(record, Record)
    assert (record.caplen, record.origlen, len(record.data)) == (100, len(frame), 100)
