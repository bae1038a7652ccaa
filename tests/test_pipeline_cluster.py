"""``pubproof check`` on real Spark clusters, as a user runs it (a subprocess), its tables
equal to the single-process engine's (which the other tests hold equal to the embedded
``local[*]`` engine's):

- ``--master local-cluster[2,1,1024]``: Spark's own test cluster, a master, a worker and
  two executors, each a JVM process of its own with its own Python workers;
- a standalone master and worker started on loopback from the installed PySpark with
  ``spark-class org.apache.spark.deploy.master.Master`` and ``...deploy.worker.Worker``
  (the pip package has no ``start-master.sh``), and ``--master spark://127.0.0.1:PORT``.

The input is the committed sample and a synthetic capture with injected faults, cut into
small splits so that both executors read and track connections.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from support.pipeline_builder import read_tables

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "mqtt-sample.pcapng"
SPLIT_BYTES = "200000"  # several read tasks for a 1 MB input
QUIET = ("--json", "--quiet", "--split-bytes", SPLIT_BYTES)
SYNTH = ("--frames", "4000", "--seed", "3", "--connections", "12")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    pytest.importorskip("pyspark")
    folder = tmp_path_factory.mktemp("cluster-inputs")
    synthetic = folder / "synth.pcap"
    subprocess.run(
        [sys.executable, "-m", "pubproof.pipeline.synth", str(synthetic), *SYNTH],
        check=True,
        capture_output=True,
    )
    return [str(SAMPLE), str(synthetic)]


@pytest.fixture(scope="module")
def reference(inputs: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:  # type: ignore[type-arg]
    out = tmp_path_factory.mktemp("python-engine") / "out"
    _check(inputs, out, "--engine", "python")
    return read_tables(str(out))


def _check(
    inputs: list[str], out: Path, *options: str, env: dict[str, str] | None = None
) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "pubproof", "check", *inputs, "--out", str(out), *QUIET, *options],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr + _tail(out / "spark.log")
    assert done.stderr == ""
    summary: dict[str, object] = json.loads(done.stdout)
    return summary


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""


def _spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def test_local_cluster(inputs: list[str], reference: dict[str, list], tmp_path: Path) -> None:  # type: ignore[type-arg]
    out = tmp_path / "out"
    # a local cluster's worker keeps its executors' directories under SPARK_HOME/work
    work = Path(_spark_home()) / "work"
    before = set(work.glob("app-*"))
    options = ("--master", "local-cluster[2,1,1024]", "--partitions", "4")
    try:
        summary = _check(inputs, out, *options)
        assert summary["engine"] == "spark"
        assert read_tables(str(out)) == reference
        # two executor processes ran: each has its directory under the application's
        (application,) = set(work.glob("app-*")) - before
        executors = sorted(p.name for p in application.iterdir() if p.is_dir())
        assert executors[:2] == ["0", "1"], executors
    finally:
        for made in set(work.glob("app-*")) - before:
            shutil.rmtree(made, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for(path: Path, text: str, process: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in path.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"no {text!r} in {path}:\n{_tail(path)}")


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[str]:
    """A standalone master and one worker (2 cores, 2 GB) on loopback."""
    home = _spark_home()
    spark_class = os.path.join(home, "bin", "spark-class")
    env = {**os.environ, "SPARK_HOME": home, "SPARK_LOCAL_IP": "127.0.0.1"}
    env["SPARK_WORKER_DIR"] = str(tmp_path / "work")
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    processes: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []

    def start(name: str, *argv: str) -> tuple[subprocess.Popen[bytes], Path]:
        log_path = tmp_path / f"{name}.log"
        log = log_path.open("wb")
        process = subprocess.Popen(
            [spark_class, *argv], stdout=log, stderr=subprocess.STDOUT, env=env
        )
        processes.append((process, log))
        return process, log_path

    try:
        master, master_log = start(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(_free_port())),
        )
        _wait_for(master_log, "I have been elected leader", master, 120)
        worker, worker_log = start(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            *("--host", "127.0.0.1", "--cores", "2", "--memory", "2g"),
            *("--webui-port", str(_free_port()), url),
        )
        _wait_for(worker_log, "Successfully registered with master", worker, 120)
        yield url
    finally:
        for process, log in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


def test_standalone_master_and_worker(
    inputs: list[str],
    reference: dict[str, list],  # type: ignore[type-arg]
    standalone: str,
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    options = ("--master", standalone, "--partitions", "4")
    summary = _check(inputs, out, *options)
    assert summary["engine"] == "spark"
    assert read_tables(str(out)) == reference
    # the work ran in an executor the worker started, not in the driver
    assert [p.name for p in (tmp_path / "work").glob("app-*/*")][:1] == ["0"]
