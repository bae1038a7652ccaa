"""How the Spark engine's scanning tasks share the frames (``--spark-read scan``): the
partitions of :func:`~pubproof.pipeline.source.keyed_frames` split its whole sequence
exactly, each 4-tuple to the partition :func:`~pubproof.pipeline.source.partition_of`
names and the quarantine to partition 0, and a task passes over the others' frames
without dissecting most of them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.builds import pure_only
from support.pipeline_builder import ether, ipv4, pcap, tcp
from support.spark_captures import many_captures

from pubproof.pipeline import source
from pubproof.pipeline.source import QUARANTINE_GROUP, keyed_frames, partition_of


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    directory = tmp_path_factory.mktemp("partitions")
    files = many_captures()
    # frames that are no segment, some with a 4-tuple's address bytes (quarantined)
    damaged = bytearray(ether(ipv4("10.0.0.1", "10.0.0.2", tcp(40000, 1883, 5, 0, 0x18, b"x"))))
    damaged[46] = 4 << 4  # a TCP header of 16 bytes
    files["odd.pcap"] = pcap(
        [
            ether(ipv4("10.0.0.1", "10.0.0.2", b"udp datagram", proto=17)),
            bytes(damaged),
            ether(ipv4("10.0.0.1", "10.0.0.2", tcp(40000, 1883, 5, 0, 0x02))),
            ether(ipv4("10.0.0.3", "10.0.0.2", tcp(40001, 1883, 5, 0, 0x02))),
            bytes(damaged),
        ]
    )
    for name, data in files.items():
        (directory / name).write_bytes(data)
    here = os.getcwd()
    os.chdir(directory)
    try:
        names = sorted(p.name for p in Path(".").iterdir())
        plans = []
        for split_bytes in (1_000, 50_000):
            plans += source.plans(source.inputs(names), split_bytes)
        return plans
    finally:
        os.chdir(here)


def _share(plan: Any, count: int, partition: int) -> list[tuple[str, int, Any]]:
    return [k for split in plan.splits for k in keyed_frames(split, count, partition)]


@pytest.mark.parametrize("count", [2, 3, 5])
def test_partitions_split_the_frames_exactly(planned: list[Any], count: int) -> None:
    for plan in planned:
        whole = _share(plan, 1, 0)
        shares = [_share(plan, count, p) for p in range(count)]
        # together, every frame once, each share in the whole sequence's order
        merged = sorted((k for share in shares for k in share), key=lambda k: k[1])
        assert merged == sorted(whole, key=lambda k: k[1]), plan.capture
        for p, share in enumerate(shares):
            assert share == [k for k in whole if k in share]  # in order
            for group, _, _ in share:
                if group == QUARANTINE_GROUP:
                    assert p == 0
                else:
                    assert partition_of(plan.capture, group, count) == p
    groups = {k[0] for plan in planned for k in _share(plan, 1, 0)}
    assert len(groups) > 10 and QUARANTINE_GROUP in groups  # not vacuous


def test_the_hash_is_the_same_in_every_process() -> None:
    # crc32, not Python's salted str hash: the shuffle and every task agree
    assert partition_of("a.pcap", "10.0.0.1:1|10.0.0.2:1883", 1 << 32) == 2067036837


@pure_only
def test_a_share_dissects_few_of_the_others_frames(
    planned: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0
    dissect = source.dissect  # type: ignore[attr-defined]

    def counting(linktype: int, data: bytes, time: float = 0.0) -> Any:
        nonlocal calls
        calls += 1
        return dissect(linktype, data, time)

    monkeypatch.setattr(source, "dissect", counting)
    plan = max(planned, key=lambda p: (p.frames, -len(p.splits)))  # few splits
    total = len(_share(plan, 1, 0))
    calls = 0
    mine = len(_share(plan, 4, 1))
    assert 0 < mine < total
    # its own frames, and of the others' only the first of each 4-tuple in a split
    # (and frames the key does not tell: VLAN, IPv6, damaged)
    assert calls < mine + (total - mine) // 4, (calls, mine, total)


def test_the_reader_passes_over_exactly_the_frames_with_a_skipped_key(
    planned: list[Any],
) -> None:
    from pubproof.pipeline.capture import Problem
    from pubproof.pipeline.capture_read import read_frames
    from pubproof.pipeline.dissect import ETHERNET, segment_key

    def key(record: Any) -> bytes | None:
        if isinstance(record, Problem) or record[1] != ETHERNET:
            return None
        return segment_key(ETHERNET, record[4])

    formats = set()
    for plan in planned:
        for split in plan.splits:
            records = list(read_frames(split))
            keys = sorted({k for k in map(key, records) if k is not None})
            skip = set(keys[::2])  # every other 4-tuple's key
            kept = [r for r in records if key(r) not in skip]
            assert list(read_frames(split, skip)) == kept
            if skip and len(kept) < len(records):
                formats.add(split.fmt)
    assert formats == {"pcap", "pcapng"}  # both readers passed over frames


def test_a_local_master_scans_and_a_cluster_shuffles() -> None:
    from pubproof.pipeline.engine_spark import READS, default_read

    assert READS == ("scan", "shuffle")
    for master in ("local", "local[2]", "local[*]", "local[4,2]"):
        assert default_read(master) == "scan", master
    for master in ("local-cluster[2,1,1024]", "spark://127.0.0.1:7077", "yarn", "k8s://h:443"):
        assert default_read(master) == "shuffle", master


def test_an_unknown_read_is_refused_before_spark_starts(tmp_path: Path) -> None:
    from pubproof.pipeline.connection_state import Config
    from pubproof.pipeline.engine_spark import run

    with pytest.raises(ValueError, match="unknown read 'both'"):
        run([], Config(), str(tmp_path), read="both", spark=object())
