"""Nothing read silently as nothing: damaged copies of a real capture (the committed
sample, recorded from Debian's mosquitto, as pcapng and as pcap) are read past the damage,
the bytes in between quarantined as ``garbage``, and no frame is invented: what is read is
the undamaged file's frames with a few consecutive ones missing, byte for byte. A file
that is no capture at all makes ``pubproof check`` exit non-zero, naming the file and why,
after writing the tables of the rest; the summary line names every quarantined byte count.
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from support.builds import pure_only
from support.pipeline_builder import read_tables

from pubproof.main import main
from pubproof.pipeline import capture_plan
from pubproof.pipeline.capture import Plan, Record
from pubproof.pipeline.capture_plan import plan
from pubproof.pipeline.capture_read import read_split

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "mqtt-sample.pcapng"
#: the most consecutive frames one damage may take with it: the damaged record, and the
#: one before it when its length was hit so that it ran into the next
MOST_LOST = 2

Frame = tuple[int, int, bytes]


def _read(path: Path, split_bytes: int = 1 << 30) -> tuple[Plan, list[Frame]]:
    result = plan(path.name, str(path), split_bytes)
    frames = [
        (item.caplen, item.origlen, item.data)
        for split in result.splits
        for item in read_split(split)
        if isinstance(item, Record)
    ]
    return result, frames


@pytest.fixture(scope="module")
def sample_pcap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample as a pcap file (editcap, installed with tshark)."""
    if shutil.which("editcap") is None:
        pytest.skip("editcap (tshark) is not installed")
    path = tmp_path_factory.mktemp("pcap") / "sample.pcap"
    subprocess.run(["editcap", "-F", "pcap", str(SAMPLE), str(path)], check=True)
    return path


def _records(body: bytes, fmt: str) -> list[tuple[int, int, int]]:
    """(offset, length, offset of the length field) of every record or block."""
    found = []
    pos = 24 if fmt == "pcap" else 0
    while pos < len(body):
        if fmt == "pcap":
            length = 16 + struct.unpack_from("<I", body, pos + 8)[0]
            found.append((pos, length, pos + 8))
        else:
            length = struct.unpack_from("<I", body, pos + 4)[0]
            found.append((pos, length, pos + 4))
        pos += length
    return found


def _missing_run(good: list[Frame], got: list[Frame]) -> int:
    """How many consecutive frames of ``good`` are missing from ``got``; fails when
    ``got`` is not ``good`` with one run of frames taken out (a frame invented, changed
    or reordered)."""
    same = 0
    while same < len(got) and got[same] == good[same]:
        same += 1
    lost = len(good) - len(got)
    assert lost >= 0, "frames invented"
    assert got[same:] == good[same + lost :], "a frame read that the undamaged file lacks"
    return lost


def _covered(result: Plan, size: int, start: int) -> None:
    """The splits and the problems cover the file after its header, each byte once."""
    ranges = sorted(
        [(s.start, s.end) for s in result.splits]
        + [(p.offset, p.offset + p.length) for p in result.problems]
    )
    assert ranges[0][0] == start and ranges[-1][1] == size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), ranges


def test_one_flipped_bit_in_a_block_length_costs_one_frame(tmp_path: Path) -> None:
    """The issue's example: a flipped bit in a pcapng block length ended the read (221 of
    237 frames never looked at). Now the walk reads on at the next block."""
    body = bytearray(SAMPLE.read_bytes())
    blocks = _records(bytes(body), "pcapng")
    offset, _, length_at = blocks[18]  # a packet block, 16 frames into the file
    body[length_at] ^= 0x04
    damaged = tmp_path / "flipped.pcapng"
    damaged.write_bytes(body)
    _, good = _read(SAMPLE)
    result, got = _read(damaged)
    assert len(good) == 237 and _missing_run(good, got) == 1
    assert [(p.reason, p.offset) for p in result.problems] == [("garbage", offset)]
    _covered(result, len(body), 0)


@pure_only
def test_without_resynchronisation_the_read_would_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mutant: a walk that does not look for valid blocks again loses the rest."""
    body = bytearray(SAMPLE.read_bytes())
    body[_records(bytes(body), "pcapng")[18][2]] ^= 0x04
    damaged = tmp_path / "flipped.pcapng"
    damaged.write_bytes(body)
    monkeypatch.setattr(capture_plan._PcapngWalker, "next_valid", lambda self, search: None)
    _, got = _read(damaged)
    assert len(got) < 20


@pytest.mark.parametrize("fmt", ["pcapng", "pcap"])
@pytest.mark.parametrize("damage", ["length-bit", "cut"])
def test_damaged_copies_lose_a_few_frames_and_invent_none(
    tmp_path: Path, sample_pcap: Path, fmt: str, damage: str
) -> None:
    source = SAMPLE if fmt == "pcapng" else sample_pcap
    body = source.read_bytes()
    _, good = _read(source)
    records = _records(body, fmt)
    rnd = random.Random(f"{fmt}-{damage}")
    recovered_after = 0
    for _ in range(40):
        copy = bytearray(body)
        offset, length, length_at = records[rnd.randrange(3, len(records) - 3)]
        if damage == "length-bit":
            copy[length_at + rnd.randrange(4)] ^= 1 << rnd.randrange(8)
        else:
            at = offset + rnd.randrange(length)
            del copy[at : at + rnd.randrange(1, 40)]
        path = tmp_path / f"damaged.{fmt}"
        path.write_bytes(copy)
        result, got = _read(path, split_bytes=rnd.choice([1 << 30, 2000]))
        assert _missing_run(good, got) <= MOST_LOST
        assert any(p.reason == "garbage" for p in result.problems)
        _covered(result, len(copy), 24 if fmt == "pcap" else 0)
        # frames after the damage were read (the damaged record is at least 3 from the end)
        recovered_after += got[-1] == good[-1]
    assert recovered_after == 40


def test_check_reads_past_damage_and_names_the_quarantined_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = bytearray(SAMPLE.read_bytes())
    offset, length, _ = _records(bytes(body), "pcapng")[120]
    del body[offset + 40 : offset + 47]  # seven bytes cut inside a packet block
    damaged = tmp_path / "cut.pcapng"
    damaged.write_bytes(body)
    out, good_out = tmp_path / "out", tmp_path / "good"
    assert main(["check", str(damaged), "--out", str(out), "--engine", "python"]) == 0
    printed = capsys.readouterr().out
    rec = json.loads((out / "reconciliation.json").read_text(encoding="utf-8"))
    assert rec["ok"] and rec["frames_in"] == 236
    assert rec["quarantined_bytes_by_reason"] == {"garbage": length - 7}
    assert f"{length - 7:,} bytes garbage (0 frames)" in printed
    assert "garbage" in (out / "report.html").read_text(encoding="utf-8")
    assert main(["check", str(SAMPLE), "--out", str(good_out), "--engine", "python"]) == 0

    def packets(folder: Path) -> list[tuple[object, ...]]:
        keys = ("direction", "type", "qos", "packet_id", "topic", "length")
        return sorted(
            (
                (str(row["connection"])[len(str(row["capture"])) :], *(row[k] for k in keys))
                for row in read_tables(str(folder))["packets"]
            ),
            key=repr,
        )

    damaged_packets, good_packets = packets(out), packets(good_out)
    # the packets of the frames after the cut are there; none that the original lacks
    assert len(good_packets) - 2 <= len(damaged_packets) <= len(good_packets)
    assert all(p in good_packets for p in damaged_packets)


def test_a_file_that_is_no_capture_makes_the_exit_status_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    noise = tmp_path / "noise.pcap"
    noise.write_bytes(random.Random(7).randbytes(5000))
    out = tmp_path / "out"
    status = main(["check", str(noise), str(SAMPLE), "--out", str(out), "--engine", "python"])
    printed = capsys.readouterr()
    assert status == 3
    assert f"{noise}: could not be read (bad-magic): not a pcap or pcapng file" in printed.err
    assert "5,000 bytes bad-magic (0 frames)" in printed.out
    rec = json.loads((out / "reconciliation.json").read_text(encoding="utf-8"))
    assert rec["ok"] and rec["frames_in"] == 237  # the sample's tables are written
    assert [u["capture"] for u in rec["unreadable"]] == [str(noise)]
    assert len(read_tables(str(out))["packets"]) == 97
    # alone, with --json and --quiet: the JSON line, the error, the status
    status = main(
        ["check", str(noise), "--out", str(out), "--engine", "python", "--json", "--quiet"]
    )
    printed = capsys.readouterr()
    assert status == 3 and json.loads(printed.out)["unreadable"][0]["reason"] == "bad-magic"
    assert "could not be read" in printed.err


def test_a_capture_without_packets_is_readable(tmp_path: Path) -> None:
    """A pcap file header and no record: empty, not unreadable (status 0)."""
    empty = tmp_path / "header-only.pcap"
    empty.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    assert plan(empty.name, str(empty)).unreadable is None
    status = main(["check", str(empty), "--out", str(tmp_path / "o"), "--engine", "python"])
    assert status == 0
