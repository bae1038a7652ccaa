"""The streaming table writer: rows in any order, in runs smaller than the table, come out
exactly as one sort of all of them (ties in arrival order, nulls first), and its scratch
runs are gone afterwards."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pubproof.pipeline.output import TableWriter, write_rows
from pubproof.pipeline.tables import TABLES


def _rows(count: int, seed: int) -> list[tuple[object, ...]]:
    rnd = random.Random(seed)
    width = len(TABLES["quarantine"])
    rows = []
    for i in range(count):
        row: list[object] = [None] * width
        row[0] = rnd.choice(["a.pcap", "b.pcap", "é.pcap"])
        row[1] = rnd.choice([None, *range(5)])  # frame: nulls and ties
        row[2], row[3], row[7] = i, 1, rnd.randrange(100)
        row[4] = rnd.choice(["not-tcp", "garbage", "not-ip"])
        row[5] = rnd.choice([None, "c1", "c2"])
        row[8] = f"row {i}"  # tells tied rows apart: their order must be kept
        rows.append(tuple(row))
    return rows


@pytest.mark.parametrize("run_rows", [1, 7, 1000])
def test_runs_merge_into_one_sort(tmp_path: Path, run_rows: int) -> None:
    rows = _rows(300, seed=run_rows)
    write_rows(str(tmp_path / "whole"), "quarantine", rows)
    writer = TableWriter(str(tmp_path / "runs"), "quarantine", run_rows=run_rows)
    for start in range(0, len(rows), 13):
        writer.add(rows[start : start + 13])
    writer.close()
    whole = pq.read_table(tmp_path / "whole" / "quarantine")
    merged = pq.read_table(tmp_path / "runs" / "quarantine")
    assert merged.equals(whole)
    assert sorted(os.listdir(tmp_path / "runs")) == ["quarantine"]
