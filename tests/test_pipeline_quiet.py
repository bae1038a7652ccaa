"""Quiet means quiet: ``pubproof check --quiet`` prints nothing but errors, whichever
engine; Spark's and the JVM's start-up chatter goes to ``DIR/spark.log``, never to the
terminal (with or without ``--quiet``), and no Python warning (PySpark's about an
unsupported pandas, say) reaches standard error. Run as a user runs it: a subprocess.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "mqtt-sample.pcapng"


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pubproof", "check", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.heavy  # starts Spark: left out of the quick loop
def test_quiet_spark_prints_nothing(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    out = tmp_path / "out"
    done = _check(str(SAMPLE), "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""
    log = (out / "spark.log").read_text(encoding="utf-8", errors="replace")
    assert "log4j" in log  # what used to reach the terminal is here
    assert (out / "reconciliation.json").is_file()


@pytest.mark.heavy  # starts Spark: left out of the quick loop
def test_spark_chatter_never_reaches_the_terminal(tmp_path: Path) -> None:
    """Without ``--quiet``: the summary on stdout, progress on stderr, nothing else."""
    pytest.importorskip("pyspark")
    done = _check(str(SAMPLE), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "237 frames" in done.stdout and "nothing quarantined" in done.stdout
    for line in done.stderr.splitlines():
        assert line.startswith(("check:", "spark:")), line


def test_quiet_python_engine_prints_only_errors(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _check(str(SAMPLE), "--out", str(out), "--engine", "python", "--quiet")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    noise = tmp_path / "noise.pcapng"
    noise.write_bytes(random.Random(3).randbytes(1000))
    done = _check(str(SAMPLE), str(noise), "--out", str(out), "--engine", "python", "--quiet")
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"pubproof check: {noise}: could not be read (bad-magic): not a pcap or pcapng file "
        f"(first bytes {noise.read_bytes()[:4].hex()})"
    ]
