"""The engines of ``pubproof check`` in alternating runs, for a ratio the machine's load
moves less than one run of each: the python engine, and Spark on a local master scanning
the captures (``--spark-read scan``, the default there) and shuffling the frames
(``--spark-read shuffle``, a cluster's default); and, as mode ``together``, one python
engine per core all at once, each on the whole capture: what a core gives when every core
works (shared caches, memory, the host), the bound Spark's tasks run under.

    python benchmarks/bench_spark_reads.py CAPTURE [--rounds 5] [--modes python,scan,shuffle]
    python benchmarks/bench_spark_reads.py CAPTURE --modes python,scan,together

Each round runs every mode once on CAPTURE and once on a small capture (``synth --frames
100``, as ``bench_pipeline.py``'s fixed cost: about 800 frames), each run after the
previous one's JVM and Python workers are gone. Per run: the wall time and the CPU time
of the whole machine meanwhile (``/proc/stat``: the JVM and Spark's workers included;
nothing else should run). Then, from the medians (and the
bests), each mode's rate per core net of its fixed cost, against the python engine's.
Every run's tables are checked equal to the python engine's first run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

TABLES = ("packets", "violations", "connections", "quarantine", "summary")


def _settle() -> None:
    """Wait (at most 30 s) until no JVM or Spark worker of an earlier run is left."""
    for _ in range(60):
        found = subprocess.run(
            ["pgrep", "-f", "java|pyspark|spark_daemon"], capture_output=True, text=True
        ).stdout.split()
        if not found:
            break
        time.sleep(0.5)
    time.sleep(1)


def _busy() -> float:
    """The machine's CPU seconds so far (user, nice, system, irq, softirq)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = stat.readline().split()[1:]
    ticks = sum(int(fields[i]) for i in (0, 1, 2, 5, 6))
    return ticks / os.sysconf("SC_CLK_TCK")


def _argv(mode: str, capture: Path, out: Path) -> list[str]:
    argv = [sys.executable, "-m", "pubproof", "check", str(capture), "--out", str(out)]
    python = mode in ("python", "together")
    return [*argv, "--quiet", *(["--engine", "python"] if python else ["--spark-read", mode])]


def run(mode: str, capture: Path, out: Path) -> tuple[float, float]:
    """One ``pubproof check`` of ``capture`` in ``mode``: wall and machine CPU seconds
    (``together``: one python engine per core at once, into ``out`` and ``out-N``, until
    the last one ends)."""
    _settle()
    copies = (os.cpu_count() or 1) if mode == "together" else 1
    outs = [out, *(out.with_name(f"{out.name}-{n}") for n in range(1, copies))]
    for each in outs:
        shutil.rmtree(each, ignore_errors=True)
    busy, start = _busy(), time.perf_counter()
    processes = [subprocess.Popen(_argv(mode, capture, each)) for each in outs]
    if any(process.wait() != 0 for process in processes):
        raise SystemExit(f"pubproof check failed ({mode})")
    return time.perf_counter() - start, _busy() - busy


def _tables(out: Path) -> dict[str, object]:
    return {t: pq.read_table(out / t).to_pylist() for t in TABLES}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--modes", default="python,scan,shuffle")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    cores = os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="pubproof-bench-reads-"))
    tiny = work / "tiny.pcap"
    subprocess.run(
        [sys.executable, "-m", "pubproof.pipeline.synth", str(tiny), "--frames", "100",
         "--seed", str(args.seed), "--connections", "10"],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    runs: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
    fixed: dict[str, list[float]] = {m: [] for m in modes}
    reference: dict[str, object] | None = None
    wrong = []
    try:
        for number in range(1, args.rounds + 1):
            line = []
            for mode in modes:
                wall, cpu = run(mode, args.capture, work / "out")
                for out in sorted(work.glob("out*")):
                    if out.name.startswith("out-tiny"):
                        continue
                    tables = _tables(out)
                    if reference is None:
                        reference = tables
                    elif tables != reference:
                        wrong.append(f"round {number}, {mode}: tables differ from the first run's")
                fixed[mode].append(run(mode, tiny, work / "out-tiny")[0])
                runs[mode].append((wall, cpu))
                line.append(f"{mode} {wall:.2f} s ({cpu:.1f} CPU s)")
            print(f"round {number}: " + " | ".join(line), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def net(mode: str, pick: str) -> float:
        walls = [w for w, _ in runs[mode]]
        wall = statistics.median(walls) if pick == "median" else min(walls)
        cost = statistics.median(fixed[mode]) if pick == "median" else min(fixed[mode])
        # core-seconds of one capture's frames' own work (``together`` does it once per core)
        used = 1 if mode in ("python", "together") else cores
        return max(wall - cost, 1e-9) * used

    print(f"{args.capture.name}, {args.rounds} rounds, {cores} cores\n")
    print("| mode | wall s (median, best) | machine CPU s (median) | fixed s (median) "
          "| x python per core, net (medians) | (bests) |")  # fmt: skip
    print("|---|--:|--:|--:|--:|--:|")
    for mode in modes:
        walls = [w for w, _ in runs[mode]]
        cpus = [c for _, c in runs[mode]]
        versus = [
            f"{net('python', pick) / net(mode, pick):.2f}" if "python" in modes else "n/a"
            for pick in ("median", "best")
        ]
        print(
            f"| {mode} | {statistics.median(walls):.2f}, {min(walls):.2f} | "
            f"{statistics.median(cpus):.1f} | {statistics.median(fixed[mode]):.2f} | "
            f"{versus[0]} | {versus[1]} |"
        )
    if wrong:
        print("\nWRONG ANSWERS:\n" + "\n".join(wrong), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
