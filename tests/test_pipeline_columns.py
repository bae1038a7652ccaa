"""Rows held as columns (:class:`pubproof.pipeline.rows.Columns`, how the cross-connection
stage makes ``deliveries``): the writers take them as they take row tuples, mixed with
tuples in any order, and write exactly the same tables and runs; Arrow's conversion a
column at a time gives the same table as the struct conversion of the rows."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pubproof.pipeline import output, staging
from pubproof.pipeline.output import TableWriter, write_rows
from pubproof.pipeline.rows import Columns, DeliveryRow
from pubproof.pipeline.tables import TABLES

Row = tuple[object, ...]


def _rows(count: int, seed: int) -> list[Row]:
    """Quarantine rows with many ties on the sort key; ``detail`` tells tied rows apart
    (their order must be kept)."""
    rnd = random.Random(seed)
    width = len(TABLES["quarantine"])
    rows = []
    for i in range(count):
        row: list[object] = [None] * width
        row[0] = rnd.choice(["a.pcap", "é.pcap"])
        row[1] = rnd.choice([None, 1, 2])
        row[2], row[3], row[7] = i, 1, rnd.randrange(3)
        row[4] = rnd.choice(["not-tcp", "garbage"])
        row[5] = rnd.choice([None, "c1"])
        row[8] = f"row {i}"
        rows.append(tuple(row))
    return rows


def _columns(rows: Sequence[Row]) -> Columns:
    columns = Columns(len(rows[0]))
    for row in rows:
        columns.append(row)
    return columns


def _chunks(rows: list[Row], seed: int) -> list[list[Row] | Columns]:
    """``rows`` in chunks of 1 to 20, each as tuples or as columns (at random)."""
    rnd = random.Random(seed)
    chunks: list[list[Row] | Columns] = []
    at = 0
    while at < len(rows):
        chunk = rows[at : at + rnd.randint(1, 20)]
        chunks.append(_columns(chunk) if rnd.random() < 0.5 else chunk)
        at += len(chunk)
    return chunks


def test_columns_hold_rows_in_order_and_check_their_width() -> None:
    rows = _rows(30, seed=1)
    columns = _columns(rows)
    assert len(columns) == 30 and columns.width == len(rows[0])
    assert list(columns) == rows
    assert columns == _columns(rows) and columns != _columns(rows[:-1])
    first = columns.take(12)
    assert list(first) == rows[:12] and list(columns) == rows[12:]
    columns.extend(first)
    assert list(columns) == rows[12:] + rows[:12]
    with pytest.raises(ValueError, match="a row of 2 values"):
        columns.append(("a", 1))
    with pytest.raises(ValueError, match="columns added"):
        columns.extend(Columns(3))
    columns.clear()
    assert len(columns) == 0 and list(columns) == []


@pytest.mark.parametrize("held", [False, True])
def test_columns_convert_to_the_table_the_rows_convert_to(held: bool) -> None:
    """Every type of ``deliveries``, nulls among them: the same Arrow table either way."""
    rows = [
        ("c", "s:1", "a/b", "out", "c1", None, 7, 70, 1.25, 1, False, True, 3, "ab", 2,
         "c0", 5, 50, None, 0.5, "copy", None),
        ("c", "s:1", "a/b", "in", "c0", "id", 5, 50, 0.75, 2, True, False, None, "", 0,
         None, None, None, True, None, "delivered", 4),
    ]  # fmt: skip
    assert all(len(row) == len(DeliveryRow._fields) for row in rows)
    columns = _columns(rows)
    assert output._arrow("deliveries", columns, held=held).equals(
        output._arrow("deliveries", rows, held=held)
    )
    with pytest.raises(ValueError, match="columns for deliveries"):
        output._arrow("deliveries", Columns(3), held=held)


def _through_writer(path: Path, chunks: list[list[Row] | Columns], **sizes: int) -> Any:
    writer = TableWriter(str(path), "quarantine", **sizes)
    for chunk in chunks:
        writer.add(chunk)
    writer.close()
    return pq.read_table(path / "quarantine")


@pytest.mark.parametrize(("run_rows", "run_bytes"), [(7, 1), (7, output.RUN_BYTES), (1000, 1)])
def test_the_table_writer_writes_columns_and_rows_mixed_as_one_sort(
    tmp_path: Path, run_rows: int, run_bytes: int
) -> None:
    rows = _rows(300, seed=run_rows)
    write_rows(str(tmp_path / "whole"), "quarantine", rows)
    whole = pq.read_table(tmp_path / "whole" / "quarantine")
    mixed = _through_writer(
        tmp_path / "mixed", _chunks(rows, seed=run_bytes), run_rows=run_rows, run_bytes=run_bytes
    )
    assert mixed.equals(whole)


def _add_without_keeping_arrival_order(self: TableWriter, rows: list[Row] | Columns) -> None:
    """A mutant of :meth:`TableWriter.add`: rows as columns held apart from the tuples
    (converted after them, whenever they came)."""
    if isinstance(rows, Columns):
        if self.columns is None:
            self.columns = Columns(rows.width)
        self.columns.extend(rows)
    else:
        self.rows.extend(rows)


def test_mutant_columns_out_of_arrival_order_is_killed(tmp_path: Path) -> None:
    """Tied rows keep their arrival order, whichever form they came in."""
    rows = _rows(300, seed=3)
    chunks = _chunks(rows, seed=4)
    write_rows(str(tmp_path / "whole"), "quarantine", rows)
    whole = pq.read_table(tmp_path / "whole" / "quarantine")
    saved = TableWriter.add
    TableWriter.add = _add_without_keeping_arrival_order  # type: ignore[assignment,method-assign]
    try:
        mutant = _through_writer(tmp_path / "mutant", chunks)
    finally:
        TableWriter.add = saved  # type: ignore[method-assign]
    assert not mutant.equals(whole)


def _runs(path: Path, chunks: list[list[Row] | Columns]) -> tuple[list[str], list[object]]:
    writer = staging.RunWriter(str(path), "quarantine", 1, run_rows=16)
    for chunk in chunks:
        writer.add(chunk)
    writer.close()
    paths = staging.runs(str(path), "quarantine")
    return [os.path.basename(p) for p in paths], [pq.read_table(p).to_pylist() for p in paths]


def test_a_partition_writes_the_same_runs_from_columns_and_from_rows(tmp_path: Path) -> None:
    """Runs are cut every ``run_rows`` rows of the sequence, whatever form it came in."""
    rows = _rows(70, seed=5)
    as_rows = _runs(tmp_path / "rows", [rows[at : at + 9] for at in range(0, 70, 9)])
    assert as_rows[0] == [f"part-00001-{n:05d}.parquet" for n in range(5)]  # 16*4 + 6
    assert _runs(tmp_path / "columns", [_columns(rows)]) == as_rows
    assert _runs(tmp_path / "mixed", _chunks(rows, seed=6)) == as_rows


def test_a_small_partition_is_handed_over_as_rows(tmp_path: Path) -> None:
    rows = _rows(10, seed=7)
    writer = staging.RunWriter(str(tmp_path), "quarantine", 0, run_rows=16)
    writer.add(rows[:4])
    writer.add(_columns(rows[4:]))
    assert writer.hand_over(10) == rows
    assert writer.close() == 0 and not os.path.exists(tmp_path / "quarantine")
