"""What ``bench_pipeline.py`` reports of a full run: per decoder, the rates per core and
per CPU second, with and without the engine's fixed cost, against tshark's (:func:`rates`),
and the run's Markdown tables (:func:`table`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline_commands import Run


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
