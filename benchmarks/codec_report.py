"""What ``bench_codec.py`` reports: the goals measured (the issue's targets for the small
PUBLISH streams) and the table of every result.
"""

from __future__ import annotations

from typing import Any

from codec_measure import Result

#: The issue's targets for the small-PUBLISH stream.
TARGET_RATE = 500_000
TARGET_RATIO = 3.0
#: "MQTT 5.0, part 1": small 5.0 PUBLISH at least at mqtt-packet's rate, and 3x the
#: fastest Python peer.
TARGET_RATIO5_NODE = 1.0
TARGET_RATIO5_PYTHON = 3.0


def targets5_for(
    results: list[Any], reference: dict[tuple[str, str], float], stream: str
) -> dict[str, Any]:
    """The 5.0 goals measured on one small-PUBLISH stream."""
    ours = reference.get((stream, "decode"), 0.0)
    node = next((r for r in results if r.codec == "mqtt-packet" and r.stream == stream), None)
    fastest = fastest_peer(results, stream, "Python")
    return {
        "stream": stream,
        "small5_publish_decode_rate": ours,
        "mqtt_packet_rate": node.rate if node else None,
        "ratio_to_mqtt_packet": ours / node.rate if node else None,
        "ratio_to_mqtt_packet_target": TARGET_RATIO5_NODE,
        "ratio_to_mqtt_packet_met": ours / node.rate >= TARGET_RATIO5_NODE if node else None,
        "fastest_python_peer": fastest.codec if fastest else None,
        "fastest_python_peer_rate": fastest.rate if fastest else None,
        "ratio_to_fastest_python_peer": ours / fastest.rate if fastest else None,
        "ratio_to_fastest_python_peer_target": TARGET_RATIO5_PYTHON,
        "ratio_to_fastest_python_peer_met": (
            ours / fastest.rate >= TARGET_RATIO5_PYTHON if fastest else None
        ),
    }


def fastest_peer(results: list[Result], stream: str, runtime: str | None) -> Result | None:
    peers = [
        r
        for r in results
        if r.codec != "pubproof"
        and r.stream == stream
        and r.operation == "decode"
        and (runtime is None or r.runtime == runtime)
    ]
    return max(peers, key=lambda r: r.rate, default=None)


def table(report: dict[str, Any]) -> str:
    rows = [("codec", "stream", "operation", "packets/s", "pubproof/this")]
    for r in report["results"]:
        ratio = r["pubproof_ratio"]
        rows.append(
            (
                r["codec"],
                r["stream"],
                r["operation"],
                f"{r['packets_per_s']:,}",
                "-" if ratio is None else f"{ratio:.2f}x",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(
                cell.ljust(w) if i < 3 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    t = report["targets"]
    lines.append("")
    if t["small_publish_decode_rate"]:
        lines.append(
            f"small PUBLISH decode: {t['small_publish_decode_rate']:,.0f} packets/s "
            f"(target {t['rate_target']:,}: {'met' if t['rate_met'] else 'NOT met'})"
        )
    if t["fastest_peer"]:
        met = "met" if t["ratio_met"] else "NOT met"
        lines.append(
            f"  vs fastest Python peer ({t['fastest_peer']}, {t['fastest_peer_rate']:,.0f}/s): "
            f"{t['ratio_to_fastest_peer']:.2f}x (target {t['ratio_target']}x: {met})"
        )
    for t5, label in (
        (report["targets5"], "MQTT 5.0 small PUBLISH decode"),
        (report["targets5_unique_sections"], "  the same, no property section repeated (small5u)"),
    ):
        if t5["small5_publish_decode_rate"]:
            lines.append(f"{label}: {t5['small5_publish_decode_rate']:,.0f} packets/s")
        if t5["mqtt_packet_rate"]:
            met = "met" if t5["ratio_to_mqtt_packet_met"] else "NOT met"
            lines.append(
                f"  vs mqtt-packet ({t5['mqtt_packet_rate']:,.0f}/s): "
                f"{t5['ratio_to_mqtt_packet']:.2f}x (target "
                f"{t5['ratio_to_mqtt_packet_target']}x: {met})"
            )
        if t5["fastest_python_peer"]:
            met = "met" if t5["ratio_to_fastest_python_peer_met"] else "NOT met"
            lines.append(
                f"  vs fastest Python peer ({t5['fastest_python_peer']}, "
                f"{t5['fastest_python_peer_rate']:,.0f}/s): "
                f"{t5['ratio_to_fastest_python_peer']:.2f}x "
                f"(target {t5['ratio_to_fastest_python_peer_target']}x: {met})"
            )
    for name, peer in report["peers"].items():
        if peer["status"] != "ok":
            lines.append(f"{name}: {peer['status']}")
        if "runtime" in peer and peer["runtime"] != "Python":
            lines.append(f"{name} {peer['version']} runs in {peer['runtime']}")
    lines.append(
        f"Python {report['python']} ({report['implementation']}, {report['machine']}); streams: "
        + ", ".join(
            f"{k} ({v['edition']}) {v['packets']:,} packets / {v['bytes']:,} bytes"
            for k, v in report["streams"].items()
        )
    )
    return "\n".join(lines)
