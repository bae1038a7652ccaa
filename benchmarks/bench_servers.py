"""The cross-connection stage's cost: ``pubproof check`` against ``pubproof check
--no-distribution`` (the connections judged each alone), on both engines, in one run.

    python benchmarks/bench_servers.py                     # 1,000,000 frames (the issue)
    python benchmarks/bench_servers.py --frames 200000     # a quick run
    python benchmarks/bench_servers.py --real FILE         # and that real capture
    python benchmarks/bench_servers.py --engines python    # one engine only
    python benchmarks/bench_servers.py --json

The synthetic capture (``python -m pubproof.pipeline.synth``: one connection per 500
frames, every one subscribing to one or two of its filters, wildcards of both kinds among
them, so thousands of subscribers at 1,000,000 frames; the broker's default distribution
faults, two of each) is checked four times: each engine with the stage and without. What
counts is the CPU time of the command's whole process tree (user and system, sampled from
/proc: see ``pipeline_commands.timed``), which is per core whatever the cores a run uses;
the ratio of the run with the stage to the run without it is the stage's cost (the
issue's goal: at most 1.3). ``--repeat`` runs each command that many times, alternating
which goes first, and keeps each one's best (a shared machine only ever slows a run).

The answers are checked, a wrong one fails the run (exit 1): with the stage, every injected
fault found under its rule and no other finding (:mod:`pubproof.pipeline.synth.check`, the
per-connection and the distribution findings) and the reconciliation; without it, the
per-connection findings; both engines' ``deliveries`` and ``violations`` tables equal.

``--real FILE`` adds a real capture (``scripts/record-capture`` records one from a real
mosquitto and its own clients): the same four runs, its two engines' tables compared, and
its distribution findings counted (a clean mosquitto has none the model does not back).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline_answers import verify
from pipeline_commands import Run, check, synth

from pubproof.pipeline.output import read
from pubproof.pipeline.synth.check import compare_distribution

#: the command lines compared: the whole check, and the check without the stage
MODES = {"with": (), "without": ("--no-distribution",)}
#: the tables both engines must give alike
COMPARED = ("deliveries", "violations")
GOAL = 1.3


def _rows(out: Path, table: str) -> list[str]:
    return sorted(json.dumps(row, sort_keys=True, default=str) for row in read(str(out), table))


def _best(runs: list[Run]) -> Run:
    return min(runs, key=lambda r: r.cpu_seconds)


def measure(
    capture: Path, work: Path, engines: Sequence[str], repeat: int
) -> tuple[dict[str, dict[str, Run]], list[str]]:
    """Each engine's best run with the stage and without it; the two engines' tables
    compared (the problems found)."""
    found: dict[str, dict[str, Run]] = {}
    problems: list[str] = []
    for engine in engines:
        runs: dict[str, list[Run]] = {mode: [] for mode in MODES}
        for round_ in range(repeat):
            order = list(MODES) if round_ % 2 == 0 else list(reversed(MODES))
            for mode in order:
                out = work / f"{capture.stem}-{engine}-{mode}"
                runs[mode].append(check(capture, out, engine, *MODES[mode]))
        found[engine] = {mode: _best(each) for mode, each in runs.items()}
    if len(engines) == 2:
        first, second = (work / f"{capture.stem}-{e}-with" for e in engines)
        for table in COMPARED:
            if _rows(first, table) != _rows(second, table):
                problems.append(f"{capture.name}: the engines' {table} tables differ")
    return found, problems


def _figures(runs: dict[str, dict[str, Run]]) -> dict[str, dict[str, float]]:
    return {
        engine: {
            "with_cpu": each["with"].cpu_seconds,
            "without_cpu": each["without"].cpu_seconds,
            "with_wall": each["with"].seconds,
            "without_wall": each["without"].seconds,
            "ratio": each["with"].cpu_seconds / each["without"].cpu_seconds,
        }
        for engine, each in runs.items()
    }


def _counts(out: Path) -> dict[str, Any]:
    """The stage's own figures: deliveries rows by direction and outcome, distribution
    findings by rule, the unknowns by reason (from the reconciliation)."""
    deliveries = Counter(f"{r['direction']} {r['outcome']}" for r in read(str(out), "deliveries"))
    findings = Counter(
        str(r["rule"]) for r in read(str(out), "violations") if r.get("source") == "distribution"
    )
    reconciliation = json.loads((out / "reconciliation.json").read_text())
    return {
        "deliveries": dict(sorted(deliveries.items())),
        "distribution_findings": dict(sorted(findings.items())),
        "distribution_reconciliation": reconciliation.get("distribution"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path("/tmp/pubproof-bench-servers"))
    parser.add_argument("--real", type=Path, default=None, help="a real capture as well")
    parser.add_argument("--engines", default="python,spark", help="comma-separated")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command")
    parser.add_argument(
        "--inject", action="append", default=[], metavar="FAULT=COUNT",
        help="the generator's faults (default: its own, every distribution fault twice)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    engines = [e for e in args.engines.split(",") if e]
    args.work.mkdir(parents=True, exist_ok=True)
    faults = "-".join(f.replace("=", "") for f in args.inject) or "default"
    capture = args.work / f"synth-{args.frames}-{faults}.pcap"
    extra = [a for fault in args.inject for a in ("--inject", fault)]
    _, expected = synth(capture, args.frames, args.seed, *extra)
    runs, problems = measure(capture, args.work, engines, args.repeat)
    for engine in engines:
        whole = args.work / f"{capture.stem}-{engine}-with"
        problems += [f"{engine}: {p}" for p in verify(expected, whole)]
        found = compare_distribution(expected, read(str(whole), "violations"))
        problems += [f"{engine}: {p}" for p in found.problems]
        alone = args.work / f"{capture.stem}-{engine}-without"
        if read(str(alone), "deliveries"):
            problems.append(f"{engine}: --no-distribution wrote deliveries")
    results: dict[str, Any] = {
        "frames": expected.get("frames", args.frames),
        "connections": expected.get("connections"),
        "cores": os.cpu_count(),
        "synthetic": _figures(runs),
        "synthetic_stage": _counts(args.work / f"{capture.stem}-{engines[0]}-with"),
    }
    if args.real is not None:
        real_runs, real_problems = measure(args.real, args.work, engines, args.repeat)
        problems += real_problems
        results["real"] = _figures(real_runs)
        results["real_stage"] = _counts(args.work / f"{args.real.stem}-{engines[0]}-with")
    results["problems"] = problems
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(table(results))
    return 1 if problems else 0


def table(results: dict[str, Any]) -> str:
    lines = [
        f"{results['frames']:,} synthetic frames, {results['connections']} connections, "
        f"{results['cores']} cores; CPU seconds of the whole process tree (best run)",
        "",
        "| capture | engine | check | check --no-distribution | ratio | goal |",
        "|---|---|---|---|---|---|",
    ]
    for capture in ("synthetic", "real"):
        for engine, f in results.get(capture, {}).items():
            met = "met" if f["ratio"] <= GOAL else "missed"
            lines.append(
                f"| {capture} | {engine} | {f['with_cpu']:.1f} | {f['without_cpu']:.1f} "
                f"| **{f['ratio']:.2f}** | {GOAL} ({met}) |"
            )
    for capture in ("synthetic_stage", "real_stage"):
        if capture in results:
            lines += ["", f"{capture}: {json.dumps(results[capture])}"]
    for problem in results["problems"]:
        lines.append(f"PROBLEM: {problem}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
