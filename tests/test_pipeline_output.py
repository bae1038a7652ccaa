"""The streaming table writer: rows in any order, in runs smaller than the table, come out
exactly as one sort of all of them (ties in arrival order, nulls first), and its scratch
runs are gone afterwards. The vectorised merge is checked against Python's own stable
sort (an oracle that shares no code with it), and each plausible mistake in it (a wrong
bound, ties cut on the wrong side, pieces or ties reordered) is a mutant the checks kill."""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pubproof.pipeline import output
from pubproof.pipeline.output import TableWriter, merge, write_rows
from pubproof.pipeline.tables import SORT_KEYS, TABLES, arrow_schema, sort_key

Row = tuple[object, ...]


def _rows(count: int, seed: int, *, captures: int = 3, frames: int = 5) -> list[Row]:
    """Quarantine rows with nulls and many ties on the sort key (capture, frame, reason,
    connection, offset); the detail column tells tied rows apart."""
    rnd = random.Random(seed)
    width = len(TABLES["quarantine"])
    rows = []
    for i in range(count):
        row: list[object] = [None] * width
        row[0] = rnd.choice(["a.pcap", "b.pcap", "é.pcap", "z.pcap"][:captures])
        row[1] = rnd.choice([None, *range(frames)])  # frame: nulls and ties
        row[2], row[3], row[7] = i, 1, rnd.randrange(100)
        row[4] = rnd.choice(["not-tcp", "garbage", "not-ip"])
        row[5] = rnd.choice([None, "c1", "c2"])
        row[8] = f"row {i}"  # tells tied rows apart: their order must be kept
        rows.append(tuple(row))
    return rows


@pytest.mark.parametrize(
    ("run_rows", "run_bytes"),
    [(1, 1), (7, 1), (7, 2000), (1000, 1), (7, output.RUN_BYTES), (1000, output.RUN_BYTES)],
)
def test_runs_merge_into_one_sort(tmp_path: Path, run_rows: int, run_bytes: int) -> None:
    """Rows turned into Arrow every ``run_rows``; a sorted run written every ``run_bytes``
    of those (1: at each; the default: never, one sort in memory)."""
    rows = _rows(300, seed=run_rows)
    write_rows(str(tmp_path / "whole"), "quarantine", rows)
    writer = TableWriter(
        str(tmp_path / "runs"), "quarantine", run_rows=run_rows, run_bytes=run_bytes
    )
    for start in range(0, len(rows), 13):
        writer.add(rows[start : start + 13])
    assert (len(writer.runs) > 1) == (run_rows < 300 and run_bytes < output.RUN_BYTES)
    assert all(path.endswith(output.RUN_SUFFIX) for path in writer.runs)
    writer.close()
    whole = pq.read_table(tmp_path / "whole" / "quarantine")
    merged = pq.read_table(tmp_path / "runs" / "quarantine")
    assert merged.equals(whole)
    assert merged.column("detail").to_pylist() == [r[8] for r in _stable_sort(rows)]
    assert sorted(os.listdir(tmp_path / "runs")) == ["quarantine"]


def _written(tmp_path: Path, rows: Sequence[Row], **sizes: int) -> list[object]:
    """The detail column of ``rows`` through a :class:`TableWriter`."""
    writer = TableWriter(str(tmp_path), "quarantine", **sizes)
    for start in range(0, len(rows), 13):
        writer.add(rows[start : start + 13])
    writer.close()
    details: list[object] = pq.read_table(tmp_path / "quarantine").column("detail").to_pylist()
    return details


def _sorted_held_reversed(self: TableWriter) -> Any:
    """A mutant of :meth:`TableWriter._sorted`: the Arrow tables held joined last first
    (ties then come out in the wrong order)."""
    self._hold()
    data = pa.concat_tables(self.held[::-1]).unify_dictionaries()
    self.held, self.held_bytes = [], 0
    return output._sorted_table(self.table, data)


@pytest.mark.parametrize("run_bytes", [2000, output.RUN_BYTES])
def test_writer_mutant_held_out_of_order_is_killed(tmp_path: Path, run_bytes: int) -> None:
    """The tables held in memory (sorted once, or into a run) keep their arrival order:
    joined in another order, tied rows come out reordered."""
    rows = _rows(300, seed=5, captures=1, frames=2)
    expected = [r[8] for r in _stable_sort(rows)]
    assert _written(tmp_path / "right", rows, run_rows=7, run_bytes=run_bytes) == expected
    saved = TableWriter._sorted
    TableWriter._sorted = _sorted_held_reversed  # type: ignore[method-assign]
    try:
        details = _written(tmp_path / "mutant", rows, run_rows=7, run_bytes=run_bytes)
    finally:
        TableWriter._sorted = saved  # type: ignore[method-assign]
    assert sorted(map(str, details)) == sorted(map(str, expected))  # same rows...
    assert details != expected  # ...wrong order


def test_a_held_table_with_two_dictionaries_is_not_sorted_by_their_indices() -> None:
    """Indices of two different dictionaries do not compare: the sort refuses a
    dictionary column whose chunks were not unified (:meth:`TableWriter._sorted` unifies
    them), instead of ordering its rows by meaningless indices."""
    rows = _rows(40, seed=3)
    first = output._arrow("quarantine", rows[:20], held=True)
    second = output._arrow("quarantine", rows[20:][::-1], held=True)
    with pytest.raises(ValueError, match="one dictionary"):
        output._sorted_table("quarantine", pa.concat_tables([first, second]))
    both = pa.concat_tables([first, second]).unify_dictionaries()
    details = output._sorted_table("quarantine", both).column("detail").to_pylist()
    assert details == [row[8] for row in _stable_sort(rows[:20] + rows[20:][::-1])]


@pytest.mark.parametrize("options", [output.PARQUET_OPTIONS, {}])
def test_a_held_table_is_written_as_strings_with_each_row_groups_own_statistics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    """A :class:`TableWriter` writes the dictionaries it holds as they are: the file reads
    back in :func:`~pubproof.pipeline.tables.arrow_schema`'s types (strings), and each
    row group's minimum and maximum are those of its own rows, not of the whole
    dictionary, which holds every row group's strings. With ``{}`` (the Arrow schema
    stored beside Parquet's, the writer's default: the mutant) the file reads back as
    dictionaries."""
    monkeypatch.setattr(output, "MERGE_ROWS", 100)
    monkeypatch.setattr(output, "PARQUET_OPTIONS", options)
    rows = _rows(300, seed=11)
    writer = TableWriter(str(tmp_path), "quarantine")
    writer.add(rows)
    writer.close()
    path = tmp_path / "quarantine" / "part-00000.parquet"
    parquet = pq.ParquetFile(path)
    assert (parquet.schema_arrow == arrow_schema("quarantine")) == (
        options == {"store_schema": False}
    )
    table = pq.read_table(path)
    assert table.column("detail").to_pylist() == [r[8] for r in _stable_sort(rows)]
    detail = table.column_names.index("detail")
    assert parquet.metadata.num_row_groups == 3
    for group in range(3):
        values = table.slice(100 * group, 100).column("detail").to_pylist()
        statistics = parquet.metadata.row_group(group).column(detail).statistics
        assert (statistics.min, statistics.max) == (min(values), max(values))


def test_merge_reads_arrow_runs_as_parquet_ones(tmp_path: Path) -> None:
    """The python engine's runs (Arrow IPC files) merge as Spark's (Parquet) do, whatever
    the batch a run is read in."""
    rows = _rows(900, seed=9, captures=2, frames=4)
    runs = [rows[:300], rows[300:310], rows[310:]]
    parquet = _write_runs(str(tmp_path), runs)
    arrow = []
    for path in parquet:
        target = path.replace(".parquet", output.RUN_SUFFIX)
        data = pq.read_table(path)
        with pa.OSFile(target, "wb") as sink, pa.ipc.new_file(sink, data.schema) as run:
            run.write_table(data, max_chunksize=17)
        arrow.append(target)
    for run_rows in (64, 200, 5000):
        for paths in (parquet, arrow):
            merged = str(tmp_path / f"merged-{run_rows}.parquet")
            assert merge(paths, "quarantine", merged, run_rows=run_rows) == len(rows)
            details = pq.read_table(merged).column("detail").to_pylist()
            assert details == _expected(runs)


def _stable_sort(rows: Sequence[Row]) -> list[Row]:
    """The oracle: Python's stable sort with the table's key (nulls first)."""
    return sorted(rows, key=sort_key("quarantine"))


def _write_runs(folder: str, runs: Sequence[Sequence[Row]]) -> list[str]:
    """Each run sorted (stably) and written as its own Parquet file, in the given order."""
    paths = []
    for number, run in enumerate(runs):
        path = os.path.join(folder, f"run-{number:03d}.parquet")
        columns = (
            list(zip(*_stable_sort(run), strict=True)) if run else [()] * len(TABLES["quarantine"])
        )
        schema = arrow_schema("quarantine")
        arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)]
        pq.write_table(pa.Table.from_arrays(arrays, schema=schema), path)
        paths.append(path)
    return paths


def _merged(
    runs: Sequence[Sequence[Row]], run_rows: int, background: bool = False
) -> tuple[list[object], int]:
    """The detail column of ``runs`` merged, and the row count ``merge`` reported."""
    with tempfile.TemporaryDirectory() as folder:
        paths = _write_runs(folder, runs)
        target = os.path.join(folder, "merged.parquet")
        count = merge(paths, "quarantine", target, run_rows=run_rows, background=background)
        table = pq.read_table(target)
        assert table.schema == arrow_schema("quarantine")
        return table.column("detail").to_pylist(), count


def _expected(runs: Sequence[Sequence[Row]]) -> list[object]:
    return [row[8] for row in _stable_sort([row for run in runs for row in run])]


@settings(max_examples=200)  # each example writes up to nine Parquet files
@given(
    sizes=st.lists(st.integers(0, 300), min_size=1, max_size=9),
    seed=st.integers(0, 2**16),
    run_rows=st.sampled_from([1, 64, 200, 5000]),
    captures=st.integers(1, 4),
    frames=st.integers(1, 6),
    background=st.booleans(),
)
def test_merge_is_one_stable_sort(
    sizes: list[int], seed: int, run_rows: int, captures: int, frames: int, background: bool
) -> None:
    """Whether the Parquet writes run beside the merge (the Spark driver's) or not."""
    rows = _rows(sum(sizes), seed, captures=captures, frames=frames)
    runs, start = [], 0
    for size in sizes:
        runs.append(rows[start : start + size])
        start += size
    details, count = _merged(runs, run_rows, background)
    assert count == len(rows)
    assert details == _expected(runs)


def test_a_write_in_the_background_fails_the_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error of a background write is raised by ``merge`` itself, and no later write
    is started after it."""
    runs = _tied_runs()
    paths = _write_runs(str(tmp_path), runs)
    calls = 0

    def failing(self: Any, data: Any) -> None:
        nonlocal calls
        calls += 1
        raise OSError("disk full")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", failing)
    with pytest.raises(OSError, match="disk full"):
        merge(paths, "quarantine", str(tmp_path / "m.parquet"), run_rows=64, background=True)
    assert calls == 1


def _tied_runs() -> list[list[Row]]:
    """Runs where long stretches of equal keys cross the read batches (64 rows) of
    several runs at once: what the bound's tie rule is for."""
    return [
        _rows(700, seed=1, captures=1, frames=2),
        _rows(90, seed=2, captures=2, frames=1),
        _rows(650, seed=3, captures=1, frames=2),
        _rows(5, seed=4),
        _rows(400, seed=5, captures=2, frames=3),
    ]


def test_merge_keeps_ties_across_batches_in_run_order() -> None:
    runs = _tied_runs()
    details, _ = _merged(runs, run_rows=64)
    assert details == _expected(runs)


def test_merge_of_nothing_writes_the_schema() -> None:
    details, count = _merged([[], []], run_rows=64)
    assert (details, count) == ([], 0)


# -- mutants: each is a plausible mistake in one round of the merge -------------------------


def _cut_with(
    *,
    choose: Callable[..., Any] = min,
    rule: str = "right",
    reverse: bool = False,
) -> Callable[[Sequence[Any]], list[Any]]:
    """A round of the merge with one thing changed: how the bound is chosen, which runs
    may give rows equal to the bound, or the order the pieces are joined in."""

    def cut(active: Sequence[Any]) -> list[Any]:
        bound_run = choose(active, key=lambda run: (run.last_key, run.order))
        bound = bound_run.last_key
        pieces = []
        for run in active:
            if rule == "right":  # the unmutated rule
                through = run.order <= bound_run.order
            elif rule == "all-ties":
                through = True
            else:  # "only-the-bound-run"
                through = run is bound_run
            count = run.count_through(bound) if through else run.count_before(bound)
            if count:
                pieces.append(run.take(count))
        return pieces[::-1] if reverse else pieces

    return cut


def _unstable_sort(table: str, data: Any) -> Any:
    """A sort that breaks ties the other way (what an unstable sort may do)."""
    keys = [(name, "ascending", "at_start") for name in SORT_KEYS[table]]
    position = pa.array(range(data.num_rows), type=pa.int64())
    data = data.append_column("_position", position)
    order = pc.sort_indices(data, sort_keys=[*keys, ("_position", "descending")])
    return data.take(order).drop_columns(["_position"])


@contextmanager
def _patched(name: str, value: Any) -> Iterator[None]:
    saved = getattr(output, name)
    setattr(output, name, value)
    try:
        yield
    finally:
        setattr(output, name, saved)


MUTANTS: dict[str, tuple[str, Any]] = {
    "bound from the largest last key": ("_cut", _cut_with(choose=max)),
    "every run gives its rows equal to the bound": ("_cut", _cut_with(rule="all-ties")),
    "only the bound run gives its ties": ("_cut", _cut_with(rule="only-the-bound-run")),
    "pieces joined in reverse run order": ("_cut", _cut_with(reverse=True)),
    "an unstable sort of each round": ("_sorted_table", _unstable_sort),
}


def test_the_unmutated_round_passes_the_mutant_checks() -> None:
    runs = _tied_runs()
    with _patched("_cut", _cut_with()):
        assert _merged(runs, run_rows=64)[0] == _expected(runs)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_merge_mutant_is_killed(mutant: str) -> None:
    name, value = MUTANTS[mutant]
    runs = _tied_runs()
    with _patched(name, value):
        details, _ = _merged(runs, run_rows=64)
    assert sorted(map(str, details)) == sorted(map(str, _expected(runs)))  # same rows...
    assert details != _expected(runs), f"mutant survived: {mutant}"  # ...wrong order


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(
        st.tuples(
            st.none() | st.text(max_size=3),  # connection: any text, astral characters too
            st.none() | st.integers(0, 2),  # frame
            st.none() | st.sampled_from(["c2s", "s2c", "é", "\U0001f600", "z"]),  # direction
        ),
        max_size=60,
    )
)
def test_the_sort_orders_strings_by_code_point_as_python_does(
    keys: list[tuple[str | None, int | None, str | None]],
) -> None:
    """``output.sort_rows`` (string keys sorted as ranks of their distinct values) puts
    rows in the order of Python's stable sort on the table's key: strings by code point,
    nulls first, ties in arrival order (``length`` numbers the rows)."""
    width = len(TABLES["packets"])
    rows = []
    for i, (connection, frame, direction) in enumerate(keys):
        row: list[object] = [None] * width
        row[0], row[1], row[2], row[3], row[6] = "c.pcap", connection, direction, frame, i
        rows.append(tuple(row))
    got = output.sort_rows("packets", rows).column("length").to_pylist()
    assert got == [row[6] for row in sorted(rows, key=sort_key("packets"))]
