"""Writing the tables as Parquet and reading them back in column batches.

Each table is a directory ``DIR/NAME`` of Parquet files whose rows, read in file-name
order, are in the table's sort order (:data:`pubproof.pipeline.tables.SORT_KEYS`). The
python engine writes one file per table; Spark writes one per partition of a sorted
DataFrame. Rerunning into the same ``DIR`` replaces every output first.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pubproof.pipeline.tables import SORT_KEYS, TABLES, arrow_schema, sort_key

REPORT, RECONCILIATION = "report.html", "reconciliation.json"


def clear(out: str) -> None:
    """Remove every output of an earlier run from ``out`` (and nothing else)."""
    for name in TABLES:
        target = os.path.join(out, name)
        if os.path.isdir(target):
            shutil.rmtree(target)
        elif os.path.exists(target):
            os.remove(target)
    if os.path.isdir(os.path.join(out, _RUNS)):
        shutil.rmtree(os.path.join(out, _RUNS))  # an interrupted run's scratch
    for name in (REPORT, RECONCILIATION):
        target = os.path.join(out, name)
        if os.path.exists(target):
            os.remove(target)


#: rows a table holds in memory before it writes them as a sorted run
RUN_ROWS = 16384
_RUNS = ".pubproof-runs"  # under the output directory, removed when the tables are written


def write_rows(out: str, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Sort ``rows`` and write them as ``out/table/part-00000.parquet``."""
    os.makedirs(os.path.join(out, table), exist_ok=True)
    _write(_sorted(table, rows), os.path.join(out, table, "part-00000.parquet"))


def _sorted(table: str, rows: Sequence[tuple[Any, ...]]) -> Any:
    """The rows as an Arrow table in the table's order.

    Arrow sorts (stable, nulls first, strings by code point as Python compares them), so
    the order is :func:`pubproof.pipeline.tables.sort_key`'s without a Python key call per
    row."""
    import pyarrow.compute as pc

    unsorted = _arrow(table, rows)
    keys = [(name, "ascending", "at_start") for name in SORT_KEYS[table]]
    return unsorted.take(pc.sort_indices(unsorted, options=pc.SortOptions(sort_keys=keys)))


def _arrow(table: str, rows: Sequence[tuple[Any, ...]]) -> Any:
    import pyarrow as pa

    schema = arrow_schema(table)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    arrays = [pa.array(col, type=field.type) for col, field in zip(columns, schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


def _write(data: Any, path: str) -> None:
    import pyarrow.parquet as pq

    pq.write_table(data, path)


class TableWriter:
    """One table's rows in, in any order; ``out/table/part-00000.parquet`` out, sorted, in
    memory bounded by :data:`RUN_ROWS` whatever the number of rows.

    Up to ``run_rows`` rows it sorts in memory and writes once. Past that it writes
    sorted runs to a scratch folder and, at :meth:`close`, merges them a batch at a time
    (a stable merge of stable sorts in arrival order: the rows come out in exactly the
    order one sort of all of them gives). The cost: each row beyond the first run is
    written and read once more, and merged in Python."""

    def __init__(self, out: str, table: str, *, run_rows: int = RUN_ROWS) -> None:
        self.out, self.table, self.run_rows = out, table, run_rows
        self.rows: list[tuple[Any, ...]] = []
        self.runs: list[str] = []
        self.count = 0

    def add(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """More rows of the table."""
        self.rows.extend(rows)
        if len(self.rows) >= self.run_rows:
            self._spill()

    def _spill(self) -> None:
        folder = os.path.join(self.out, _RUNS)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{self.table}-{len(self.runs):06d}.parquet")
        _write(_sorted(self.table, self.rows), path)
        self.runs.append(path)
        self.count += len(self.rows)
        self.rows = []

    def close(self) -> None:
        """Write the table."""
        folder = os.path.join(self.out, self.table)
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, "part-00000.parquet")
        if not self.runs:
            _write(_sorted(self.table, self.rows), target)
            return
        if self.rows:
            self._spill()
        self._merge(target)

    def _merge(self, target: str) -> None:
        import pyarrow.parquet as pq

        # every run is read a batch at a time; together the batches hold about one run
        size = max(64, self.run_rows // len(self.runs))
        runs = (_rows(path, size) for path in self.runs)
        merged = heapq.merge(*runs, key=sort_key(self.table))
        with pq.ParquetWriter(target, arrow_schema(self.table)) as writer:
            batch: list[tuple[Any, ...]] = []
            for row in merged:
                batch.append(row)
                if len(batch) >= self.run_rows:
                    writer.write_table(_arrow(self.table, batch))
                    batch = []
            writer.write_table(_arrow(self.table, batch))
        for path in self.runs:
            os.remove(path)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(self.runs[0]))  # empty once every table is merged


def rows_of(out: str, table: str) -> Iterator[tuple[Any, ...]]:
    """A written table's rows, in order, as tuples in column order (a batch in memory)."""
    for path in files(out, table):
        yield from _rows(path)


def _rows(path: str, size: int = RUN_ROWS) -> Iterator[tuple[Any, ...]]:
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches(batch_size=size):
        yield from zip(*(column.to_pylist() for column in batch.columns), strict=True)


def files(out: str, table: str) -> list[str]:
    """The Parquet files of a table, in row order."""
    folder = os.path.join(out, table)
    return sorted(
        os.path.join(folder, n)
        for n in os.listdir(folder)
        if n.endswith(".parquet") and not n.startswith(("_", "."))
    )


def batches(out: str, table: str, columns: Sequence[str]) -> Iterator[dict[str, list[Any]]]:
    """The table's rows in order, a batch at a time, as ``{column: values}``."""
    import pyarrow.parquet as pq

    for path in files(out, table):
        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(columns=list(columns), batch_size=65536):
            yield batch.to_pydict()


def read(out: str, table: str, limit: int | None = None) -> list[dict[str, Any]]:
    """The first ``limit`` rows (all when None) of a table, as dicts."""
    names = [name for name, _ in TABLES[table]]
    rows: list[dict[str, Any]] = []
    for batch in batches(out, table, names):
        for i in range(len(batch[names[0]])):
            rows.append({name: batch[name][i] for name in names})
            if limit is not None and len(rows) >= limit:
                return rows
    return rows
