"""Writing the tables as Parquet and reading them back in column batches.

Each table is a directory ``DIR/NAME`` of Parquet files whose rows, read in file-name
order, are in the table's sort order (:data:`pubproof.pipeline.tables.SORT_KEYS`). The
python engine writes one file per table; Spark writes one per partition of a sorted
DataFrame. Rerunning into the same ``DIR`` replaces every output first.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

from pubproof.pipeline.rows import Columns
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
    for scratch in (_RUNS, STAGING):  # an interrupted run's scratch
        if os.path.isdir(os.path.join(out, scratch)):
            shutil.rmtree(os.path.join(out, scratch))
    for name in (REPORT, RECONCILIATION):
        target = os.path.join(out, name)
        if os.path.exists(target):
            os.remove(target)


#: Python rows (tuples) a table holds before it turns them into Arrow columns, which take
#: a fraction of their memory
RUN_ROWS = 16384
#: bytes of Arrow columns a table holds before it sorts them and writes them as a run: a
#: table that fits is sorted once and written, with no run and no merge (the 160,000
#: packet rows of 200,000 synthetic frames take about 30 MB)
RUN_BYTES = 64 << 20
#: rows the merge of the runs holds (as Arrow batches: compact, unlike the Python tuples
#: of a run being filled). A merge round reads a batch from every run and writes the rows
#: before the smallest batch's end, so a round is about this many rows divided by the runs.
#: Merging 31 runs of 799k packet rows: 16,384 took 10.8 s at a peak of 167 MB, 65,536
#: 5.2 s at 228 MB, 131,072 4.3 s at 297 MB. In a whole 1M-frame run the peak RSS goes from
#: 233 to 281 MB: still a constant, whatever the capture
MERGE_ROWS = 65536
_RUNS = ".pubproof-runs"
#: the scratch folder under the output directory (the sorted runs, the events spilled by
#: :mod:`.events_held`), removed by :func:`clear` if a run left it
SCRATCH: Final = _RUNS
#: the file suffix of the python engine's sorted runs (Arrow IPC files)
RUN_SUFFIX = ".arrow"  # under the output directory, removed when the tables are written
#: the Spark engine's staged rows (:mod:`pubproof.pipeline.staging`), under the output
#: directory, removed when the tables are written
STAGING = ".pubproof-staging"


def write_rows(out: str, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Sort ``rows`` and write them as ``out/table/part-00000.parquet``."""
    os.makedirs(os.path.join(out, table), exist_ok=True)
    _write(sort_rows(table, rows), os.path.join(out, table, "part-00000.parquet"))


def sort_rows(table: str, rows: Sequence[tuple[Any, ...]] | Columns) -> Any:
    """The rows as an Arrow table in the table's order.

    Arrow sorts (stable, nulls first, strings by code point as Python compares them), so
    the order is :func:`pubproof.pipeline.tables.sort_key`'s without a Python key call per
    row."""
    return _sorted_table(table, _arrow(table, rows))


def _arrow(table: str, rows: Sequence[tuple[Any, ...]] | Columns, *, held: bool = False) -> Any:
    """The rows as an Arrow table, in their order. Arrow converts the tuples itself (as a
    struct array: a row of the wrong width is an error), each value by its column's type
    as ``pa.array`` of the column would: no Python list per column; rows held as
    :class:`~.rows.Columns` it converts a column at a time. ``held``: in
    :func:`held_schema`'s types, as a :class:`TableWriter` holds them."""
    import pyarrow as pa

    schema = held_schema(table) if held else arrow_schema(table)
    if isinstance(rows, Columns):
        if rows.width != len(schema):
            raise ValueError(f"{rows.width} columns for {table}'s {len(schema)}")
        arrays = [pa.array(c, type=f.type) for c, f in zip(rows.lists, schema, strict=True)]
        return pa.Table.from_arrays(arrays, schema=schema)
    return pa.Table.from_struct_array(pa.array(rows, type=pa.struct(list(schema))))


def held_schema(table: str) -> Any:
    """``table``'s schema as a :class:`TableWriter` holds its rows until it writes them:
    every string column as a dictionary (an index per row into the column's distinct
    strings). The strings of a table repeat (a capture's name, a connection's, a
    direction, a packet type, an edition, a rule), so held rows take about half the
    memory (the real capture's 560,024 packet rows: 52 MB instead of 107 MB), twice as
    many fit in a run, and sorting and reordering them moves integers. What is written
    is :func:`~pubproof.pipeline.tables.arrow_schema`'s strings, as before."""
    import pyarrow as pa

    return pa.schema(
        [
            field.with_type(pa.dictionary(pa.int32(), pa.string()))
            if pa.types.is_string(field.type)
            else field
            for field in arrow_schema(table)
        ]
    )


def _plain_schema(schema: Any) -> Any:
    """``schema`` with its dictionary columns as their values: the types
    :func:`~pubproof.pipeline.tables.arrow_schema` writes."""
    import pyarrow as pa

    return pa.schema(
        [
            field.with_type(field.type.value_type) if pa.types.is_dictionary(field.type) else field
            for field in schema
        ]
    )


def _plain(data: Any) -> Any:
    """``data`` (an Arrow table or record batch) in :func:`_plain_schema`'s types."""
    plain = _plain_schema(data.schema)
    return data if plain.equals(data.schema) else data.cast(plain)


#: rows per Parquet row group of a sorted run: the merge reads a run a row group at a time
#: at least, so small groups keep what it holds small
RUN_GROUP_ROWS = 1024


def write_arrow_run(data: Any, path: str) -> None:
    """A sorted run (an Arrow table) as an Arrow IPC file at ``path``, in record batches
    of :data:`RUN_GROUP_ROWS` rows: a merge reads a run a batch at a time at least, so it
    holds a batch per run, not a run. A column held as a dictionary (:func:`held_schema`)
    is written as strings, a batch at a time."""
    import pyarrow as pa

    batches = data.to_batches(max_chunksize=RUN_GROUP_ROWS)
    schema = _plain_schema(data.schema)
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema) as run:
        for batch in batches:
            run.write_batch(_plain(batch))


#: how every table is written to Parquet. ``store_schema`` off: the file holds no
#: ``ARROW:schema`` (an Arrow schema beside Parquet's own): the tables' types (strings,
#: 64- and 32-bit integers, booleans) read back as they are from Parquet's own, and a
#: held dictionary column (:func:`held_schema`) is written as its dictionary and indices
#: as they are, not cast to strings and hashed again (0.21 s to 0.16 s of CPU for the
#: real capture's 560,024 packet rows), yet read back as strings.
PARQUET_OPTIONS: dict[str, Any] = {"store_schema": False}


def _write(data: Any, path: str) -> None:
    """``data`` as a Parquet file at ``path``, in row groups of :data:`MERGE_ROWS` rows
    (as :func:`merge` writes them); a column held as a dictionary (:func:`held_schema`)
    as Parquet's dictionary encoding of strings (:data:`PARQUET_OPTIONS`)."""
    import pyarrow.parquet as pq

    with pq.ParquetWriter(path, data.schema, **PARQUET_OPTIONS) as writer:
        for start in range(0, max(data.num_rows, 1), MERGE_ROWS):
            writer.write_table(data.slice(start, MERGE_ROWS))


class TableWriter:
    """One table's rows in, in any order; ``out/table/part-00000.parquet`` out, sorted, in
    memory bounded by :data:`RUN_ROWS` Python rows, :data:`RUN_BYTES` of Arrow columns and
    :data:`MERGE_ROWS` Arrow rows whatever the number of rows.

    Every ``run_rows`` rows it turns the Python rows into Arrow columns (in arrival
    order). Up to ``run_bytes`` of those it sorts in memory and writes once. Past that it
    writes sorted runs (Arrow IPC files: no encoding to undo) to a scratch folder and, at
    :meth:`close`, merges them a batch at a time (a stable merge of stable sorts in
    arrival order: the rows come out in exactly the order one sort of all of them gives).
    The cost: each row beyond the first run is written and read once more, and merged by
    :func:`merge` (vectorised)."""

    def __init__(
        self,
        out: str,
        table: str,
        *,
        run_rows: int = RUN_ROWS,
        merge_rows: int = MERGE_ROWS,
        run_bytes: int = RUN_BYTES,
    ) -> None:
        self.out, self.table, self.run_rows, self.merge_rows = out, table, run_rows, merge_rows
        self.run_bytes = run_bytes
        self.rows: list[tuple[Any, ...]] = []
        #: rows added as :class:`~.rows.Columns`, not yet converted (after ``rows``)
        self.columns: Columns | None = None
        self.held: list[Any] = []  # Arrow tables of rows in arrival order, not yet sorted
        self.held_bytes = 0
        self.runs: list[str] = []
        self.count = 0

    def add(self, rows: Iterable[tuple[Any, ...]] | Columns) -> None:
        """More rows of the table: tuples, or :class:`~.rows.Columns` (copied)."""
        if isinstance(rows, Columns):
            if self.rows:  # converted first: the rows stay in arrival order
                self._hold()
            if self.columns is None:
                self.columns = Columns(rows.width)
            self.columns.extend(rows)
        else:
            if self.columns is not None:
                self._hold()
            self.rows.extend(rows)
        if len(self.rows) + (len(self.columns) if self.columns else 0) >= self.run_rows:
            self._convert()

    def _convert(self) -> None:
        """The Python rows held, as Arrow columns; a run once they are ``run_bytes``."""
        self._hold()
        if self.held_bytes >= self.run_bytes:
            self._spill()

    def _hold(self) -> None:
        if self.columns is not None:
            data = _arrow(self.table, self.columns, held=True)
            self.columns = None
        else:
            data = _arrow(self.table, self.rows, held=True)
            self.rows = []
        self.held.append(data)
        self.held_bytes += data.nbytes

    def _sorted(self) -> Any:
        """Every row held (Python and Arrow), sorted; nothing is held afterwards."""
        import pyarrow as pa

        if self.rows or self.columns is not None or not self.held:
            self._hold()
        data = self.held[0] if len(self.held) == 1 else pa.concat_tables(self.held)
        self.held, self.held_bytes = [], 0
        # one dictionary per column, so that indices compare (rebound: the chunks' own
        # indices are freed before the sort, not after it). Not joined into one chunk
        # first: that made the sort and take 0.02 s faster on the real capture and 0.2 s
        # on 1M synthetic frames, but raised the peak memory there from about 296 to 340
        # MB (measured)
        data = data.unify_dictionaries()
        return _sorted_table(self.table, data)

    def _spill(self) -> None:
        folder = os.path.join(self.out, _RUNS)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{self.table}-{len(self.runs):06d}{RUN_SUFFIX}")
        data = self._sorted()
        write_arrow_run(data, path)
        self.runs.append(path)
        self.count += data.num_rows

    def close(self) -> None:
        """Write the table."""
        folder = os.path.join(self.out, self.table)
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, "part-00000.parquet")
        if not self.runs:
            _write(self._sorted(), target)
            return
        if self.rows or self.columns is not None or self.held:
            self._spill()
        self._merge(target)

    def _merge(self, target: str) -> None:
        merge(self.runs, self.table, target, run_rows=self.merge_rows)
        for path in self.runs:
            os.remove(path)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(self.runs[0]))  # empty once every table is merged


def merge(
    runs: Sequence[str],
    table: str,
    target: str,
    *,
    run_rows: int = RUN_ROWS,
    background: bool = False,
) -> int:
    """Merge sorted runs of ``table`` (Parquet files, or Arrow IPC files named
    ``*``:data:`RUN_SUFFIX`, each in the table's order, given in the order they were
    made) into ``target``; return the rows written.

    The rows come out exactly as one stable sort of all of them would put them: by the
    table's key, ties in run order and, within a run, in the run's order. Each round reads
    one batch per run, takes the smallest of the batches' last keys as a bound (ties
    broken by run order), cuts every batch at the bound, sorts the pieces with Arrow and
    writes them: no Python call per row. Memory: a batch per run (about ``run_rows`` rows
    together) plus up to ``run_rows`` sorted rows waiting to be written, and with
    ``background`` as many again being written: Parquet's encoding (about 40% of the
    merge) then runs in a thread of its own, beside the next rounds (Arrow releases the
    interpreter meanwhile), for a caller with a core to spare (the Spark driver)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    size = max(64, run_rows // max(1, len(runs)))
    pending = [_Run(order, path, table, size) for order, path in enumerate(runs)]
    active = [run for run in pending if run.fill()]
    written = 0
    with (
        pq.ParquetWriter(target, arrow_schema(table), **PARQUET_OPTIONS) as writer,
        _Writes(writer.write_table, background) as write,
    ):
        waiting: list[Any] = []
        held = 0
        while active:
            pieces = _cut(active)
            chunk = _sorted_table(table, pa.Table.from_batches(pieces))
            waiting.append(chunk)
            held += chunk.num_rows
            if held >= run_rows:
                write(pa.concat_tables(waiting))
                written += held
                waiting, held = [], 0
            active = [run for run in active if run.fill()]
        if waiting or not written:
            write(pa.concat_tables(waiting) if waiting else arrow_schema(table).empty_table())
            written += held
    return written


class _Writes:
    """Calls of ``write``, in order: made at once, or (``background``) each in a thread
    of its own while the caller goes on, at most one at a time; every one is over, and
    its error raised here, when the ``with`` block ends."""

    def __init__(self, write: Callable[[Any], None], background: bool) -> None:
        self.write, self.background = write, background
        self.running: threading.Thread | None = None
        self.error: BaseException | None = None

    def __enter__(self) -> Callable[[Any], None]:
        return self.__call__

    def __call__(self, data: Any) -> None:
        if not self.background:
            self.write(data)
            return
        self._wait()
        self.running = threading.Thread(target=self._run, args=(data,), daemon=True)
        self.running.start()

    def _run(self, data: Any) -> None:
        try:
            self.write(data)
        except BaseException as error:  # raised again in the caller's thread
            self.error = error

    def _wait(self) -> None:
        if self.running is not None:
            self.running.join()
            self.running = None
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def __exit__(self, *exc: object) -> None:
        self._wait()


def _cut(active: Sequence[_Run]) -> list[Any]:
    """One round of the merge: from every run's batch (``active`` in run order), the rows
    that no row still unread can precede.

    The bound is the smallest (last key, run) of the batches: every unread row of a run
    comes after its batch's last row, so a row before the bound is final. Rows whose key
    equals the bound's are final for the runs up to the bound's (an earlier run with more
    of them would have the smaller bound), not for the later ones (their ties follow the
    bound run's unread rows)."""
    bound_run = min(active, key=lambda run: (run.last_key, run.order))
    bound = bound_run.last_key
    pieces = []
    for run in active:
        final = run.count_through if run.order <= bound_run.order else run.count_before
        count = final(bound)
        if count:
            pieces.append(run.take(count))
    return pieces


def sorted_table(table: str, data: Any) -> Any:
    """``data`` (an Arrow table of ``table``'s columns) in the table's order
    (:func:`_sorted_table`)."""
    return _sorted_table(table, data)


def _sorted_table(table: str, data: Any) -> Any:
    """``data`` (an Arrow table) stably sorted on ``table``'s key, nulls first.

    A string key is sorted as its rank among the column's distinct values
    (:func:`_ranks`, or :func:`_dictionary_ranks` for a column held as a dictionary): the
    same order, as ranks follow the strings' order and ties stay ties, with integers
    compared instead of strings (on the real capture's 560,024 packet rows 1.3x to 2.5x
    faster, 21% fewer instructions). A dictionary column's chunks must share one
    dictionary (:meth:`pyarrow.Table.unify_dictionaries`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = list(SORT_KEYS[table])
    keys = []
    for name in names:
        kind = data.schema.field(name).type
        column = data[name]
        if pa.types.is_string(kind):
            column = _ranks(column)
        elif pa.types.is_dictionary(kind):
            column = _dictionary_ranks(column)
        keys.append(column)
    order = pc.sort_indices(
        pa.table(keys, names=names),
        options=pc.SortOptions(sort_keys=[(name, "ascending", "at_start") for name in names]),
    )
    return data.take(order)


def _ranks(column: Any) -> Any:
    """Each string of ``column`` as its rank among the column's distinct strings, in
    Arrow's order of strings (by bytes of UTF-8: code point order, as Python compares
    them); null stays null."""
    import pyarrow.compute as pc

    distinct = pc.unique(column).drop_null()
    return pc.index_in(column, value_set=distinct.take(pc.sort_indices(distinct)))


def _dictionary_ranks(column: Any) -> Any:
    """:func:`_ranks` of a dictionary column whose chunks share one dictionary of distinct
    strings (:meth:`pyarrow.Table.unify_dictionaries`): each entry's rank, read through
    the indices."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not column.num_chunks:
        return pa.chunked_array([], type=pa.int32())
    first = column.chunk(0).dictionary
    if not all(chunk.dictionary.equals(first) for chunk in column.chunks[1:]):
        raise ValueError("a dictionary column to sort must have one dictionary")
    # int32, as the indices are: half the memory of sort_indices' uint64 per row
    rank = pc.sort_indices(pc.sort_indices(first)).cast(pa.int32())
    return pa.chunked_array([rank.take(chunk.indices) for chunk in column.chunks], type=rank.type)


def _read_batches(path: str, size: int) -> Iterator[Any]:
    """A run's rows in batches of about ``size`` rows (a Parquet file read ``size`` rows
    at a time; an Arrow IPC file's own batches joined up to ``size`` rows or more)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.endswith(RUN_SUFFIX):
        yield from pq.ParquetFile(path).iter_batches(batch_size=size)
        return
    with pa.OSFile(path, "rb") as source:
        reader = pa.ipc.open_file(source)
        joined: list[Any] = []
        count = 0
        for i in range(reader.num_record_batches):
            batch = reader.get_batch(i)
            joined.append(batch)
            count += batch.num_rows
            if count >= size:
                yield _joined(joined)
                joined, count = [], 0
        if joined:
            yield _joined(joined)


def _joined(batches: Sequence[Any]) -> Any:
    """Record batches as one."""
    import pyarrow as pa

    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


class _Run:
    """A sorted run being merged: its file read a batch at a time, and what is left of
    the current batch (rows ``start`` onwards)."""

    def __init__(self, order: int, path: str, table: str, size: int) -> None:
        self.order = order
        self._batches = _read_batches(path, size)
        self._keys = SORT_KEYS[table]
        self._batch: Any = None  # pyarrow.RecordBatch
        self._columns: list[Any] = []  # its key columns
        self.start = 0
        self.last_key: tuple[Any, ...] = ()

    def fill(self) -> bool:
        """Read the next batch if the current one is used up; False once all is read."""
        while self._batch is None or self.start == self._batch.num_rows:
            batch = next(self._batches, None)
            if batch is None:
                return False
            self._batch, self.start = batch, 0
            self._columns = [batch.column(name) for name in self._keys]
            if batch.num_rows:
                self.last_key = self._key(batch.num_rows - 1)
        return True

    def _key(self, position: int) -> tuple[Any, ...]:
        """The sort key of a row of the batch, as :func:`pubproof.pipeline.tables.sort_key`
        makes it (nulls first): Arrow's order and Python's agree on it (strings by code
        point, which is UTF-8's byte order)."""
        values = (column[position].as_py() for column in self._columns)
        return tuple((v is not None, v if v is not None else 0) for v in values)

    def count_before(self, bound: tuple[Any, ...]) -> int:
        """Rows left in the batch whose key is smaller than ``bound`` (a binary search)."""
        end = self._batch.num_rows
        return bisect.bisect_left(range(end), bound, lo=self.start, key=self._key) - self.start

    def count_through(self, bound: tuple[Any, ...]) -> int:
        """Rows left in the batch whose key is at most ``bound``."""
        end = self._batch.num_rows
        return bisect.bisect_right(range(end), bound, lo=self.start, key=self._key) - self.start

    def take(self, count: int) -> Any:
        """The next ``count`` rows of the batch, which are then used."""
        head = self._batch.slice(self.start, count)
        self.start += count
        return head


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
