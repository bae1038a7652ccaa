"""The capture pipeline against tshark, on a synthetic and a real capture, in one run.

    python benchmarks/bench_pipeline.py                       # 1,000,000 frames (the issue)
    python benchmarks/bench_pipeline.py --frames 100000       # a quick run
    python benchmarks/bench_pipeline.py --json                # the results as JSON
    python benchmarks/bench_pipeline.py --real FILE           # that real capture
    python benchmarks/bench_pipeline.py --no-real             # the synthetic capture only

The real capture is ``WORK/real.pcapng`` unless ``--real`` names one; when it is missing,
``scripts/record-capture`` records it (a real mosquitto, mosquitto_pub and mosquitto_sub
at QoS 0, 1 and 2, about 390,000 frames; needs root for its network namespace). There the
answer is checked against tshark's own decoding of the same file, from the timed tshark
run: every MQTT packet in the same frame with the same type, and the reconciliation.

What it measures (wall time of each command, peak RSS of its whole process tree, sampled
from /proc every 50 ms):

1. ``python -m pubproof.pipeline.synth`` writes the capture and its expected counts;
2. ``tshark -r FILE -T fields -e frame.number -e mqtt.msgtype ...`` decodes every MQTT
   packet (out-of-order reassembly on; tshark is single-threaded);
3. ``pubproof check --engine python`` (one process) and ``pubproof check`` (Spark,
   ``local[*]``), each checked against the generator's answer: packets per type, the
   reconciliation, and every injected fault found with the model's rule ids and nothing
   else (:mod:`pubproof.pipeline.synth.check`). A wrong answer fails the run (exit 1);
4. Spark's fixed cost: ``pubproof check`` on a 100-frame capture;
5. peak memory of ``--engine python`` as the largest connection grows
   (``--connection-packets``) and as the capture grows (a tenth of ``--frames``, then all).

Per-core rates divide by the cores each command can use (tshark and the python engine: 1;
Spark local[*]: every core). The fixed cost of each engine (the whole command on a
100-frame capture: interpreter, imports, Spark's session) is measured apart, and each rate
is also given without it (``net``). ``--profile`` adds a cProfile of the python engine on
the main capture (the top functions by own time).

``--editions`` measures only MQTT 5.0 against 3.1.1, per frame: two captures from the same
seed, one all 3.1.1 and one all 5.0 (``--mqtt5 1``: properties and Topic Aliases), each
checked by ``pubproof check --engine python`` ``--repeat`` times in turn, both answers
checked against the generator's. What counts is the CPU time of the process (user and
system): the best of the runs (on a shared machine a run is only ever slowed down, and its
wall time by every other process as well), and the median of the rounds' ratios (the two
runs of a round share the machine's slow spells; each edition goes first in every other
round), each with a 95% bootstrap interval (and the geometric mean of the rounds' ratios
with its own): whether the rounds taken tell the ratio from a goal. ``--instructions``
adds a count that no other load changes: the instructions of one run of each under
valgrind (both at once, some minutes at 200,000 frames)::

    python benchmarks/bench_pipeline.py --editions --frames 200000 --repeat 5 --instructions

``--cache`` counts them with cachegrind's simulation of the caches (about twice as
long): the first-level misses, and those of a 512 KiB second level, which a shared
machine makes dearer (their next level is the L3 other processes also fill). Two runs
that execute alike and miss alike should take alike; where CPU time parts from
instructions, these say whether the memory is why.

``--real-rounds`` measures only the python engine against tshark on the real capture
(``--real``), the same way: ``--repeat`` alternating rounds of tshark and
``pubproof check --engine python`` (each first in every other round), CPU time, the best
run of each and the median of the rounds' ratios, with and without the python engine's
fixed cost (the whole command on a 100-frame capture, its best of three); the packets
table checked against tshark's decoding every round::

    python benchmarks/bench_pipeline.py --real-rounds --real real.pcapng --repeat 5
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import pstats
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pubproof.pipeline.synth.check import (
    compare_packets,
    compare_reconciliation,
    compare_violations,
)

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


def verify(expected: dict[str, Any], out: Path) -> list[str]:
    """Every disagreement between the pipeline's tables and the generator's answer."""
    problems = compare_packets(expected, pq.read_table(out / "packets").column("type").to_pylist())
    reconciliation = json.loads((out / "reconciliation.json").read_text())
    problems += compare_reconciliation(expected, reconciliation)
    comparison = compare_violations(expected, pq.read_table(out / "violations").to_pylist())
    return problems + comparison.problems


#: tshark's mqtt.msgtype numbers (MQTT section 2.2.1)
MSGTYPES = {
    1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL",
    7: "PUBCOMP", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE", 11: "UNSUBACK",
    12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT", 15: "AUTH",
}  # fmt: skip


#: expert-info severity "error" (PI_ERROR): tshark's own dissector failed on the frame
PI_ERROR = 0x00800000


def verify_against_tshark(tsv: Path, out: Path) -> tuple[list[str], dict[str, int]]:
    """Every disagreement between the packets table and tshark's decoding (the TSV of
    :func:`tshark_decode`): the (frame, type) of every MQTT packet, and the
    reconciliation; and what was compared. A TCP stream is compared up to the first frame
    where tshark reports an error of its own (an exception in its MQTT dissector, after
    which it reads packets out of payload bytes): from there on tshark is no oracle."""
    stream_of: dict[int, str] = {}
    broken: dict[str, int] = {}  # stream -> the first frame tshark failed on
    theirs: dict[tuple[int, str], int] = {}
    for line in tsv.read_text().splitlines():
        cells = line.split("\t")
        frame, stream = int(cells[0]), cells[1]
        stream_of[frame] = stream
        severities = cells[6].split(",") if len(cells) > 6 and cells[6] else []
        if stream not in broken and any(int(v) & PI_ERROR for v in severities if v):
            broken[stream] = frame
        if len(cells) < 3 or not cells[2]:
            continue
        for value in cells[2].split(","):
            key = (frame, MSGTYPES.get(int(value), value))
            theirs[key] = theirs.get(key, 0) + 1

    def compared(frame: int) -> bool:
        stream = stream_of.get(frame, "")
        return stream not in broken or frame < broken[stream]

    table = pq.read_table(out / "packets", columns=["frame", "type"])
    ours: dict[tuple[int, str], int] = {}
    for frame, kind in zip(
        table.column("frame").to_pylist(), table.column("type").to_pylist(), strict=True
    ):
        ours[(frame, kind)] = ours.get((frame, kind), 0) + 1
    keys = {key for key in set(theirs) | set(ours) if compared(key[0])}
    problems = [
        f"frame {frame} {kind}: tshark {theirs.get((frame, kind), 0)}, "
        f"pubproof {ours.get((frame, kind), 0)}"
        for frame, kind in sorted(keys)
        if theirs.get((frame, kind), 0) != ours.get((frame, kind), 0)
    ]
    reconciliation = json.loads((out / "reconciliation.json").read_text())
    if not reconciliation["ok"] or reconciliation["unreadable"]:
        problems.append(f"reconciliation: {reconciliation}")
    if not ours:
        problems.append("no MQTT packet found")
    counts = {
        "packets": sum(ours.values()),
        "packets_compared": sum(n for key, n in ours.items() if key in keys),
        "streams": len(set(stream_of.values())),
        "streams_where_tshark_failed": len(broken),
    }
    return problems, counts


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--connection-packets", default="10000,100000,1000000",
        help="sizes of the largest connection for the memory rows (comma-separated)",
    )  # fmt: skip
    parser.add_argument("--work", type=Path, default=Path("/tmp/pubproof-bench-pipeline"))
    parser.add_argument("--profile", action="store_true", help="cProfile the python engine")
    parser.add_argument("--real", type=Path, default=None, help="a real capture (pcap/pcapng)")
    parser.add_argument("--no-real", action="store_true", help="the synthetic capture only")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--editions", action="store_true",
        help="only MQTT 5.0 against 3.1.1, per frame (python engine)",
    )  # fmt: skip
    parser.add_argument(
        "--repeat", type=int, default=5,
        help="runs per edition (--editions), per decoder (--real-rounds)",
    )  # fmt: skip
    parser.add_argument(
        "--real-rounds", action="store_true",
        help="only the python engine against tshark on --real, in --repeat rounds",
    )  # fmt: skip
    parser.add_argument(
        "--instructions", action="store_true",
        help="--editions: also count each capture's instructions under valgrind",
    )  # fmt: skip
    parser.add_argument(
        "--cache", action="store_true",
        help="--editions: --instructions, and the cache misses cachegrind simulates "
        f"(L1, and an L2 of {CACHE_L2}: size, ways, line)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.editions:
        return editions(
            args.frames, args.seed, args.work, args.repeat, as_json=args.json,
            count=args.instructions, cache=args.cache,
        )  # fmt: skip
    if args.real_rounds:
        if args.real is None:
            parser.error("--real-rounds needs --real FILE")
        return real_rounds(args.real, args.seed, args.work, args.repeat, as_json=args.json)
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    results: dict[str, Any] = {"frames_asked": args.frames, "cores": cores}
    problems: list[str] = []

    print("fixed costs (100 frames)", file=sys.stderr)
    synth(work / "tiny.pcap", 100, args.seed)
    fixed = {
        "python": check(work / "tiny.pcap", work / "out-tiny", "python").seconds,
        **{
            name: check(work / "tiny.pcap", work / "out-tiny", "spark", *extra).seconds
            for name, extra in SPARK_READS.items()
        },
    }
    startup = 0.0
    results["fixed_seconds"] = fixed

    print("synthetic capture", file=sys.stderr)
    capture = work / f"synth-{args.frames}.pcap"
    gen, expected = synth(capture, args.frames, args.seed)
    frames = expected["frames"]
    results["capture"] = {"frames": frames, "connections": expected["connections"],
                          "bytes": capture.stat().st_size, "synth": asdict(gen)}  # fmt: skip
    tshark = tshark_decode(capture, work / "tshark.tsv")
    python = check(capture, work / "out-python", "python")
    problems += [f"python engine: {p}" for p in verify(expected, work / "out-python")]
    sparks = {}
    for name, extra in SPARK_READS.items():
        sparks[name] = check(capture, work / f"out-{name}", "spark", *extra)
        problems += [f"{name}: {p}" for p in verify(expected, work / f"out-{name}")]
    spark = sparks["spark"]
    spark_summary = json.loads(spark.stdout) if spark.stdout else {}
    results["rates"] = rates(frames, tshark, python, sparks, cores, fixed)
    startup = spark_summary.get("startup_seconds", startup)
    results["spark_startup_seconds"] = fixed["spark"]
    results["spark_startup_reported"] = startup

    if not args.no_real:
        real: Path = args.real or work / "real.pcapng"
        if not real.exists():
            print(f"recording {real} (scripts/record-capture)", file=sys.stderr)
            script = Path(__file__).resolve().parent.parent / "scripts" / "record-capture"
            subprocess.run([str(script), str(real)], check=True)
        real_frames = int(
            subprocess.run(
                ["capinfos", "-T", "-r", "-c", str(real)], capture_output=True, text=True,
                check=True,
            ).stdout.split("\t")[-1]
        )  # fmt: skip
        print(f"real capture {real} ({real_frames:,} frames)", file=sys.stderr)
        tsv = work / "tshark-real.tsv"
        real_tshark = tshark_decode(real, tsv)
        real_python = check(real, work / "out-real-python", "python")
        found, compared = verify_against_tshark(tsv, work / "out-real-python")
        problems += [f"real, python: {p}" for p in found]
        real_sparks = {}
        for name, extra in SPARK_READS.items():
            real_sparks[name] = check(real, work / f"out-real-{name}", "spark", *extra)
            found, _ = verify_against_tshark(tsv, work / f"out-real-{name}")
            problems += [f"real, {name}: {p}" for p in found]
        results["real"] = {
            "path": str(real), "frames": real_frames, "bytes": real.stat().st_size,
            "compared_with_tshark": compared,
            "rates": rates(real_frames, real_tshark, real_python, real_sparks, cores, fixed),
        }  # fmt: skip

    print("memory as the largest connection grows", file=sys.stderr)
    memory = []
    for packets in [int(n) for n in args.connection_packets.split(",") if n]:
        path = work / f"large-{packets}.pcap"
        _, exp = synth(path, 1000, args.seed, "--large-connection-packets", str(packets),
                       "--payload-sizes", "16:3,200:1", "--inject", "all=0")  # fmt: skip
        run = check(path, work / "out-large", "python")
        problems += [f"large {packets}: {p}" for p in verify(exp, work / "out-large")]
        memory.append({"largest_connection_packets": exp["largest_connection_packets"],
                       "frames": exp["frames"], "seconds": run.seconds,
                       "peak_rss_mb": run.peak_rss_mb})  # fmt: skip
    results["memory_by_connection"] = memory
    tenth = work / f"synth-{args.frames // 10}.pcap"
    _, exp = synth(tenth, args.frames // 10, args.seed)
    run = check(tenth, work / "out-tenth", "python")
    problems += [f"tenth: {p}" for p in verify(exp, work / "out-tenth")]
    results["memory_by_capture"] = [
        {"frames": exp["frames"], "peak_rss_mb": run.peak_rss_mb},
        {"frames": frames, "peak_rss_mb": python.peak_rss_mb},
    ]
    if args.profile:
        results["profile"] = profile(capture, work / "out-profile", work)
    results["problems"] = problems
    results["machine"] = (
        f"{platform.processor() or platform.machine()}, {cores} cores, "
        f"Python {platform.python_version()}"
    )
    (work / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results) if args.json else table(results))
    if problems:
        print("\nWRONG ANSWERS:\n" + "\n".join(problems[:50]), file=sys.stderr)
        return 1
    return 0


def rates(
    frames: int,
    tshark: Run,
    python: Run,
    sparks: dict[str, Run],
    cores: int,
    fixed: dict[str, float],
) -> list[dict[str, Any]]:
    """Per decoder: seconds, frames per second (per core), the same without the engine's
    fixed cost (``net``), the ratio to tshark per core, peak RSS. ``sparks``: the Spark
    runs by their :data:`SPARK_READS` name, each with its own fixed cost."""
    found: list[dict[str, Any]] = []
    runs = [(tshark, 1, 0.0), (python, 1, fixed["python"])]
    runs += [(run, cores, fixed[name]) for name, run in sparks.items()]
    for run, used, cost in runs:
        per_core = frames / run.seconds / used
        # None when the fixed cost, measured on its own run, is not below this run's time
        # (a noisy start): no net rate can be told then
        net = frames / (run.seconds - cost) / used if run.seconds > cost else None
        found.append({
            "cpu_seconds": run.cpu_seconds,
            "frames_per_cpu_s": frames / max(run.cpu_seconds, 1e-9),
            "name": run.name.rsplit(" ", 1)[0] if run.name.startswith("pubproof") else run.name,
            "seconds": run.seconds, "frames_per_s": frames / run.seconds, "cores": used,
            "frames_per_s_per_core": per_core, "net_frames_per_s_per_core": net,
            "fixed_seconds": cost, "peak_rss_mb": run.peak_rss_mb,
        })  # fmt: skip
    tshark_per_core = found[0]["frames_per_s_per_core"]
    python_net = found[1]["net_frames_per_s_per_core"]
    for rate in found:
        net = rate["net_frames_per_s_per_core"]
        rate["vs_tshark_per_core"] = rate["frames_per_s_per_core"] / tshark_per_core
        rate["net_vs_tshark_per_core"] = None if net is None else net / tshark_per_core
        rate["net_vs_python_per_core"] = (
            None if net is None or python_net is None else net / python_net
        )
        rate["cpu_vs_tshark"] = rate["frames_per_cpu_s"] / found[0]["frames_per_cpu_s"]
    return found


def rate_lines(title: str, found: list[dict[str, Any]]) -> list[str]:
    lines = [
        title,
        "",
        "| decoder | seconds | cores | frames/s per core | x tshark per core | net of fixed "
        "cost: frames/s per core | net x tshark | net x python | CPU s | frames per CPU s "
        "| x tshark per CPU s | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in found:
        lines.append(
            f"| {r['name']} | {r['seconds']:.1f} | {r['cores']} | "
            f"{r['frames_per_s_per_core']:,.0f} | {r['vs_tshark_per_core']:.2f} | "
            f"{_shown(r['net_frames_per_s_per_core'], ',.0f')} | "
            f"{_shown(r['net_vs_tshark_per_core'], '.2f')} | "
            f"{_shown(r['net_vs_python_per_core'], '.2f')} | {r['cpu_seconds']:.1f} | "
            f"{r['frames_per_cpu_s']:,.0f} | {r['cpu_vs_tshark']:.2f} | {r['peak_rss_mb']:.0f} |"
        )
    return lines


def _shown(value: float | None, spec: str) -> str:
    """A rate as the table shows it: ``n/a`` where the fixed cost left none to tell."""
    return "n/a (fixed cost >= run)" if value is None else format(value, spec)


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


def interval(
    values: Sequence[float], statistic: Callable[[Sequence[float]], float], draws: int = 10_000
) -> tuple[float, float]:
    """A 95% bootstrap interval of ``statistic`` over ``values``: the statistic of
    ``draws`` resamplings (with replacement, a fixed seed: the same values give the same
    interval), their 2.5th and 97.5th percentiles. On a shared machine one round's ratio
    can be off by a third either way; the interval says whether the rounds taken are
    enough to tell the median (or the geometric mean) from a goal."""
    rng = random.Random(0)
    found = sorted(statistic(rng.choices(values, k=len(values))) for _ in range(draws))
    return found[draws * 25 // 1000], found[draws * 975 // 1000 - 1]


def editions(
    frames: int,
    seed: int,
    work: Path,
    repeat: int,
    *,
    as_json: bool,
    count: bool = False,
    cache: bool = False,
) -> int:
    """``pubproof check --engine python`` on 3.1.1 and on 5.0 traffic, per frame: CPU time
    in alternating rounds (the best run of each, and the median of the rounds' ratios),
    and with ``count`` the instructions of one run of each (valgrind, both at once), with
    ``cache`` also the cache misses cachegrind simulates (:func:`instructions`)."""
    work.mkdir(parents=True, exist_ok=True)
    captures = {}
    for name, share in (("3.1.1", "0"), ("5.0", "1")):
        path = work / f"editions-{name}-{frames}.pcap"
        _, expected = synth(path, frames, seed, "--mqtt5", share, "--inject", "all=0")
        captures[name] = (path, expected)
    seconds: dict[str, list[float]] = {name: [] for name in captures}
    tshark_seconds: dict[str, float] = {}
    peak: dict[str, float] = {}
    problems: list[str] = []

    for name, (path, _) in captures.items():  # tshark's CPU time on the same capture
        tshark_seconds[name] = _cpu_of(tshark_decode, path, work / "tshark.tsv")[0]
    for turn in range(repeat):
        # each edition first in every other round: neither always starts on a cold cache
        order = list(captures.items())
        for name, (path, expected) in order if turn % 2 == 0 else order[::-1]:
            out = work / f"out-editions-{name}"
            cpu, done = _cpu_of(check, path, out, "python")
            seconds[name].append(cpu)
            peak[name] = max(peak.get(name, 0.0), done.peak_rss_mb)
            problems += [f"{name}: {p}" for p in verify(expected, out)]
    rows = []
    for name, (_, expected) in captures.items():
        best = min(seconds[name])
        rows.append({
            "edition": name, "frames": expected["frames"], "packets": expected["packets_total"],
            "connections": expected["connections_by_edition"], "seconds": seconds[name],
            "best_seconds": best, "frames_per_s": expected["frames"] / best,
            "tshark_seconds": tshark_seconds[name],
            "vs_tshark": tshark_seconds[name] / best, "peak_rss_mb": peak[name],
        })  # fmt: skip
    ratio = rows[1]["frames_per_s"] / rows[0]["frames_per_s"]
    frames_of = {row["edition"]: row["frames"] for row in rows}
    # a round's two runs were made minutes apart at most: their ratio cancels the slow
    # spells a shared machine has that last longer than a round
    rounds = [
        (frames_of["5.0"] / five) / (frames_of["3.1.1"] / three)
        for three, five in zip(seconds["3.1.1"], seconds["5.0"], strict=True)
    ]
    results: dict[str, Any] = {
        "rows": rows, "ratio_5_to_311": ratio, "round_ratios": rounds,
        "median_round_ratio": statistics.median(rounds),
        "median_round_interval": interval(rounds, statistics.median),
        "geometric_mean_round_ratio": statistics.geometric_mean(rounds),
        "geometric_mean_round_interval": interval(rounds, statistics.geometric_mean),
        "problems": problems, "repeat": repeat,
    }  # fmt: skip
    if count or cache:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            counted = dict(zip(captures, pool.map(
                lambda item: instructions(
                    item[1][0], work / f"out-count-{item[0]}", cache=cache
                ),
                captures.items(),
            ), strict=True))  # fmt: skip
        results["instructions"] = {name: c["instructions"] for name, c in counted.items()}
        results["instruction_ratio_5_to_311"] = (
            frames_of["5.0"] / counted["5.0"]["instructions"]
        ) / (frames_of["3.1.1"] / counted["3.1.1"]["instructions"])
        if cache:
            results["cache"] = counted
            results["cache_l2"] = CACHE_L2
    (work / "editions.json").write_text(json.dumps(results, indent=1) + "\n")
    if as_json:
        print(json.dumps(results))
    else:
        print("| traffic | frames | MQTT packets | runs (CPU s) | best (CPU s) | frames/CPU s "
              "| tshark (CPU s) | x tshark | peak RSS MB |")  # fmt: skip
        print("|---|--:|--:|---|--:|--:|--:|--:|--:|")
        for row in rows:
            runs = ", ".join(f"{t:.2f}" for t in row["seconds"])
            print(f"| MQTT {row['edition']} | {row['frames']:,} | {row['packets']:,} | {runs} "
                  f"| {row['best_seconds']:.2f} | {row['frames_per_s']:,.0f} "
                  f"| {row['tshark_seconds']:.2f} | {row['vs_tshark']:.2f} "
                  f"| {row['peak_rss_mb']:.0f} |")  # fmt: skip
        print(f"\n5.0 / 3.1.1 frames per CPU second, best runs: {ratio:.3f}")
        listed = ", ".join(f"{r:.3f}" for r in rounds)
        low, high = results["median_round_interval"]
        print(f"5.0 / 3.1.1, median of the rounds: {results['median_round_ratio']:.3f} "
              f"(95% bootstrap interval {low:.3f} to {high:.3f}; rounds {listed})")  # fmt: skip
        low, high = results["geometric_mean_round_interval"]
        print(f"5.0 / 3.1.1, geometric mean of the rounds: "
              f"{results['geometric_mean_round_ratio']:.3f} (95% bootstrap interval "
              f"{low:.3f} to {high:.3f})")  # fmt: skip
        if count or cache:
            per = {name: n / frames_of[name] for name, n in results["instructions"].items()}
            print(f"5.0 / 3.1.1 frames per instruction: "
                  f"{results['instruction_ratio_5_to_311']:.3f} ({per['3.1.1']:,.0f} and "
                  f"{per['5.0']:,.0f} instructions per frame, the whole process)")  # fmt: skip
        if cache:
            print(f"\nsimulated misses per frame (cachegrind; L2: {CACHE_L2}, size,ways,line):")
            print("| traffic | L1 instr | L1 data | L2 instr | L2 data |")
            print("|---|--:|--:|--:|--:|")
            for name, c in results["cache"].items():
                print(f"| MQTT {name} | " + " | ".join(
                    f"{c[event] / frames_of[name]:.1f}"
                    for event in ("l1i_misses", "l1d_misses", "l2i_misses", "l2d_misses")
                ) + " |")  # fmt: skip
            three, five = results["cache"]["3.1.1"], results["cache"]["5.0"]
            l2 = {name: (c["l2i_misses"] + c["l2d_misses"]) / frames_of[name]
                  for name, c in (("3.1.1", three), ("5.0", five))}  # fmt: skip
            print(f"5.0 / 3.1.1 L2 misses per frame: {l2['5.0'] / l2['3.1.1']:.3f}")
    if problems:
        print("\nWRONG ANSWERS:\n" + "\n".join(problems[:50]), file=sys.stderr)
        return 1
    return 0


def _cpu_of(run: Any, *args: Any) -> tuple[float, Any]:
    """``run(*args)`` and the CPU time (user and system) of the processes it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = run(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done


def real_rounds(real: Path, seed: int, work: Path, repeat: int, *, as_json: bool) -> int:
    """tshark and ``pubproof check --engine python`` on ``real`` in ``repeat`` alternating
    rounds: CPU time per run, the best of each, the median of the rounds' ratios, and the
    same net of the python engine's fixed cost; the packets table checked against
    tshark's decoding every round."""
    work.mkdir(parents=True, exist_ok=True)
    synth(work / "tiny.pcap", 100, seed)
    fixed = min(
        _cpu_of(check, work / "tiny.pcap", work / "out-tiny", "python")[0] for _ in range(3)
    )
    frames = int(
        subprocess.run(
            ["capinfos", "-T", "-r", "-c", str(real)], capture_output=True, text=True, check=True
        ).stdout.split("\t")[-1]
    )
    tsv, out = work / "tshark-real.tsv", work / "out-real-python"
    seconds: dict[str, list[float]] = {"tshark": [], "python": []}
    problems: list[str] = []
    for turn in range(repeat):
        order = ["tshark", "python"] if turn % 2 == 0 else ["python", "tshark"]
        for name in order:
            if name == "tshark":
                cpu, _ = _cpu_of(tshark_decode, real, tsv)
            else:
                cpu, _ = _cpu_of(check, real, out, "python")
            seconds[name].append(cpu)
        found, compared = verify_against_tshark(tsv, out)
        problems += [f"round {turn + 1}: {p}" for p in found]
    best = {name: min(runs) for name, runs in seconds.items()}
    rounds = [t / p for t, p in zip(seconds["tshark"], seconds["python"], strict=True)]
    net_rounds = [
        t / (p - fixed) for t, p in zip(seconds["tshark"], seconds["python"], strict=True)
    ]
    results: dict[str, Any] = {
        "path": str(real), "frames": frames, "seconds": seconds, "fixed_seconds": fixed,
        "best_ratio": best["tshark"] / best["python"],
        "best_ratio_net": best["tshark"] / (best["python"] - fixed),
        "round_ratios": rounds, "median_round_ratio": statistics.median(rounds),
        "median_round_ratio_net": statistics.median(net_rounds),
        "compared_with_tshark": compared, "problems": problems, "repeat": repeat,
    }  # fmt: skip
    (work / "real-rounds.json").write_text(json.dumps(results, indent=1) + "\n")
    if as_json:
        print(json.dumps(results))
    else:
        print(f"real capture {real.name}: {frames:,} frames; CPU seconds per run, "
              f"{repeat} alternating rounds")  # fmt: skip
        print("\n| decoder | runs (CPU s) | best (CPU s) | frames/CPU s, best |")
        print("|---|---|--:|--:|")
        for name in ("tshark", "python"):
            runs = ", ".join(f"{t:.2f}" for t in seconds[name])
            label = (
                "tshark -T fields (MQTT)" if name == "tshark" else "pubproof check --engine python"
            )
            print(f"| {label} | {runs} | {best[name]:.2f} | {frames / best[name]:,.0f} |")
        listed = ", ".join(f"{r:.2f}" for r in rounds)
        print(f"\npython engine x tshark per CPU second, best runs: "
              f"{results['best_ratio']:.2f} ({results['best_ratio_net']:.2f} net of its fixed "
              f"cost, {fixed:.2f} s)")  # fmt: skip
        print(f"median of the rounds: {results['median_round_ratio']:.2f} "
              f"({results['median_round_ratio_net']:.2f} net; rounds {listed})")  # fmt: skip
    if problems:
        print("\nWRONG ANSWERS:\n" + "\n".join(problems[:50]), file=sys.stderr)
        return 1
    return 0


def table(results: dict[str, Any]) -> str:
    capture = results["capture"]
    lines = rate_lines(
        f"synthetic capture: {capture['frames']:,} frames, {capture['connections']:,} "
        f"connections, {capture['bytes'] / 2**20:.0f} MB ({results['machine']})",
        results["rates"],
    )
    if results.get("real"):
        real = results["real"]
        title = (
            f"real capture {Path(real['path']).name}: {real['frames']:,} frames, "
            f"{real['bytes'] / 2**20:.0f} MB"
        )
        lines += ["", *rate_lines(title, real["rates"])]
        c = real["compared_with_tshark"]
        lines += [
            "",
            f"checked against tshark: {c['packets_compared']:,} of {c['packets']:,} MQTT "
            f"packets, frame and type (tshark's MQTT dissector failed in "
            f"{c['streams_where_tshark_failed']} of {c['streams']} TCP streams, which are "
            "compared up to that frame)",
        ]
    fixed = results["fixed_seconds"]
    lines += [
        "",
        f"fixed cost (100-frame capture, whole command): python {fixed['python']:.1f} s, "
        f"Spark {fixed['spark']:.1f} s (--spark-read shuffle {fixed.get('spark-shuffle', 0):.1f} s)"
        + (
            f" (Spark session start reported by the job: {results['spark_startup_reported']:.1f} s)"
            if results.get("spark_startup_reported")
            else ""
        ),
        "",
        "| largest connection (packets) | frames | seconds | peak RSS MB (--engine python) |",
        "|---:|---:|---:|---:|",
    ]
    for m in results["memory_by_connection"]:
        lines.append(
            f"| {m['largest_connection_packets']:,} | {m['frames']:,} | {m['seconds']:.1f} "
            f"| {m['peak_rss_mb']:.0f} |"
        )
    lines += ["", "| capture (frames) | peak RSS MB (--engine python) |", "|---:|---:|"]
    for m in results["memory_by_capture"]:
        lines.append(f"| {m['frames']:,} | {m['peak_rss_mb']:.0f} |")
    if results.get("profile"):
        lines += [
            "",
            "| function | where | calls | own s | own % | cumulative s |",
            "|---|---|---:|---:|---:|---:|",
        ]
        lines += results["profile"]
    lines.append("")
    lines.append(
        "answers: "
        + (
            "all equal to the generator's"
            if not results["problems"]
            else f"{len(results['problems'])} WRONG"
        )
    )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
