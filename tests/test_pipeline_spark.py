"""The Spark engine gives the python engine's tables exactly, for one and for many
partitions and splits, and a rerun into the same directory gives them again."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from support.pipeline_builder import (
    FIN,
    read_tables,
    run_check,
)
from support.spark_captures import many_captures

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "mqtt-sample.pcapng"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local SparkSession for the whole test session (start-up is the slow part)."""
    pytest.importorskip("pyspark")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pubproof.pipeline.engine_spark import session

    spark = session("local[2]", partitions=4)
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    yield spark


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("spark-inputs")
    for name, data in many_captures().items():
        (directory / name).write_bytes(data)
    if SAMPLE.exists():
        shutil.copy(SAMPLE, directory / "sample.pcapng")
    return directory


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def python_run(inputs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("python")
    outcome = run_check(work, _files(inputs), engine="python", split_bytes=50_000)
    assert outcome.reconciliation["ok"] is True
    return work / "out"


@pytest.fixture(scope="module")
def python_tables(python_run: Path) -> dict[str, Any]:
    return read_tables(str(python_run))


def test_the_composite_input_exercises_everything(python_tables: dict[str, Any]) -> None:
    kinds = {r["kind"] for r in python_tables["violations"]}
    assert kinds == {"malformed", "violation", "tolerated"}
    statuses = {s for r in python_tables["connections"] for s in str(r["status"]).split(",")}
    assert {"complete", "gaps", "encrypted-tls", "malformed", "open-at-end"} <= statuses
    reasons = {r["reason"] for r in python_tables["quarantine"]}
    assert {"tcp-not-mqtt", "truncated-record"} <= reasons
    assert len({r["connection"] for r in python_tables["connections"]}) >= 15


#: where the rows are staged and how a table is written from its staged runs: small
#: partitions' rows handed to the driver and the tables merged by it (the defaults for
#: these inputs), every row staged by the workers, or also every table sorted by Spark
SORTERS: dict[str, dict[str, int]] = {
    "driver-merge": {},
    "worker-staged": {"INLINE_ROWS": 0},
    "spark-sort": {"INLINE_ROWS": 0, "DRIVER_ROWS": 0},
}


@pytest.fixture(params=sorted(SORTERS))
def sorter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    from pubproof.pipeline import engine_spark

    for name, value in SORTERS[request.param].items():
        monkeypatch.setattr(engine_spark, name, value)
    return str(request.param)


@pytest.fixture(params=["scan", "shuffle"])
def read(request: pytest.FixtureRequest) -> str:
    """How the frames reach their tasks (``--spark-read``): both give the same tables."""
    return str(request.param)


def _jobs(spark: Any, group: str) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def test_spark_equals_python_one_partition(
    spark: Any,
    sorter: str,
    read: str,
    inputs: Path,
    tmp_path: Path,
    python_tables: dict[str, Any],
    python_run: Path,
) -> None:
    import pyarrow.dataset as ds

    group = f"one-partition-{sorter}-{read}"
    spark.sparkContext.setJobGroup(group, "the test's job")
    try:
        outcome = run_check(
            tmp_path, _files(inputs), engine="spark", spark=spark, partitions=1, spark_read=read
        )
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert outcome.reconciliation["ok"] is True
    assert outcome.tables == python_tables
    for table in ("packets", "violations", "connections", "quarantine", "summary"):
        a = ds.dataset(str(python_run / table), format="parquet").schema
        b = ds.dataset(str(tmp_path / "out" / table), format="parquet").schema
        assert a.remove_metadata() == b.remove_metadata(), table
    # the staged runs are gone, and the whole pipeline was two Spark jobs (the connection
    # stage, the cross-connection stage) unless Spark sorts
    assert not any(name.startswith(".") for name in os.listdir(tmp_path / "out"))
    if sorter != "spark-sort":
        assert _jobs(spark, group) == 2
    else:
        assert _jobs(spark, group) > 5  # the pipeline, and a sort per table


def test_spark_equals_python_many_partitions_and_splits(
    spark: Any,
    sorter: str,
    read: str,
    inputs: Path,
    tmp_path: Path,
    python_tables: dict[str, Any],
) -> None:
    files = _files(inputs)
    options: dict[str, Any] = {"engine": "spark", "spark": spark, "spark_read": read}
    outcome = run_check(tmp_path, files, partitions=4, split_bytes=3_000, **options)
    assert outcome.tables == python_tables
    # and again into the same directory: replaced, not appended
    again = run_check(tmp_path, files, partitions=3, split_bytes=1_000, **options)
    assert again.tables == python_tables
    for table in ("packets", "violations", "connections", "summary"):  # who wrote them
        by_spark = (tmp_path / "out" / table / "_SUCCESS").exists()  # Spark's committer
        assert by_spark == (sorter == "spark-sort"), table


def test_python_rerun_and_splits_are_deterministic(
    inputs: Path, tmp_path: Path, python_tables: dict[str, Any]
) -> None:
    for split_bytes in (1, 777):
        outcome = run_check(tmp_path, _files(inputs), engine="python", split_bytes=split_bytes)
        assert outcome.tables == python_tables
    assert read_tables(str(tmp_path / "out")) == python_tables


def test_spark_is_not_imported_by_the_python_engine(inputs: Path, tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys; from pubproof.main import main; "
        f"main(['check', {str(inputs / 'reuse.pcapng')!r}, '--out', {str(tmp_path / 'o')!r}, "
        "'--engine', 'python', '--quiet']); "
        "assert 'pyspark' not in sys.modules, 'pyspark imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert FIN  # the builder's flags are importable for the scenarios above


# -- staging: what the workers write ---------------------------------------------------------


def _keyed_records(inputs: Path, split_bytes: int = 2_000) -> list[tuple[Any, Any]]:
    """A capture's chunks as one Spark partition holds them (sorted by key)."""
    from pubproof.pipeline.shuffle import chunks
    from pubproof.pipeline.source import inputs as captures
    from pubproof.pipeline.source import plans

    here = os.getcwd()
    os.chdir(inputs)
    try:
        planned = plans(captures(["many.pcap", "reuse.pcapng"]), split_bytes)
        records = [r for p in planned for split in p.splits for r in chunks(split, max_frames=9)]
    finally:
        os.chdir(here)
    return sorted(records, key=lambda record: record[0])


def _staged(out: Path) -> dict[str, list[dict[str, Any]]]:
    from pubproof.pipeline import staging

    return {
        table: [
            row
            for path in staging.runs(str(out), table)
            for row in staging.read_run(path).to_pylist()
        ]
        for table in ("packets", "violations", "connections", "quarantine", "events")
    }


def test_run_writer_cuts_runs_by_rows_not_by_calls(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from pubproof.pipeline import staging
    from pubproof.pipeline.output import RUN_GROUP_ROWS
    from pubproof.pipeline.tables import sort_key

    rows = [("c.pcap", n % 4, n, 1, "garbage", None, None, None, f"row {n}") for n in range(50)]
    layouts = []
    for name, chunk in (("one", 50), ("odd", 7), ("single", 1)):
        writer = staging.RunWriter(str(tmp_path / name), "quarantine", 3, run_rows=16)
        for start in range(0, len(rows), chunk):
            writer.add(rows[start : start + chunk])
        assert writer.close() == 50
        paths = staging.runs(str(tmp_path / name), "quarantine")
        runs = [pq.read_table(p).to_pylist() for p in paths]
        for run in runs:  # each run is sorted
            keyed = [tuple(r.values()) for r in run]
            assert keyed == sorted(keyed, key=sort_key("quarantine"))
        layouts.append(([os.path.basename(p) for p in paths], runs))
    assert layouts[0] == layouts[1] == layouts[2]
    assert layouts[0][0] == [f"part-00003-{n:05d}.parquet" for n in range(4)]  # 16+16+16+2
    with pytest.raises(ValueError):
        staging.RunWriter(str(tmp_path), "quarantine", 0, run_rows=0)
    # a long run is written in small row groups, so a merge holds a group per run, not a run
    writer = staging.RunWriter(str(tmp_path / "long"), "quarantine", 0, run_rows=3000)
    writer.add(rows * 60)
    writer.close()
    (long_run,) = staging.runs(str(tmp_path / "long"), "quarantine")
    groups = pq.ParquetFile(long_run).metadata
    assert groups.num_rows == 3000 and groups.num_row_groups == -(-3000 // RUN_GROUP_ROWS) > 1


def test_arrow_runs_hold_what_parquet_runs_hold(tmp_path: Path) -> None:
    """A local master's runs (Arrow IPC) are cut, named and sorted as a cluster's (Parquet)
    are, and what Spark reads of them (:func:`staging.for_spark`) is the same rows."""
    import pyarrow.parquet as pq

    from pubproof.pipeline import staging
    from pubproof.pipeline.output import RUN_GROUP_ROWS, merge

    rows = [("c.pcap", n % 7, n, 1, "garbage", None, None, None, f"row {n}") for n in range(3000)]
    written = {}
    for form in ("parquet", "arrow"):
        writer = staging.RunWriter(
            str(tmp_path / form), "quarantine", 2, run_rows=1100, arrow=form == "arrow"
        )
        writer.add(rows)
        assert writer.close() == 3000
        written[form] = staging.runs(str(tmp_path / form), "quarantine")
    names = {form: [os.path.basename(p) for p in paths] for form, paths in written.items()}
    assert names["parquet"] == [f"part-00002-{n:05d}.parquet" for n in range(3)]
    assert names["arrow"] == [f"part-00002-{n:05d}.arrow" for n in range(3)]
    for ours, theirs in zip(written["arrow"], written["parquet"], strict=True):
        run = staging.read_run(ours)
        assert run.equals(pq.read_table(theirs))
        # record batches as small as the row groups: a merge holds a batch per run
        sizes = [batch.num_rows for batch in run.to_batches()]
        assert len(sizes) == -(-run.num_rows // RUN_GROUP_ROWS) and max(sizes) <= RUN_GROUP_ROWS
    rewritten = staging.for_spark(written["arrow"])
    assert all(p.endswith(".parquet") and "/parquet/" in p for p in rewritten)
    for ours, theirs in zip(rewritten, written["parquet"], strict=True):
        assert pq.read_table(ours).equals(pq.read_table(theirs))
    assert staging.for_spark(written["parquet"]) == written["parquet"]
    # the rewritten files are not runs of their own
    assert staging.runs(str(tmp_path / "arrow"), "quarantine") == written["arrow"]
    merged = {}
    for form, paths in written.items():
        target = str(tmp_path / f"{form}.parquet")
        assert merge(paths, "quarantine", target, run_rows=512) == 3000
        merged[form] = pq.read_table(target)
    assert merged["arrow"].equals(merged["parquet"])


def test_a_small_partition_handed_over_is_staged_as_its_worker_would(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from pubproof.pipeline import staging

    rows = [("c.pcap", n % 3, n, 1, "garbage", None, None, None, f"row {n}") for n in range(30)]

    def files(out: Path) -> dict[str, list[dict[str, Any]]]:
        paths = staging.runs(str(out), "quarantine")
        return {os.path.basename(p): pq.read_table(p).to_pylist() for p in paths}

    worker = staging.RunWriter(str(tmp_path / "worker"), "quarantine", 5)
    worker.add(rows)
    assert worker.close() == 30
    small = staging.RunWriter(str(tmp_path / "driver"), "quarantine", 5)
    small.add(rows)
    handed = small.hand_over(30)
    assert handed == rows and files(tmp_path / "driver") == {}  # nothing written
    driver = staging.RunWriter(str(tmp_path / "driver"), "quarantine", 5)
    driver.add(handed)
    driver.close()
    assert files(tmp_path / "driver") == files(tmp_path / "worker") != {}
    # one row too many, or a run already written: the worker writes the rest itself
    big = staging.RunWriter(str(tmp_path / "big"), "quarantine", 5)
    big.add(rows)
    assert big.hand_over(29) == [] and files(tmp_path / "big") == files(tmp_path / "worker")
    spilled = staging.RunWriter(str(tmp_path / "spilled"), "quarantine", 5, run_rows=20)
    spilled.add(rows)
    assert spilled.hand_over(1000) == [] and spilled.count == 30
    assert len(files(tmp_path / "spilled")) == 2


def test_a_retried_task_rewrites_the_same_staged_rows(inputs: Path, tmp_path: Path) -> None:
    from pubproof.pipeline import staging
    from pubproof.pipeline.connection_state import Config
    from pubproof.pipeline.engine_spark import ROW_TABLES, _stage

    records = _keyed_records(inputs)
    once, twice = tmp_path / "once", tmp_path / "twice"
    ((_, tables),) = _stage(Config(), str(once), 40, 0, 0, iter(records))
    counts = [written for written, _ in tables]
    # a crashed attempt leaves a temporary file behind; a retry then writes everything again
    crashed = Path(staging.folder(str(twice))) / "packets" / ".part-00000-00000.parquet.x.tmp"
    crashed.parent.mkdir(parents=True)
    crashed.write_bytes(b"half a file")
    for _ in range(2):
        ((_, again),) = _stage(Config(), str(twice), 40, 0, 0, iter(records))
        assert again == tables
    assert _staged(twice) == _staged(once)
    assert dict(zip(ROW_TABLES, counts, strict=True)) == {
        t: len(rows) for t, rows in _staged(once).items()
    }
    assert sum(counts) > 100 and len(staging.runs(str(once), "packets")) > 1
    # the negative case: an attempt that named its files differently would add its rows
    list(_stage(Config(), str(twice), 40, 0, 1, iter(records)))
    assert len(_staged(twice)["packets"]) == 2 * len(_staged(once)["packets"])
    staging.remove(str(twice))
    assert not os.path.exists(staging.folder(str(twice)))


# -- the worker daemon -------------------------------------------------------------------------


def test_daemon_path_drops_only_sparks_zips() -> None:
    from pubproof.pipeline.spark_daemon import installed_path

    lib = "/opt/spark/python/lib"
    path = [
        "/work",
        f"{lib}/pyspark.zip",
        f"{lib}/py4j-0.10.9.9-src.zip",
        "/site-packages",
        "/elsewhere/lib/pyspark.zip.d",
        "/mine/pyspark.zip",
        "/x/lib/other.zip",
    ]
    assert installed_path(path) == [path[0], path[3], path[4], path[5], path[6]]


def test_daemon_is_used_only_for_the_installed_pyspark(tmp_path: Path) -> None:
    pyspark = pytest.importorskip("pyspark")
    from pubproof.pipeline.spark_daemon import usable

    assert usable(os.path.dirname(pyspark.__file__))
    assert not usable(str(tmp_path))  # a SPARK_HOME of its own: keep its zip
    assert not usable(None)


def test_workers_import_the_installed_pyspark(spark: Any) -> None:
    def where(_: int) -> str:
        import pyspark

        return str(pyspark.__file__)

    (origin,) = spark.sparkContext.parallelize([0], 1).map(where).collect()
    assert ".zip" not in origin  # (without the daemon: .../python/lib/pyspark.zip/...)
    assert spark.conf.get("spark.python.daemon.module") == "pubproof.pipeline.spark_daemon"


def test_daemon_preload_is_fork_safe() -> None:
    import subprocess

    from pubproof.pipeline.spark_daemon import PRELOAD

    code = (
        "import importlib, sys, threading; "
        f"importlib.import_module({PRELOAD!r}); "
        "assert threading.active_count() == 1, threading.enumerate(); "
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'pandas', 'numpy', "
        "'pyspark')]; assert not heavy, heavy"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# -- the shuffle's chunks ------------------------------------------------------------------------


def _splits(inputs: Path, split_bytes: int) -> list[Any]:
    from pubproof.pipeline.source import inputs as captures
    from pubproof.pipeline.source import plans

    here = os.getcwd()
    os.chdir(inputs)
    try:
        planned = plans(captures(["many.pcap", "reuse.pcapng", "other.pcap"]), split_bytes)
    finally:
        os.chdir(here)
    return [split for plan in planned for split in plan.splits]


@pytest.mark.parametrize(("split_bytes", "max_frames"), [(1, 1), (2_000, 3), (10**9, 10**6)])
def test_chunks_sorted_by_key_give_every_frame_in_frame_order(
    inputs: Path, split_bytes: int, max_frames: int
) -> None:
    import random

    from pubproof.pipeline.shuffle import chunks, frames
    from pubproof.pipeline.source import keyed_frames

    splits = _splits(inputs, split_bytes)
    expected = sorted(
        ((split.capture, group, frame), value)
        for split in splits
        for group, frame, value in keyed_frames(split)
    )
    records = [r for split in splits for r in chunks(split, max_frames=max_frames)]
    random.Random(split_bytes).shuffle(records)  # the shuffle's arrival order is anyone's
    assert len({key for key, _ in records}) == len(records)  # keys are unique: a total order
    got = list(frames(sorted(records, key=lambda r: r[0])))
    assert got == expected
    assert [type(v) for _, v in got] == [type(v) for _, v in expected]  # segments stay segments
    if max_frames < 10**6:  # small bounds make many chunks of several frames
        assert max_frames < len(records) < len(expected) or max_frames == 1


class _Pair(NamedTuple):
    a: int
    b: object


@dataclass(frozen=True)
class _Box:
    a: int


class _Tagged(tuple[int, ...]):  # a tuple subclass that may be more than its items
    pass


def test_a_chunk_gives_back_its_values_whatever_they_are() -> None:
    from pubproof.pipeline.shuffle import _pack, frames

    cases: list[list[Any]] = [
        [("x", 1), ("y", 2)],  # quarantine rows: plain tuples
        [_Pair(1, b"p"), _Pair(2, b"")],  # segments: named tuples
        [_Pair(1, 2), (1, 2)],  # mixed: as they are
        [_Box(1), _Box(2)],
        [_Tagged((1,)), _Tagged((2,))],  # pickled as they are
    ]
    for values in cases:
        data = _pack([10, 11], list(values))
        got = [v for _, v in frames([(("c", "g", 10), data)])]
        assert got == values and [type(v) for v in got] == [type(v) for v in values]
    keys = [k for k, _ in frames([(("c", "g", 10), _pack([10, 11], [_Box(1), _Box(2)]))])]
    assert keys == [("c", "g", 10), ("c", "g", 11)]


def test_a_reader_holds_at_most_its_bounds(inputs: Path) -> None:
    from pubproof.pipeline.shuffle import chunks, frames
    from pubproof.pipeline.source import keyed_frames

    (split,) = [s for s in _splits(inputs, 10**9) if s.capture == "many.pcap"]
    largest = max(len(v.payload) for group, _, v in keyed_frames(split) if group)

    def emitted(**bounds: int) -> list[list[Any]]:
        return [[v for _, v in frames([record])] for record in chunks(split, **bounds)]

    def payload(chunk: list[Any]) -> int:
        return sum(len(value.payload) for value in chunk if hasattr(value, "payload"))

    assert max(map(len, emitted(max_frames=5))) <= 5
    assert max(map(len, emitted())) > 5  # the negative case: unbounded, chunks are longer
    # a reader emits once the payload it holds reaches the bound: no chunk passes the
    # bound by more than its last segment
    assert max(map(payload, emitted(max_bytes=500))) < 500 + largest
    assert max(map(payload, emitted())) >= 500 + largest


def test_a_failed_run_leaves_no_staged_rows(
    spark: Any, inputs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pubproof.pipeline import engine_spark, staging

    seen: list[bool] = []

    def broken(spark: Any, out: str, table: str, on_driver: bool) -> None:
        runs = staging.runs(out, "packets")
        seen.append(bool(runs))  # the staged rows were there
        # on a local master, as Arrow IPC files (a cluster's are Parquet: the cluster tests)
        assert all(run.endswith(".arrow") for run in runs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(engine_spark, "_table", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        run_check(
            tmp_path,
            {"reuse.pcapng": (inputs / "reuse.pcapng").read_bytes()},
            engine="spark",
            spark=spark,
        )
    assert seen == [True]
    assert not os.path.exists(staging.folder(str(tmp_path / "out")))
