"""Staged rows: what a Spark task's Python worker writes straight to files, so that no
row travels back through the JVM as a Python object.

Layout, under the output directory::

    .pubproof-staging/TABLE/part-PPPPP-RRRRR.parquet    partition P's run R of TABLE
    .pubproof-staging/TABLE/part-PPPPP-RRRRR.arrow      the same, as an Arrow IPC file
    .pubproof-staging/TABLE/parquet/...                  Arrow runs rewritten for Spark

Each file is a *sorted run*: at most ``run_rows`` consecutive rows of the partition's
output, sorted on the table's key (Arrow, stable), so the driver can merge them
(:func:`pubproof.pipeline.output.merge`) or Spark can read them all
(``spark.read.parquet``) and sort. A run is Parquet (compact: for a cluster, whose
workers write to a shared file system) or, with ``arrow``, an Arrow IPC file (for one
machine: about ten times the bytes, but nothing to encode or decode, which is most of
a Parquet run's cost; the python engine's own runs are the same). Spark reads only
Parquet, so a table it sorts from Arrow runs has them rewritten first
(:func:`for_spark`). A file is written under a hidden temporary name
(``.``-prefixed: Spark and Arrow skip such files) and renamed when whole, and its name
depends only on the partition and the run's place in it: a task's rows are a function of
its partition (the secondary sort fixes their order), so a retried or speculative attempt
writes the same files with the same rows, and the rename makes it idempotent. On a
cluster the output directory must be on a file system every worker and the driver see at
the same path (the workers open the captures by path already).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from pubproof.pipeline.output import (
    RUN_GROUP_ROWS,
    RUN_SUFFIX,
    STAGING,
    sort_rows,
    write_arrow_run,
)
from pubproof.pipeline.rows import Columns

PARQUET = ".parquet"
#: rows per sorted run a worker writes (memory per table in a worker: about one run)
STAGE_RUN_ROWS = 65536


def folder(out: str) -> str:
    """The staging folder of the output directory ``out``."""
    return os.path.join(out, STAGING)


class RunWriter:
    """One table's rows of one partition, in order, written as sorted runs.

    Runs are cut every ``run_rows`` rows of the sequence given, whatever the sizes of the
    :meth:`add` calls, so the same rows always give the same files."""

    def __init__(
        self,
        out: str,
        table: str,
        partition: int,
        run_rows: int = STAGE_RUN_ROWS,
        *,
        arrow: bool = False,
    ):
        if run_rows < 1:
            raise ValueError("run_rows must be positive")
        self.directory = os.path.join(folder(out), table)
        self.table, self.partition, self.run_rows = table, partition, run_rows
        self.suffix = RUN_SUFFIX if arrow else PARQUET
        #: the rows not yet written, in their order: tuples, or :class:`~.rows.Columns` once
        #: rows come as columns
        self.rows: list[tuple[Any, ...]] | Columns = []
        self.runs = 0
        self.count = 0

    def add(self, rows: Iterable[tuple[Any, ...]] | Columns) -> None:
        """More rows of the partition, in their order: tuples, or :class:`~.rows.Columns`
        (copied)."""
        held = self.rows
        if isinstance(rows, Columns):
            if not isinstance(held, Columns):
                columns = Columns(rows.width)
                for row in held:
                    columns.append(row)
                held = self.rows = columns
            held.extend(rows)
        elif isinstance(held, Columns):
            for row in rows:
                held.append(row)
        else:
            held.extend(rows)
        while len(held) >= self.run_rows:
            if isinstance(held, Columns):
                self._spill(held.take(self.run_rows))
            else:
                self._spill(held[: self.run_rows])
                del held[: self.run_rows]

    def close(self) -> int:
        """Write what is left; the number of rows written."""
        if len(self.rows):
            self._spill(self.rows)
            self.rows = []
        return self.count

    def hand_over(self, most: int) -> list[tuple[Any, ...]]:
        """Close, except that a partition of at most ``most`` rows in all (no run written
        yet) is not written but returned, for the driver to stage as the same run 0 with
        :meth:`close` (a worker whose tables are all that small then never imports
        pyarrow, which costs it most of a second); otherwise write what is left and
        return nothing."""
        if self.runs == 0 and len(self.rows) <= most:
            rows, self.rows = list(self.rows), []
            return rows
        self.close()
        return []

    def _spill(self, rows: list[tuple[Any, ...]] | Columns) -> None:
        os.makedirs(self.directory, exist_ok=True)
        name = f"part-{self.partition:05d}-{self.runs:05d}{self.suffix}"
        temporary = os.path.join(self.directory, f".{name}.{uuid.uuid4().hex}.tmp")
        _write_run(sort_rows(self.table, rows), temporary, self.suffix == RUN_SUFFIX)
        os.replace(temporary, os.path.join(self.directory, name))  # whole, or not there
        self.runs += 1
        self.count += len(rows)


def _write_run(data: Any, path: str, arrow: bool) -> None:
    """A sorted run (an Arrow table) written to ``path``: Parquet, or an Arrow IPC file.
    Small row groups, or record batches: a merge reads a run a group at a time at least,
    so it holds a group per run, not a run."""
    import pyarrow.parquet as pq

    if arrow:
        write_arrow_run(data, path)
        return
    pq.write_table(data, path, row_group_size=RUN_GROUP_ROWS)


def read_run(path: str) -> Any:
    """A staged run, whole, as an Arrow table (Parquet or Arrow IPC)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.endswith(RUN_SUFFIX):
        return pq.read_table(path)
    with pa.OSFile(path, "rb") as source:
        return pa.ipc.open_file(source).read_all()


def runs(out: str, table: str) -> list[str]:
    """The staged runs of ``table``, by partition and then run (the order they were
    made in, which a stable merge keeps for tied rows)."""
    directory = os.path.join(folder(out), table)
    if not os.path.isdir(directory):
        return []
    return sorted(
        os.path.join(directory, name)
        for name in os.listdir(directory)
        if name.startswith("part-") and name.endswith((PARQUET, RUN_SUFFIX))
    )


def for_spark(paths: Sequence[str]) -> list[str]:
    """The runs ``paths`` as Parquet files Spark can read: a Parquet run as it is, an
    Arrow run rewritten as Parquet (once, under its table's ``parquet`` folder)."""
    found = []
    for path in paths:
        if not path.endswith(RUN_SUFFIX):
            found.append(path)
            continue
        directory = os.path.join(os.path.dirname(path), "parquet")
        os.makedirs(directory, exist_ok=True)
        target = os.path.join(directory, os.path.basename(path)[: -len(RUN_SUFFIX)] + PARQUET)
        _write_run(read_run(path), target, arrow=False)
        found.append(target)
    return found


def remove(out: str) -> None:
    """Remove the staging folder (and every run in it)."""
    shutil.rmtree(folder(out), ignore_errors=True)
