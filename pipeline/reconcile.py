"""``reconciliation.json``: nothing lost. Every frame of every capture is either used by a
connection or in quarantine with a reason; every captured TCP payload byte of a connection
is either in an MQTT packet or unparsed with a reason.

The figures are taken from the written tables (so they check what was written, whichever
engine wrote it) and from the driver's own header walk (``frames_in``), which no worker
touches: a frame a worker dropped or counted twice shows as a difference. ``unreadable``
names every capture of which not one frame could be read, and why (the command then
exits non-zero: nothing is read silently as nothing).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pubproof.pipeline.capture import Plan
from pubproof.pipeline.output import batches


class ReconciliationError(RuntimeError):
    """The counts do not add up: the job must fail loudly."""


def reconcile(out: str, plans: Sequence[Plan]) -> dict[str, Any]:
    """The reconciliation of the tables in ``out`` against the plans."""
    frames_in = sum(p.frames for p in plans)
    used = tcp = framed_declared = missing = connections = 0
    unparsed: dict[str, int] = {}
    statuses: dict[str, int] = {}
    for batch in batches(
        out,
        "connections",
        ("frames", "bytes_c2s", "bytes_s2c", "framed_bytes", "missing_bytes", "unparsed", "status"),
    ):
        connections += len(batch["frames"])
        used += sum(batch["frames"])
        tcp += sum(batch["bytes_c2s"]) + sum(batch["bytes_s2c"])
        framed_declared += sum(batch["framed_bytes"])
        missing += sum(batch["missing_bytes"])
        for text in batch["unparsed"]:
            for reason, count in json.loads(text).items():
                unparsed[reason] = unparsed.get(reason, 0) + count
        for status in batch["status"]:
            for flag in status.split(","):
                statuses[flag] = statuses.get(flag, 0) + 1
    quarantined = 0
    by_reason: dict[str, int] = {}
    quarantined_bytes: dict[str, int] = {}
    for batch in batches(out, "quarantine", ("frames", "reason", "bytes")):
        for frames, reason, size in zip(
            batch["frames"], batch["reason"], batch["bytes"], strict=True
        ):
            quarantined += frames
            by_reason[reason] = by_reason.get(reason, 0) + frames
            quarantined_bytes[reason] = quarantined_bytes.get(reason, 0) + (size or 0)
    framed = packets = 0
    for batch in batches(out, "packets", ("length",)):
        packets += len(batch["length"])
        framed += sum(batch["length"])
    kinds: dict[str, int] = {}
    for batch in batches(out, "violations", ("kind",)):
        for kind in batch["kind"]:
            kinds[kind] = kinds.get(kind, 0) + 1
    skipped: dict[str, int] = {}
    for p in plans:
        for block, count in p.skipped_blocks.items():
            skipped[block] = skipped.get(block, 0) + count
    unreadable = [
        {"capture": p.capture, "reason": problem.reason, "detail": problem.detail}
        for p in plans
        if (problem := p.unreadable) is not None
    ]
    frames_ok = frames_in == used + quarantined
    bytes_ok = tcp == framed + sum(unparsed.values()) and framed == framed_declared
    return {
        "ok": frames_ok and bytes_ok,
        "captures": len(plans),
        "capture_bytes": sum(p.size for p in plans),
        "frames_in": frames_in,
        "frames_used": used,
        "frames_quarantined": quarantined,
        "frames_quarantined_by_reason": dict(sorted(by_reason.items())),
        "quarantined_bytes_by_reason": dict(sorted(quarantined_bytes.items())),
        "pcapng_blocks_skipped": dict(sorted(skipped.items())),
        "connections": connections,
        "connection_status": dict(sorted(statuses.items())),
        "tcp_payload_bytes": tcp,
        "bytes_framed": framed,
        "bytes_unparsed": sum(unparsed.values()),
        "bytes_unparsed_by_reason": dict(sorted(unparsed.items())),
        "bytes_missing": missing,
        "packets": packets,
        "findings_by_kind": dict(sorted(kinds.items())),
        "unreadable": unreadable,
    }


def quarantine_text(result: dict[str, Any]) -> str:
    """Every quarantined byte count by reason, in words: ``"quarantined: 1,204 bytes
    garbage (0 frames), 66 bytes not-tcp (1 frame)"``, or ``"nothing quarantined"``."""
    sizes: dict[str, int] = result.get("quarantined_bytes_by_reason", {})
    frames: dict[str, int] = result.get("frames_quarantined_by_reason", {})
    if not sizes and not frames:
        return "nothing quarantined"
    parts = []
    for reason in sorted(set(sizes) | set(frames)):
        count = frames.get(reason, 0)
        parts.append(
            f"{sizes.get(reason, 0):,} bytes {reason} ({count:,} frame{'' if count == 1 else 's'})"
        )
    return "quarantined: " + ", ".join(parts)


def unreadable_text(result: dict[str, Any]) -> list[str]:
    """One line per capture that could not be read at all, naming it and why."""
    return [
        f"{entry['capture']}: could not be read ({entry['reason']}): {entry['detail']}"
        for entry in result.get("unreadable", [])
    ]


def check(result: dict[str, Any]) -> None:
    """Raise :class:`ReconciliationError` with every difference when the counts differ."""
    if result["ok"]:
        return
    problems = []
    if result["frames_in"] != result["frames_used"] + result["frames_quarantined"]:
        problems.append(
            f"frames_in {result['frames_in']} != frames_used {result['frames_used']} + "
            f"frames_quarantined {result['frames_quarantined']}"
        )
    if result["tcp_payload_bytes"] != result["bytes_framed"] + result["bytes_unparsed"]:
        problems.append(
            f"tcp_payload_bytes {result['tcp_payload_bytes']} != bytes_framed "
            f"{result['bytes_framed']} + bytes_unparsed {result['bytes_unparsed']}"
        )
    if not problems:
        problems.append("the packets table and the connections' framed bytes disagree")
    raise ReconciliationError("RECONCILIATION FAILED: " + "; ".join(problems))
