"""Writing the tables as Parquet and reading them back in column batches.

Each table is a directory ``DIR/NAME`` of Parquet files whose rows, read in file-name
order, are in the table's sort order (:data:`pubproof.pipeline.tables.SORT_KEYS`). The
python engine writes one file per table; Spark writes one per partition of a sorted
DataFrame. Rerunning into the same ``DIR`` replaces every output first.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence
from typing import Any

from pubproof.pipeline.tables import SORT_KEYS, TABLES, arrow_schema

REPORT, RECONCILIATION = "report.html", "reconciliation.json"


def clear(out: str) -> None:
    """Remove every output of an earlier run from ``out`` (and nothing else)."""
    for name in TABLES:
        target = os.path.join(out, name)
        if os.path.isdir(target):
            shutil.rmtree(target)
        elif os.path.exists(target):
            os.remove(target)
    for name in (REPORT, RECONCILIATION):
        target = os.path.join(out, name)
        if os.path.exists(target):
            os.remove(target)


def write_rows(out: str, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Sort ``rows`` and write them as ``out/table/part-00000.parquet``.

    Arrow sorts (stable, nulls first, strings by code point as Python compares them), so
    the order is :func:`pubproof.pipeline.tables.sort_key`'s without a Python key call per
    row."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    schema = arrow_schema(table)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    arrays = [pa.array(col, type=field.type) for col, field in zip(columns, schema, strict=True)]
    unsorted = pa.Table.from_arrays(arrays, schema=schema)
    order = pc.sort_indices(
        unsorted,
        options=pc.SortOptions(
            sort_keys=[(name, "ascending", "at_start") for name in SORT_KEYS[table]]
        ),
    )
    os.makedirs(os.path.join(out, table), exist_ok=True)
    pq.write_table(unsorted.take(order), os.path.join(out, table, "part-00000.parquet"))


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
