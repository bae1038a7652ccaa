"""Whether ``pubproof check`` gave the right answer: against the synthetic capture's
generator (:func:`verify`), and against tshark's decoding of a real capture
(:func:`verify_against_tshark`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pubproof.pipeline.synth.check import (
    compare_packets,
    compare_reconciliation,
    compare_violations,
)


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
