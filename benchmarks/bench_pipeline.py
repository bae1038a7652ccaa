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

This script is the command line and the full run; its modules beside it:
``pipeline_commands.py`` (the commands, timed), ``pipeline_answers.py`` (the answers
checked against the generator's and tshark's), ``pipeline_rounds.py`` (``--editions`` and
``--real-rounds``) and ``pipeline_rates.py`` (the rates and the tables of a full run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pipeline_answers import verify, verify_against_tshark
from pipeline_commands import CACHE_L2, SPARK_READS, check, profile, synth, tshark_decode
from pipeline_rates import rates, table
from pipeline_rounds import editions, real_rounds


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


if __name__ == "__main__":
    raise SystemExit(main())
