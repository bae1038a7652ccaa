"""The Spark engine's class-data-sharing archive: written once, mapped after, and the
spare copies written by JVMs that started side by side removed, not left on the disk."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pubproof.pipeline import engine_spark


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _aged(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PUBPROOF_SPARK_CDS", raising=False)
    return tmp_path / "pubproof"


def _archive_name() -> str:
    # the name the engine chooses, learnt from the option it gives with no archive
    options = engine_spark.class_archive_options()
    (writing,) = [o for o in options if o.startswith("-XX:ArchiveClassesAtExit=")]
    path = writing.split("=", 1)[1]
    assert path.endswith(f".{os.getpid()}")
    return os.path.basename(path.rsplit(".", 1)[0])


def test_the_first_run_writes_an_archive_that_a_later_run_maps(folder: Path) -> None:
    name = _archive_name()
    written = folder / f"{name}.{_dead_pid()}"
    written.write_bytes(b"archive")
    _aged(written, 120)
    options = engine_spark.class_archive_options()
    assert f"-XX:SharedArchiveFile={folder / name}" in options
    assert (folder / name).read_bytes() == b"archive"
    assert not written.exists()


def test_spare_archives_are_removed_once_one_is_in_place(folder: Path) -> None:
    name = _archive_name()
    (folder / name).write_bytes(b"in place")
    dead = _dead_pid()
    spare = [folder / f"{name}.{dead}", folder / f"{name}.{dead + 1_000_000}"]
    for path in spare:
        path.write_bytes(b"spare")
        _aged(path, 120)
    # another name's spare, beside its archive in place: removed too
    other = folder / "spark-0.0.0-00000000.jsa"
    other.write_bytes(b"other")
    other_spare = folder / f"{other.name}.{dead}"
    other_spare.write_bytes(b"spare")
    _aged(other_spare, 120)
    # kept: a JVM still running writes one; one written within the minute; one whose
    # name has no archive in place yet (the next run of that name moves it there)
    running = folder / f"{name}.{os.getpid()}"
    recent = folder / f"{name}.{dead + 2_000_000}"
    unplaced = folder / f"spark-0.0.0-11111111.jsa.{dead}"
    for path in (running, recent, unplaced):
        path.write_bytes(b"kept")
    _aged(running, 120)
    _aged(unplaced, 120)

    options = engine_spark.class_archive_options()

    assert f"-XX:SharedArchiveFile={folder / name}" in options
    assert not any(path.exists() for path in (*spare, other_spare))
    assert all(path.exists() for path in (running, recent, unplaced, other, folder / name))


def test_turned_off_it_touches_nothing(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBPROOF_SPARK_CDS", "0")
    assert engine_spark.class_archive_options() == []
    assert not folder.exists()
