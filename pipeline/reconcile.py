"""``reconciliation.json``: nothing lost. Every frame of every capture is either used by a
connection or in quarantine with a reason; every captured TCP payload byte of a connection
is either in an MQTT packet or unparsed with a reason.

The figures are taken from the written tables (so they check what was written, whichever
engine wrote it) and from the driver's own header walk (``frames_in``), which no worker
touches: a frame a worker dropped or counted twice shows as a difference. ``unreadable``
names every capture of which not one frame could be read, and why (the command then
exits non-zero: nothing is read silently as nothing).

``distribution`` accounts for every message a server received: each PUBLISH a client sent
(a sound packet of a known edition, in ``packets``) is a ``deliveries`` row ``in`` with
its outcome (delivered, judged undeliverable, missing, or unknown with its reason:
:mod:`pubproof.judge.distribution_ledger`), each PUBLISH a server sent a row ``out``; the
counts of the two tables must agree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pubproof.pipeline.capture import Plan
from pubproof.pipeline.output import batches


class ReconciliationError(RuntimeError):
    """The counts do not add up: the job must fail loudly."""


def reconcile(
    out: str, plans: Sequence[Plan], figures: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """The reconciliation of the tables in ``out`` against the plans (``figures``: the
    cross-connection stage's own counts)."""
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
    published = {"c2s": 0, "s2c": 0}  # sound PUBLISH packets of a known edition
    for batch in batches(out, "packets", ("length", "type", "direction", "error_rule", "edition")):
        packets += len(batch["length"])
        framed += sum(batch["length"])
        for kind, way, error, edition in zip(
            batch["type"], batch["direction"], batch["error_rule"], batch["edition"], strict=True
        ):
            if kind == "PUBLISH" and error is None and edition is not None:
                published[way] += 1
    distribution = _distribution(out, published, figures or {})
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
        "ok": frames_ok and bytes_ok and distribution["ok"],
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
        "distribution": distribution,
    }


def _distribution(
    out: str, published: Mapping[str, int], figures: Mapping[str, int]
) -> dict[str, Any]:
    """What became of every message in and copy out (the ``deliveries`` table), against
    the PUBLISH packets of ``packets``."""
    ins: dict[str, int] = {}
    outs: dict[str, int] = {}
    for batch in batches(out, "deliveries", ("direction", "outcome")):
        for way, outcome in zip(batch["direction"], batch["outcome"], strict=True):
            counts = ins if way == "in" else outs
            counts[outcome] = counts.get(outcome, 0) + 1
    messages_in, copies_out = sum(ins.values()), sum(outs.values())
    if figures.get("off"):  # the stage did not run (``--no-distribution``)
        return {"ok": True, "skipped": True, "publish_in": published["c2s"],
                "publish_out": published["s2c"]}  # fmt: skip
    unknowns = {k.partition(":")[2]: n for k, n in ins.items() if k.startswith("unknown:")}
    unknown_copies = {k.partition(":")[2]: n for k, n in outs.items() if k.startswith("unknown:")}
    return {
        "ok": messages_in == published["c2s"] and copies_out == published["s2c"],
        "servers": figures.get("servers", 0),
        "topics": figures.get("topics", 0),
        "events": figures.get("events", 0),
        "events_out_of_time_order": figures.get("events_out_of_time_order", 0),
        # the topics the fast twin judged whole, those the readable judge took over from a
        # quiet point (:mod:`.handback`), and the topics' events the readable judge read
        "topics_fast": figures.get("topics_fast", 0),
        "topics_partial": figures.get("topics_partial", 0),
        "events_handed_back": figures.get("events_handed_back", 0),
        "publish_in": published["c2s"],
        "publish_out": published["s2c"],
        "messages_in": messages_in,
        "messages_by_outcome": dict(sorted(ins.items())),
        "messages_unknown_by_reason": dict(sorted(unknowns.items())),
        "copies_out": copies_out,
        "copies_by_outcome": dict(sorted(outs.items())),
        "copies_unknown_by_reason": dict(sorted(unknown_copies.items())),
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


def distribution_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The cross-connection stage's part of the check's summary: messages in and copies
    out, and what a capture could not show (its unknowns, by reason); ``{"skipped":
    True}`` when the stage did not run."""
    spread: dict[str, Any] = result.get("distribution", {})
    if not spread or spread.get("skipped"):
        return {"skipped": True}
    keys = ("servers", "topics", "messages_in", "copies_out", "messages_unknown_by_reason",
            "copies_unknown_by_reason")  # fmt: skip
    return {key: spread[key] for key in keys}


def distribution_text(result: dict[str, Any]) -> str:
    """The stage's summary in words: ``"distribution: 1,593 messages in, 13,045 copies out
    (2 servers, 20 topics); unknown: 6 messages (6 not-acknowledged), 5 copies (5
    publication-unseen)"``."""
    found = distribution_summary(result)
    if found.get("skipped"):
        return "distribution: not judged (--no-distribution)"

    def unknowns(what: str, by_reason: dict[str, int]) -> str:
        reasons = ", ".join(f"{n:,} {reason}" for reason, n in sorted(by_reason.items()))
        total = sum(by_reason.values())
        return f"{total:,} {what}" + (f" ({reasons})" if reasons else "")

    return (
        f"distribution: {found['messages_in']:,} messages in, {found['copies_out']:,} copies "
        f"out ({found['servers']:,} servers, {found['topics']:,} topics); unknown: "
        f"{unknowns('messages', found['messages_unknown_by_reason'])}, "
        f"{unknowns('copies', found['copies_unknown_by_reason'])}"
    )


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
    spread = result.get("distribution", {})
    if spread and not spread.get("ok", True):
        problems.append(
            f"PUBLISH packets in {spread['publish_in']} != messages in {spread['messages_in']}"
            f" or out {spread['publish_out']} != copies out {spread['copies_out']}"
        )
    if not problems:
        problems.append("the packets table and the connections' framed bytes disagree")
    raise ReconciliationError("RECONCILIATION FAILED: " + "; ".join(problems))
