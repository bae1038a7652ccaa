"""The commands ``bench_pipeline.py`` runs, each timed (:func:`timed`): its wall time, and
the peak resident memory and the CPU time of its whole process tree, sampled from /proc
every 50 ms; and the commands themselves: the synthetic capture's generator, ``pubproof
check``, tshark's decoding, a cProfile of the python engine, and a count of instructions
(and cache misses) under valgrind.
"""

from __future__ import annotations

import json
import os
import pstats
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children(pid: int) -> list[int]:
    """Every child of the process, whichever of its threads started it (the JVM starts
    Spark's Python workers from threads other than its main one)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(p) for p in handle.read().split()]
        except OSError:
            continue
    return found


TICK = os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """The process and all its descendants."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack += _children(current)
    return found


def _tree_rss(pids: Sequence[int], cpu: dict[int, float] | None = None) -> int:
    """The resident memory of the processes ``pids`` (those still running); with ``cpu``,
    each one's CPU seconds so far (user + system of all its threads) noted by pid."""
    total = 0
    for current in pids:
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * PAGE
            if cpu is not None:
                with open(f"/proc/{current}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                cpu[current] = (int(fields[11]) + int(fields[12])) / TICK
        except (OSError, IndexError, ValueError):
            continue
    return total


#: seconds between two samples of the tree's memory; the tree itself (every thread's
#: children: the JVM has dozens of threads) is listed again every TREE_EVERY samples.
#: Listing it at every sample, every 20 ms, cost the sampler about 7% of a core beside a
#: Spark run, taken from Spark's own two cores; now it is about 1% (Spark's processes
#: live for seconds, not milliseconds, and memory grows over seconds too)
SAMPLE_SECONDS = 0.05
TREE_EVERY = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """One timed command."""

    name: str
    seconds: float
    peak_rss_mb: float
    stdout: str = ""
    #: CPU time (user + system) of the command's whole process tree (every process's, as
    #: last sampled from /proc, every 50 ms): on a machine shared with other work, a
    #: steadier measure than the wall time
    cpu_seconds: float = 0.0


def timed(name: str, argv: Sequence[str], *, stdout_to: Path | None = None) -> Run:
    """Run ``argv``; its wall time and the peak RSS of its process tree. Fails loudly."""
    out = stdout_to.open("wb") if stdout_to else subprocess.PIPE
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()
    cpu_by_pid: dict[int, float] = {}

    def sample() -> None:
        nonlocal peak
        pids: list[int] = []
        samples = 0
        while not done.is_set():
            if samples % TREE_EVERY == 0:
                pids = _tree(process.pid)
            samples += 1
            peak = max(peak, _tree_rss(pids, cpu_by_pid))
            done.wait(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    cpu = sum(cpu_by_pid.values())
    if stdout_to:
        out.close()  # type: ignore[union-attr]
    if process.returncode not in (0, 1):
        raise SystemExit(f"{name} failed ({process.returncode}): {stderr.decode()[-2000:]}")
    text = stdout.decode() if stdout else ""
    print(
        f"  {name}: {seconds:.1f} s, {cpu:.1f} s CPU, peak {peak / 2**20:.0f} MB", file=sys.stderr
    )
    return Run(name=name, seconds=seconds, peak_rss_mb=peak / 2**20, stdout=text, cpu_seconds=cpu)


def synth(path: Path, frames: int, seed: int, *extra: str) -> tuple[Run, dict[str, Any]]:
    argv = [sys.executable, "-m", "pubproof.pipeline.synth", str(path), "--frames", str(frames)]
    argv += ["--seed", str(seed), "--connections", str(max(10, frames // 500)), *extra]
    run = timed(f"synth {path.name}", argv)
    expected: dict[str, Any] = json.loads(Path(f"{path}.expected.json").read_text())
    return run, expected


def check(path: Path, out: Path, engine: str, *extra: str) -> Run:
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "pubproof", "check", str(path), "--out", str(out)]
    argv += ["--engine", engine, "--json", "--quiet", *extra]
    return timed(" ".join(["pubproof check --engine", engine, *extra, path.name]), argv)


#: the Spark engine's runs: the default read on a local master (each task scans the
#: captures) and the shuffle a cluster uses, ``--spark-read shuffle``
SPARK_READS = {"spark": (), "spark-shuffle": ("--spark-read", "shuffle")}


def tshark_decode(path: Path, out: Path) -> Run:
    argv = ["tshark", "-r", str(path), "-n", "-T", "fields", "-e", "frame.number",
            "-e", "tcp.stream", "-e", "mqtt.msgtype", "-e", "mqtt.qos", "-e", "mqtt.msgid",
            "-e", "mqtt.topic", "-e", "_ws.expert.severity",
            "-o", "tcp.reassemble_out_of_order:TRUE"]  # fmt: skip
    return timed("tshark -T fields (MQTT)", argv, stdout_to=out)


def profile(path: Path, out: Path, work: Path, top: int = 15) -> list[str]:
    stats_file = work / "python-engine.prof"
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "cProfile", "-o", str(stats_file), "-m", "pubproof", "check",
            str(path), "--out", str(out), "--engine", "python", "--quiet"]  # fmt: skip
    timed("cProfile of --engine python", argv)
    stats = pstats.Stats(str(stats_file))
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = []
    entries = sorted(stats.stats.items(), key=lambda item: -item[1][2])  # type: ignore[attr-defined]
    for (filename, line, function), (_, calls, own, cumulative, _) in entries[:top]:
        where = f"{Path(filename).parent.name}/{Path(filename).name}:{line}"
        rows.append(
            f"| {function} | {where} | {calls:,} | {own:.1f} | {100 * own / total:.0f}% "
            f"| {cumulative:.1f} |"
        )
    return rows


#: the second-level cache ``--cache`` simulates as cachegrind's last level: 512 KiB,
#: 8-way, 64-byte lines (the L2 of a core of the machines this was measured on). A miss
#: there goes to the shared L3, or to memory when other processes have the L3: the
#: misses a shared machine makes dearer
CACHE_L2 = "524288,8,64"
#: cachegrind's summary lines ``--cache`` reads, and the names they are given
_CACHE_EVENTS = {"I   refs": "instructions", "I1  misses": "l1i_misses", "D1  misses": "l1d_misses",
                 "LLi misses": "l2i_misses", "LLd misses": "l2d_misses"}  # fmt: skip


def instructions(path: Path, out: Path, *, cache: bool = False) -> dict[str, int]:
    """The instructions ``pubproof check --engine python`` runs on ``path`` (the process's
    own, under valgrind: a count that the machine's other load does not change; the
    string hashes fixed so that two runs count alike), as ``{"instructions": n}``; with
    ``cache`` also the first-level and :data:`CACHE_L2` misses cachegrind simulates
    (instruction and data: ``l1i_misses``, ``l1d_misses``, ``l2i_misses``,
    ``l2d_misses``)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    simulate = ["--cache-sim=yes", f"--LL={CACHE_L2}"] if cache else ["--cache-sim=no"]
    argv = ["valgrind", "--tool=cachegrind", *simulate, "--cachegrind-out-file=/dev/null",
            sys.executable, "-m", "pubproof", "check", str(path), "--out", str(out), "--quiet",
            "--engine", "python"]  # fmt: skip
    done = subprocess.run(
        argv, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}
    )
    counts: dict[str, int] = {}
    for line, name in _CACHE_EVENTS.items():
        found = re.search(re.escape(line) + r":\s+([\d,]+)", done.stderr)
        if found is not None:
            counts[name] = int(found.group(1).replace(",", ""))
    wanted = set(_CACHE_EVENTS.values()) if cache else {"instructions"}
    if done.returncode not in (0, 1) or not wanted <= counts.keys():
        raise SystemExit(f"valgrind on {path.name} failed: {done.stderr[-2000:]}")
    return counts


def cpu_of(run: Any, *args: Any) -> tuple[float, Any]:
    """``run(*args)`` and the CPU time (user and system) of the processes it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = run(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done
