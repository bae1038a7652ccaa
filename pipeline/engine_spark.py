"""The Spark engine: the same per-connection code as the python engine, at scale.

One Spark job tracks every connection; its tasks bring each 4-tuple's frames, in frame
order, to one :class:`~pubproof.pipeline.connection.Tracker` in one of two ways
(:data:`READS`; ``pubproof check --spark-read``):

``scan`` (the default on a local master)::

    partitions 0..N-1                               sc.parallelize, one task per partition
      -> mapPartitionsWithIndex: each task reads every split of every capture and tracks
         the 4-tuples :func:`~pubproof.pipeline.source.partition_of` gives its partition
         (and partition 0 the quarantine), passing over the others' frames, most of them
         before they are dissected (:func:`~pubproof.pipeline.dissect.segment_key`)

``shuffle`` (the default on a cluster)::

    splits (byte ranges on record boundaries)      sc.parallelize, one task per split
      -> keyed frames ((capture, 4-tuple, frame), segment | quarantine row), grouped
         into pickled chunks of one 4-tuple's consecutive frames (:mod:`.shuffle`),
         keyed by (capture, 4-tuple, first frame)                            flatMap
      -> repartitionAndSortWithinPartitions: partition by (capture, 4-tuple), sort by
         (capture, 4-tuple, first frame): a secondary sort, so no connection is ever
         gathered in memory (Spark's external sorter spills)
      -> mapPartitionsWithIndex: stream each 4-tuple's segments, in frame order, through
         one tracker

Why two: on one machine the shuffle costs more than reading the capture once per core
(every frame pickled, through the JVM's shuffle files and back), while passing over a
frame a task does not track costs a few thousand instructions; on a cluster the
shuffle reads each byte of the captures once, where a scan would read every capture once
per task, over the network from the shared file system. Either way each task's rows go
straight to sorted runs under the output directory (:mod:`.staging`: Arrow IPC files on
a local master, nothing to encode or decode; Parquet on a cluster, a tenth of the bytes
to the shared file system), and only the row counts go back to the driver; then, per
table, from its staged runs::

    at most DRIVER_ROWS rows: the driver's vectorised merge (:func:`.output.merge`)
    more: spark.read.parquet(runs, Arrow ones rewritten as Parquet first) -> orderBy
          the table's sort key -> Parquet (JVM only)
    summary: the python engine's :func:`.summary.summarize`, or for many violations
             groupBy (role, endpoint, rule, kind) with the example by min(struct(...))

Nothing depends on which task ran first, on how the input was split or on the way the
frames were read: each tracker sees exactly its 4-tuple's frames in frame order, every
table is sorted on a total order, and a retried task rewrites the same staged files. A
shared file system (or the same local paths on every worker) is needed on a cluster:
workers open the capture files by path and write the staged runs under the output
directory, which the driver then reads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pubproof.pipeline import servers_spark, shuffle, spark_daemon, staging
from pubproof.pipeline.capture import Plan, Split
from pubproof.pipeline.connection import Tracker
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.engine_python import collector_tuned, track
from pubproof.pipeline.memory import arrow_from_malloc
from pubproof.pipeline.output import MERGE_ROWS, TableWriter, merge, rows_of
from pubproof.pipeline.progress import Progress
from pubproof.pipeline.rows import Sink
from pubproof.pipeline.source import QUARANTINE_GROUP, group_hash, problem_row
from pubproof.pipeline.staging import STAGE_RUN_ROWS
from pubproof.pipeline.summary import EXAMPLE_COLUMNS, EXAMPLE_ORDER, GROUP, summarize
from pubproof.pipeline.tables import SORT_KEYS, spark_schema

ROW_TABLES = ("packets", "violations", "connections", "quarantine", "events")
#: the tables written from staged runs (``events`` is the cross-connection stage's input)
WRITTEN = ("packets", "violations", "connections", "quarantine", "deliveries")
#: how the frames reach their connection's task (see the module's docstring)
READS = ("scan", "shuffle")
#: tables of at most this many rows are merged by the driver (one core, memory bounded by
#: :data:`pubproof.pipeline.output.MERGE_ROWS`); larger ones are sorted by Spark over the
#: whole cluster
DRIVER_ROWS = 2_000_000
FLUSH_RECORDS = 4096  # records a task tracks between two hand-overs of rows to staging
#: a partition's table of at most this many rows goes back to the driver to be staged,
#: and at most INLINE_TOTAL rows per table in all (so what the driver collects is small)
INLINE_ROWS = 1024
INLINE_TOTAL = 65536
#: what a task of the connection stage returns: its partition, and per table the rows it
#: wrote and the rows it handed over
Staged = tuple[int, tuple[tuple[int, list[tuple[Any, ...]]], ...]]
LOCAL_JAVA_OPTIONS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
#: where the JVM's and Spark's own output goes, under the output directory
SPARK_LOG = "spark.log"


@contextlib.contextmanager
def output_to(path: str) -> Iterator[None]:
    """Standard output and error of every process started meanwhile (the JVM, and through
    it Spark's Python workers) go to ``path``, for the whole life of that process: the
    JVM's start-up warnings, log4j's console and the executors' chatter are not the
    user's output. This process's own streams are back as they were afterwards."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    try:
        with open(path, "ab") as log:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def session(master: str = "local[*]", partitions: int | None = None, log: str | None = None) -> Any:
    """An embedded (or cluster) SparkSession set up for the pipeline; with ``log``, the
    JVM's output (and its workers') goes to that file (:func:`output_to`)."""
    # the workers must run this interpreter (it has pubproof installed)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName("pubproof check")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    local = master.startswith("local")
    if local:
        # an embedded driver starts faster with the client compiler and the serial
        # collector (the heavy work runs in the Python workers, not the JVM)
        options = " ".join((LOCAL_JAVA_OPTIONS, *class_archive_options()))
        builder = builder.config("spark.driver.extraJavaOptions", options)
        if spark_daemon.usable(_spark_home()):
            builder = builder.config("spark.python.daemon.module", spark_daemon.__name__)
    if partitions is None and local:
        partitions = os.cpu_count() or 1  # not 200 tiny shuffle partitions on one machine
    if partitions is not None:
        builder = builder.config("spark.sql.shuffle.partitions", str(partitions))
    with output_to(log) if log is not None else contextlib.nullcontext():
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _spark_home() -> str | None:
    """Where the JVM finds Spark (what PySpark's launcher uses: ``SPARK_HOME`` or the
    installed package)."""
    import pyspark

    return os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)


def class_archive_options() -> list[str]:
    """JVM options for a class-data-sharing archive of Spark's classes (JDK 17's dynamic
    AppCDS): it halves a local driver's start. The first run writes it (at JVM exit) under
    a name of its own; a later run, once that writer is gone, moves it into place and
    maps it. ``PUBPROOF_SPARK_CDS=0`` turns it off; a stale or broken archive is ignored
    by the JVM (``-Xshare:auto``), which then starts as without one."""
    if os.environ.get("PUBPROOF_SPARK_CDS", "1") == "0":
        return []
    import pyspark

    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(cache, "pubproof")
    home = os.environ.get("JAVA_HOME", "")
    tag = zlib.crc32(f"{pyspark.__version__}|{home}|{sys.executable}".encode())
    archive = os.path.join(folder, f"spark-{pyspark.__version__}-{tag:08x}.jsa")
    try:
        os.makedirs(folder, exist_ok=True)
        if not os.path.exists(archive):
            for name in sorted(os.listdir(folder)):
                written = os.path.join(folder, name)
                if name.startswith(os.path.basename(archive) + ".") and _abandoned(written):
                    os.replace(written, archive)  # its writer has exited: it is whole
                    break
        _remove_spare_archives(folder)
    except OSError:
        return []
    if os.path.exists(archive):
        return [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", *_JVM_LOG]
    return [f"-XX:ArchiveClassesAtExit={archive}.{os.getpid()}", *_JVM_LOG]


#: the JVM's own warnings (an archive it cannot map, say) go to stderr, never to stdout,
#: which ``pubproof check --json`` keeps for its JSON
_JVM_LOG = ("-Xlog:disable", "-Xlog:all=warning:stderr", "-Xlog:cds=off", "-Xlog:cds+dynamic=off")


def _remove_spare_archives(folder: str) -> None:
    """Delete the archives written by JVMs that started while no archive was in place
    (the first run's driver and executors, or runs side by side, each write one of about
    120 MB) once an archive has been moved into place for their name and their writer is
    gone: nothing ever maps them."""
    names = set(os.listdir(folder))
    for name in names:
        stem, dot, pid = name.rpartition(".")
        if dot and pid.isdigit() and stem.endswith(".jsa") and stem in names:
            written = os.path.join(folder, name)
            if _abandoned(written):
                with contextlib.suppress(OSError):
                    os.remove(written)


def _abandoned(path: str) -> bool:
    """Whether the process that wrote ``path`` (its name ends in the pid) is gone and the
    file has not changed for a minute (the JVM writes it as it exits)."""
    try:
        pid = int(path.rsplit(".", 1)[1])
        os.kill(pid, 0)
        return False
    except ProcessLookupError:
        return time.time() - os.path.getmtime(path) > 60
    except (ValueError, OSError):
        return False


def _settings(config: Config) -> dict[str, Any]:
    """The fields of ``config``, to send to the workers: a compiled frozen dataclass does
    not unpickle (its fields cannot be set one by one), a dict of them does."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


def default_read(master: str) -> str:
    """How the frames reach their tasks when ``--spark-read`` is not given: ``scan`` on a
    local master (``local``, ``local[N]``, ``local[*]``), ``shuffle`` on any other."""
    from pubproof.pipeline.run import local_cores

    return "scan" if local_cores(master) is not None else "shuffle"


def _partition(key: shuffle.Key) -> int:
    # the shuffle's partition function: Spark takes it modulo the partitions, so a
    # 4-tuple lands where source.partition_of puts it when scanning
    return group_hash(key[0], key[1])


def _stage(
    settings: Config | dict[str, Any],
    out: str,
    run_rows: int,
    inline_rows: int,
    partition: int,
    records: Iterable[tuple[shuffle.Key, bytes]],
    *,
    arrow: bool = False,
) -> Iterator[Staged]:
    """A task of the connection stage: its partition's chunks (:mod:`.shuffle`), sorted
    by (capture, 4-tuple, first frame), unpacked and streamed one 4-tuple at a time, in
    frame order, through a :class:`~pubproof.pipeline.connection.Tracker`; the rows go
    to staged runs (:mod:`pubproof.pipeline.staging`). Back to the driver go, per table
    (in :data:`ROW_TABLES` order), the rows written and the rows handed over: those of a
    table with at most ``inline_rows`` rows in the partition, which the driver stages.
    ``settings``: the job's :class:`Config`, or its fields (:func:`_settings`);
    ``arrow``: the runs as Arrow IPC files, not Parquet (:mod:`.staging`)."""
    config = settings if isinstance(settings, Config) else Config(**settings)
    arrow_from_malloc()  # a cluster's worker has its own environment
    with collector_tuned():
        yield from _track(config, out, run_rows, inline_rows, partition, records, arrow)


def _track(
    config: Config,
    out: str,
    run_rows: int,
    inline_rows: int,
    partition: int,
    records: Iterable[tuple[shuffle.Key, bytes]],
    arrow: bool,
) -> Iterator[Staged]:
    """:func:`_stage`'s work, with the job's :class:`Config`."""
    staged = _Staging(out, partition, run_rows, arrow)
    sink = staged.sink
    current: tuple[str, str] | None = None
    tracker: Tracker | None = None
    for done, ((capture, group, frame), value) in enumerate(shuffle.frames(records), 1):
        if not done % FLUSH_RECORDS:
            staged.flush()
        if group == QUARANTINE_GROUP:
            sink.quarantine.append(value)
            continue
        if current != (capture, group):
            if tracker is not None:
                tracker.finish()
            current = (capture, group)
            tracker = Tracker(capture, config, sink)
        assert tracker is not None
        tracker.feed(frame, value)
    if tracker is not None:
        tracker.finish()
    yield staged.hand_over(inline_rows)


#: what a scanning task reads: per capture, its name and its splits in order
Captures = Sequence[tuple[str, Sequence[Split]]]


def _scan(
    settings: Config | dict[str, Any],
    captures: Captures,
    out: str,
    run_rows: int,
    inline_rows: int,
    count: int,
    partition: int,
    _: Iterable[Any],
    *,
    arrow: bool = False,
) -> Iterator[Staged]:
    """A task of the scanning connection stage: every split of every capture read, the
    4-tuples of partition ``partition`` of ``count`` tracked
    (:func:`~pubproof.pipeline.source.keyed_frames` passes over the others' frames), the
    rows staged as :func:`_stage` stages them."""
    config = settings if isinstance(settings, Config) else Config(**settings)
    arrow_from_malloc()
    with collector_tuned():
        yield from _scan_track(
            config, captures, out, run_rows, inline_rows, count, partition, arrow
        )


def _scan_track(
    config: Config,
    captures: Captures,
    out: str,
    run_rows: int,
    inline_rows: int,
    count: int,
    partition: int,
    arrow: bool,
) -> Iterator[Staged]:
    """:func:`_scan`'s work: the python engine's loop (:func:`.engine_python.track`, run
    compiled) over one partition's share."""
    staged = _Staging(out, partition, run_rows, arrow)
    for capture, splits in captures:
        track(
            capture, splits, config, staged.sink, staged.flush, FLUSH_RECORDS,
            count=count, partition=partition,
        )  # fmt: skip
        staged.flush()
    yield staged.hand_over(inline_rows)


class _Staging:
    """A task's sink and one staged-run writer per table (:data:`ROW_TABLES`)."""

    def __init__(self, out: str, partition: int, run_rows: int, arrow: bool) -> None:
        self.partition = partition
        self.sink = Sink()
        self.writers = [
            staging.RunWriter(out, t, partition, run_rows, arrow=arrow) for t in ROW_TABLES
        ]
        self.lists: list[list[tuple[Any, ...]]] = [getattr(self.sink, t) for t in ROW_TABLES]

    def flush(self) -> None:
        """Hand the sink's rows to the writers."""
        for writer, rows in zip(self.writers, self.lists, strict=True):
            if rows:
                writer.add(rows)
                rows.clear()

    def hand_over(self, inline_rows: int) -> Staged:
        """Flush and close; per table the rows written and those handed back."""
        self.flush()
        handed = [writer.hand_over(inline_rows) for writer in self.writers]
        written = [writer.count for writer in self.writers]
        return self.partition, tuple(zip(written, handed, strict=True))


def run(
    plans: Sequence[Plan],
    config: Config,
    out: str,
    *,
    master: str = "local[*]",
    partitions: int | None = None,
    spark: Any = None,
    progress: Progress | None = None,
    driver_rows: int | None = None,
    read: str | None = None,
) -> tuple[float, dict[str, int]]:
    """Write every table under ``out``; return Spark's start-up time in seconds, and the
    cross-connection stage's figures (:mod:`.servers_spark`).

    One Spark job runs the whole pipeline: read the splits, shuffle by 4-tuple with a
    secondary sort, track every connection, and write each partition's rows as staged
    sorted runs under ``out`` (:mod:`pubproof.pipeline.staging`; a partition's table of
    at most :data:`INLINE_ROWS` rows comes back and is staged by the driver, under the
    same name). Then each table is
    written from its runs: one of at most ``driver_rows`` rows (default
    :data:`DRIVER_ROWS`) by the driver's vectorised merge into one file, a larger one by
    Spark (read the runs, ``orderBy`` the table's key, write, all in the JVM). ``out``
    must be on a file system the driver and every worker see at the same path (on a
    cluster: a shared one, as for the captures themselves). ``read``: how the frames
    reach their tasks (:data:`READS`; default :func:`default_read` of ``master``)."""
    read = default_read(master) if read is None else read
    if read not in READS:
        raise ValueError(f"unknown read {read!r} (known: {', '.join(READS)})")
    started = time.monotonic()
    out = os.path.abspath(out)  # the JVM's working directory is not necessarily ours
    own = spark is None
    arrow_from_malloc()  # before the JVM starts: its Python workers inherit the variable
    if spark is None:
        spark = session(master, partitions, log=os.path.join(out, SPARK_LOG))
    startup = time.monotonic() - started
    limit = DRIVER_ROWS if driver_rows is None else driver_rows
    if limit < 0:
        raise ValueError("driver_rows must be at least 0")
    count = partitions or spark.sparkContext.defaultParallelism
    from pubproof.pipeline.run import local_cores

    # one machine: the runs stay on its disk, as Arrow (nothing to encode and decode)
    arrow = local_cores(master) is not None
    staging.remove(out)
    try:
        staged = _pipeline(spark.sparkContext, plans, config, out, count, progress, read, arrow)
        rows = _stage_the_rest(out, staged, plans, count, arrow)
        # the cross-connection stage: its runs numbered after the driver's (partition count)
        figures, rows["deliveries"], found = (
            servers_spark.run(spark.sparkContext, _settings(config), out, count, count + 1, arrow)
            if config.distribution
            else ({"off": 1}, 0, 0)
        )
        rows["violations"] += found
        for table in WRITTEN:
            _table(spark, out, table, rows[table] <= limit)
        _summary(spark, out, rows["violations"] <= limit)
    finally:
        staging.remove(out)  # after a failure too: no scratch is left behind
        if own:
            # stopped here, not by the JVM's shutdown hooks as the process exits (on a
            # cluster those race the executors' own shutdown and log errors)
            spark.stop()
    return startup, figures


def _pipeline(
    sc: Any,
    plans: Sequence[Plan],
    config: Config,
    out: str,
    count: int,
    progress: Progress | None,
    read: str,
    arrow: bool = False,
) -> list[Staged]:
    """The one Spark job: every split read, its frames brought to ``count`` partitions
    (``read``: scanned by each or shuffled), tracked and staged; what each task
    returned."""
    inline = min(INLINE_ROWS, INLINE_TOTAL // count)
    splits = [split for plan in plans for split in plan.splits]
    watcher = _Watcher(sc, progress) if progress is not None else None
    try:
        if read == "scan":
            captures = [(plan.capture, plan.splits) for plan in plans]
            task = functools.partial(
                _scan, _settings(config), captures, out, STAGE_RUN_ROWS, inline, count,
                arrow=arrow,
            )  # fmt: skip
            scanned: list[Staged] = (
                sc.parallelize(range(count), count).mapPartitionsWithIndex(task).collect()
            )
            return scanned
        staged: list[Staged] = (
            sc.parallelize(splits, max(1, len(splits)))
            .flatMap(shuffle.chunks)
            .repartitionAndSortWithinPartitions(count, partitionFunc=_partition)
            .mapPartitionsWithIndex(
                functools.partial(
                    _stage, _settings(config), out, STAGE_RUN_ROWS, inline, arrow=arrow
                )
            )
            .collect()
        )
    finally:
        if watcher is not None:
            watcher.stop()
    return staged


def _stage_the_rest(
    out: str, staged: Sequence[Staged], plans: Sequence[Plan], count: int, arrow: bool
) -> dict[str, int]:
    """Stage what the tasks handed back and the plans' own problems; every table's rows."""
    rows = dict.fromkeys(ROW_TABLES, 0)
    for partition, tables in staged:
        for table, (written, handed) in zip(ROW_TABLES, tables, strict=True):
            if handed:  # staged here as the partition's run 0, as its worker would have
                writer = staging.RunWriter(out, table, partition, STAGE_RUN_ROWS, arrow=arrow)
                writer.add(handed)
                written += writer.close()
            rows[table] += written
    # the plans' own problems (a file cut short, bad magic): rows of the driver's walk,
    # staged as a partition after the tasks' ones
    problems = staging.RunWriter(out, "quarantine", count, STAGE_RUN_ROWS, arrow=arrow)
    problems.add(problem_row(p) for plan in plans for p in plan.problems)
    rows["quarantine"] += problems.close()
    return rows


def _table(spark: Any, out: str, table: str, on_driver: bool) -> None:
    """Write ``table`` from its staged runs: merged by the driver, or sorted by Spark."""
    runs = staging.runs(out, table)
    folder = os.path.join(out, table)
    if on_driver:
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, "part-00000.parquet")
        merge(runs, table, target, run_rows=MERGE_ROWS, background=True)  # a core to spare
        return
    frame = spark.read.schema(spark_schema(table)).parquet(*staging.for_spark(runs))
    _write(frame, SORT_KEYS[table], folder)


def _summary(spark: Any, out: str, on_driver: bool) -> None:
    """The summary table from the written violations: by the driver (the python engine's
    :func:`~pubproof.pipeline.summary.summarize`) or by a Spark aggregation."""
    if on_driver:
        writer = TableWriter(out, "summary")
        writer.add(summarize(rows_of(out, "violations")))
        writer.close()
        return
    from pyspark.sql import functions as F

    violations = spark.read.schema(spark_schema("violations")).parquet(
        os.path.join(out, "violations")
    )
    example = F.min(F.struct(*(F.col(c) for c in EXAMPLE_ORDER))).alias("example")
    summary = (
        violations.groupBy(*GROUP)
        .agg(
            F.count(F.lit(1)).alias("count"),
            F.countDistinct("connection").alias("connections"),
            example,
        )
        .select(
            *GROUP,
            "count",
            "connections",
            *(F.col(f"example.{c}").alias(f"example_{c}") for c in EXAMPLE_COLUMNS),
        )
    )
    summary = spark.createDataFrame(summary.rdd, spark_schema("summary"))
    _write(summary, SORT_KEYS["summary"], os.path.join(out, "summary"))


def _write(frame: Any, keys: Sequence[str], path: str) -> None:
    frame.orderBy(*keys).write.mode("overwrite").parquet(path)


class _Watcher:
    """Progress lines from Spark's status tracker while the job runs."""

    def __init__(self, sc: Any, progress: Progress) -> None:
        self.sc, self.progress = sc, progress
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        tracker = self.sc.statusTracker()
        last = ""
        while not self._stop.wait(self.progress.interval):
            parts = []
            for stage_id in sorted(tracker.getActiveStageIds()):
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    parts.append(
                        f"stage {stage_id}: {info.numCompletedTasks}/{info.numTasks} "
                        f"tasks ({info.numActiveTasks} running)"
                    )
            text = "spark: " + ("; ".join(parts) or "working")
            if text != last:
                seconds = time.monotonic() - self.progress.start
                self.progress.line(f"{text}, {seconds:.0f} s")
                last = text

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
