"""The alternating rounds of ``bench_pipeline.py``, by CPU time: MQTT 5.0 against 3.1.1
traffic, per frame (:func:`editions`, ``--editions``), and the python engine against
tshark on a real capture (:func:`real_rounds`, ``--real-rounds``); each with the best run,
the median of the rounds' ratios and a bootstrap interval (:func:`interval`).
"""

from __future__ import annotations

import concurrent.futures
import json
import random
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pipeline_answers import verify, verify_against_tshark
from pipeline_commands import CACHE_L2, check, cpu_of, instructions, synth, tshark_decode


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
        tshark_seconds[name] = cpu_of(tshark_decode, path, work / "tshark.tsv")[0]
    for turn in range(repeat):
        # each edition first in every other round: neither always starts on a cold cache
        order = list(captures.items())
        for name, (path, expected) in order if turn % 2 == 0 else order[::-1]:
            out = work / f"out-editions-{name}"
            cpu, done = cpu_of(check, path, out, "python")
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


def real_rounds(real: Path, seed: int, work: Path, repeat: int, *, as_json: bool) -> int:
    """tshark and ``pubproof check --engine python`` on ``real`` in ``repeat`` alternating
    rounds: CPU time per run, the best of each, the median of the rounds' ratios, and the
    same net of the python engine's fixed cost; the packets table checked against
    tshark's decoding every round."""
    work.mkdir(parents=True, exist_ok=True)
    synth(work / "tiny.pcap", 100, seed)
    fixed = min(cpu_of(check, work / "tiny.pcap", work / "out-tiny", "python")[0] for _ in range(3))
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
                cpu, _ = cpu_of(tshark_decode, real, tsv)
            else:
                cpu, _ = cpu_of(check, real, out, "python")
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
