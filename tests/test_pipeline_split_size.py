"""The split size ``pubproof check`` chooses when ``--split-bytes`` is not given."""

from __future__ import annotations

import os

import pytest

from pubproof.pipeline.capture import DEFAULT_SPLIT_BYTES, MIN_AUTO_SPLIT_BYTES, split_bytes_for
from pubproof.pipeline.run import Job, local_cores, split_bytes

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("master", "cores"),
    [
        ("local", 1),
        ("local[3]", 3),
        ("local[4,2]", 4),
        ("local[*]", os.cpu_count() or 1),
        ("spark://host:7077", None),
        ("yarn", None),
        ("local-cluster[2,1,1024]", None),
    ],
)
def test_local_cores_reads_the_master(master: str, cores: int | None) -> None:
    assert local_cores(master) == cores


def test_two_splits_per_core_within_bounds() -> None:
    # the case that motivated it: 77 MB on two cores is four splits, not 64 + 13 MB
    assert split_bytes_for(77 * MIB, 2) == -(-77 * MIB // 4)
    assert split_bytes_for(10 * MIB, 2) == MIN_AUTO_SPLIT_BYTES  # not 2.5 MiB tasks
    assert split_bytes_for(10_000 * MIB, 2) == DEFAULT_SPLIT_BYTES
    assert split_bytes_for(0, 8) == MIN_AUTO_SPLIT_BYTES
    for total in (1, 5 * MIB, 77 * MIB, 200 * MIB, 300 * MIB):
        size = split_bytes_for(total, 2)
        splits = -(-total // size)
        # two per core, unless that would make splits larger than the default
        assert splits <= max(4, -(-total // DEFAULT_SPLIT_BYTES))


def test_the_job_chooses_by_engine_and_master() -> None:
    total = 77 * MIB
    spark = Job(paths=[], out="", engine="spark", master="local[2]")
    assert split_bytes(spark, total) == split_bytes_for(total, 2)
    assert split_bytes(Job(paths=[], out="", engine="python"), total) == DEFAULT_SPLIT_BYTES
    cluster = Job(paths=[], out="", engine="spark", master="spark://h:7077")
    assert split_bytes(cluster, total) == DEFAULT_SPLIT_BYTES
    given = Job(paths=[], out="", engine="spark", master="local[2]", split_bytes=1000)
    assert split_bytes(given, total) == 1000
