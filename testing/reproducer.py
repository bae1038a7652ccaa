"""Reproducers: a failure's moves, trace and verdict, written so that anyone can run it again.

Rules / theory of operation
---------------------------
A reproducer is a folder (``DIR/NAME/``) with three files:

- ``reproducer.json``: the target and implementation, the edition and readings, the rule
  it fails (its key, ids, the judge, the message), what the model expects (the rule's
  words) and what was observed, the moves (:class:`~pubproof.testing.moves.Move`'s JSON),
  the trace (the probe's evidence: every packet both ways with its bytes, every event),
  and the *program* the script replays (:func:`program`);
- ``replay.py``: a standalone script, the standard library only
  (:mod:`pubproof.testing.replayer` with the data after it): ``python replay.py HOST
  PORT`` replays the program and says whether the broker did again what failed;
- ``README.md``: the same for a reader: the rule, expected and observed, the moves, the
  trace packet by packet.

:func:`replay` runs a reproducer's script against a target and judges the trace it
writes with the model (:func:`~pubproof.testing.verdicts.judge_example`), so that
``pubproof replay`` says whether the *same rule* still fails, whatever the bytes.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pubproof.judge.describe import describe
from pubproof.judge.findings import Source
from pubproof.judge.limits import declared as declared_by
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES
from pubproof.probe.evidence import Entry
from pubproof.probe.frames import describe_bytes
from pubproof.testing import replayer
from pubproof.testing.machine import Found
from pubproof.testing.moves import Move
from pubproof.testing.verdicts import Verdict, judge_example

#: what the model expects where a failure cites no rule, by its judge
EXPECTED_BY_JUDGE = {
    Source.CLOSE: "every packet the clients sent on this connection is one the model accepts: "
    "the broker keeps the connection open (it closes only after a packet the model rejects)",
    Source.WIRE: "every packet the broker sends is well formed",
}
_P_TYPES = ("PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP")


def expected(found: Found, edition: Edition) -> str:
    """What the model expects: the words of the rules the failure cites."""
    texts = []
    for rule_id in found.failure.rules:
        try:
            rule = RULES.by_id(rule_id, edition)
        except KeyError:
            texts.append(f"[{rule_id}]")
            continue
        quote = next((q.text for q in rule.quotes if q.lang == "en"), rule.title)
        texts.append(f"[{rule_id}] {quote}")
    return " ".join(texts) or EXPECTED_BY_JUDGE.get(found.failure.source, found.failure.key)


def token_of(entries: Sequence[Entry]) -> str:
    """The run's token: what client ids and topic names of the example share."""
    for entry in entries:
        if entry.get("type") == "CONNECT" and entry.get("dir") == "to-broker":
            found = re.match(r"pp([0-9a-f]{6})c", str(entry.get("client_id", "")))
            if found:
                return found.group(1)
    raise ValueError("the evidence has no CONNECT of pubproof's")


def program(entries: Sequence[Entry]) -> list[list[Any]]:
    """What the script replays: each packet the clients sent, a connection opened before
    each CONNECT, what the broker had sent each client by then (``expect``, before each
    packet sent and each drop), the waits, the drops, the connections the broker closed
    (``closed``: the script waits for the close); an acknowledgement of a packet the
    broker numbered points at it by its place among that client's numbered packets."""
    out: list[list[Any]] = []
    received: dict[str, int] = {}
    numbered: dict[str, list[int]] = {}
    opened: set[str] = set()
    expected_now: dict[str, int] = {}
    for entry in entries:
        client, event = entry.get("client"), entry.get("event")
        if event == "step":
            out.append(["step", entry["n"], Move.from_json(entry["move"]).describe()])
        elif event == "quiet":
            out.append(["quiet", entry["seconds"]])
        elif event in ("dropped", "closed") and client in opened:
            opened.discard(str(client))
            if event == "dropped" and received != expected_now:
                # a client drops its link after what it had by then (a copy the broker
                # sent before the drop is owed again on a resumed session, one it had
                # not sent is owed for the first time: the replay must not race it)
                out.append(["expect", dict(received)])
                expected_now = dict(received)
            out.append(["drop" if event == "dropped" else "closed", client])
        elif entry.get("dir") == "from-broker":
            name = str(client)
            received[name] = received.get(name, 0) + 1
            kind, packet_id = entry.get("type"), entry.get("packet_id")
            if (kind == "PUBLISH" and entry.get("qos")) or kind == "PUBREL":
                numbered.setdefault(name, []).append(int(packet_id or 0))
        elif entry.get("dir") == "to-broker":
            name = str(client)
            if entry.get("type") == "CONNECT" and name not in opened:
                out.append(["open", name])
                opened.add(name)
            if received != expected_now:
                out.append(["expect", dict(received)])
                expected_now = dict(received)
            send = ["send", name, entry["hex"], _answers(entry, numbered.get(name, [])),
                    bool(entry.get("case"))]  # fmt: skip
            if entry.get("breaks"):  # the client's own rules it breaks (a wrong answer)
                send.append(list(entry["breaks"]))
            out.append(send)
    return out


def _answers(entry: Entry, numbered: list[int]) -> int | None:
    """The place among the client's numbered packets of the one ``entry`` acknowledges
    (a PUBACK or PUBREC of the broker's PUBLISH, a PUBCOMP of its PUBREL), or None."""
    if entry.get("type") not in ("PUBACK", "PUBREC", "PUBCOMP"):
        return None
    packet_id = entry.get("packet_id")
    places = [i for i, n in enumerate(numbered) if n == packet_id]
    return places[-1] if places else None


def data_of(found: Found, *, edition: Edition, readings: Mapping[str, str],
            target: str, implementation: str) -> dict[str, Any]:  # fmt: skip
    """The reproducer's data (``reproducer.json``, and the script's ``DATA``)."""
    entries = list(found.entries)
    token = token_of(entries)
    received: dict[str, list[str]] = {}
    for entry in entries:
        if entry.get("dir") == "from-broker":
            summary = replayer.summary(bytes.fromhex(entry["hex"]), token)
            received.setdefault(str(entry["client"]), []).append(summary)
    made = [m for m in found.moves]
    retained = sorted({
        str(e["topic"]) for e in entries
        if e.get("dir") == "to-broker" and e.get("type") == "PUBLISH" and e.get("retain")
        and isinstance(e.get("topic"), str) and e.get("topic")
    })  # fmt: skip
    return {
        "pubproof": metadata.version("pubproof"), "kind": "broker",
        "implementation": implementation,
        "target": target, "edition": edition.value, "readings": dict(readings),
        "rule": found.failure.key, "failure": found.failure.to_json(),
        "expected": expected(found, edition), "observed": found.failure.message,
        "moves": [m.to_json() for m in made], "token": token, "program": program(entries),
        "received": received, "retained": retained, "trace": entries,
    }  # fmt: skip


def client_data_of(found: Found, *, edition: Edition, readings: Mapping[str, str],
                   driver: str) -> dict[str, Any]:  # fmt: skip
    """A client library's reproducer: the server's moves and the trace (``pubproof
    replay`` makes the moves again with the driver)."""
    return {
        "pubproof": metadata.version("pubproof"), "kind": "client", "driver": driver,
        "implementation": driver, "target": f"driver {driver}", "edition": edition.value,
        "readings": dict(readings), "rule": found.failure.key,
        "failure": found.failure.to_json(), "expected": expected(found, edition),
        "observed": found.failure.message, "moves": [m.to_json() for m in found.moves],
        "trace": list(found.entries),
    }  # fmt: skip


def slug(key: str) -> str:
    """A folder name for a failure's key."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", key).strip("-").lower() or "failure"


def write(data: Mapping[str, Any], folder: Path) -> Path:
    """Write a reproducer's three files into ``folder``; the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reproducer.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (folder / "README.md").write_text(readme(data), encoding="utf-8")
    if data["kind"] != "broker":
        return folder  # a client library's: pubproof replay makes the moves with its driver
    (folder / "replay.py").write_text(script(data), encoding="utf-8")
    return folder


def script(data: Mapping[str, Any]) -> str:
    """A broker reproducer's standalone script: the replayer's source and the data."""
    script_data = {k: v for k, v in data.items() if k != "trace"}
    source = Path(replayer.__file__).read_text(encoding="utf-8")
    return (
        "#!/usr/bin/env python3\n" + source
        + f"\n\nDATA = json.loads({json.dumps(json.dumps(script_data))})\n\n"
        + 'if __name__ == "__main__":\n    sys.exit(main(DATA))\n'
    )  # fmt: skip


def readme(data: Mapping[str, Any]) -> str:
    """The reproducer for a reader."""
    lines = [
        f"# {data['implementation']}, MQTT {data['edition']}: {data['rule']}", "",
        f"- **expected** (the model): {data['expected']}",
        f"- **observed**: {data['observed']}",
        f"- edition {data['edition']}, readings {data['readings'] or 'the defaults'}; "
        f"found by pubproof {data['pubproof']} exploring {data['implementation']}", "",
        "Run it again: `python replay.py HOST PORT` (the standard library only; exit status "
        "1 while the failure stands), or `pubproof replay .` (judged by the model)."
        if data["kind"] == "broker" else
        "Run it again: `pubproof replay .` (the driver again, judged by the model).", "",
        "## Moves", "",
    ]  # fmt: skip
    lines += [f"{n + 1}. {move}" for n, move in enumerate(move_lines(data))]
    lines += ["", "## Trace", "", "```", *trace_lines(data), "```", ""]
    return "\n".join(lines)


def move_lines(data: Mapping[str, Any]) -> list[str]:
    """A reproducer's moves, each in words (``c2 connect keep session``)."""
    return [Move.from_json(m).describe() for m in data["moves"]]


def trace_lines(data: Mapping[str, Any]) -> list[str]:
    """A reproducer's trace for a reader: each move, then each packet with its direction,
    its decoding and its bytes, and the events (a connection dropped, a quiet wait)."""
    lines = []
    for entry in data["trace"]:
        if "event" in entry:
            if entry["event"] == "step":
                lines.append(f"-- {Move.from_json(entry['move']).describe()}")
            elif entry["event"] != "skipped":
                lines.append(f"   {entry['event']} {entry.get('client') or ''}".rstrip())
            continue
        arrow = "->" if entry["dir"] in ("to-broker", "from-client") else "<-"
        what = describe(entry) if entry["type"] in _P_TYPES else entry["type"]
        case = "   (the invalid move)" if entry.get("case") else ""
        if entry.get("breaks"):  # a wrong answer: the client breaks its own rules
            case = f"   (the client's own fault: {' '.join(entry['breaks'])})"
        lines.append(f"   {entry['client']} {arrow} {what}  [{entry['hex']}]{case}")
    return lines


def load(path: Path) -> dict[str, Any]:
    """A reproducer's data (``path``: its folder or its ``reproducer.json``)."""
    file = path / "reproducer.json" if path.is_dir() else path
    data: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    if not (data.get("kind") == "broker" and "program" in data) and data.get("kind") != "client":
        raise ValueError(f"{file}: not a reproducer of pubproof explore")
    return data


def evidence(trace: Sequence[Mapping[str, Any]], edition: Edition,
             readings: Mapping[str, str]) -> list[Entry]:  # fmt: skip
    """The probe's evidence from a script's trace: each packet described as the probe
    describes it (5.0: with the limits its receiver declared)."""
    entries: list[Entry] = []
    declared: dict[str, Any] = {}  # client -> (its CONNECT's, the broker's CONNACK's)
    for item in trace:
        if "dir" not in item:
            entries.append(dict(item))
            continue
        data, client = bytes.fromhex(item["hex"]), str(item["client"])
        mine, theirs = declared.get(client, ({}, {}))
        receiver = theirs if item["dir"] == "to-broker" else mine
        limits = declared_by(receiver).wire_limits() if edition is Edition.V50 else None
        fields, _ = describe_bytes(data, edition, readings, limits)
        entry = {**fields, "dir": item["dir"], "client": client, "hex": item["hex"],
                 "t": item["t"]}  # fmt: skip
        if item.get("case"):
            entry["case"] = True
        if item.get("breaks"):
            entry["breaks"] = list(item["breaks"])
        if fields.get("type") == "CONNECT" and item["dir"] == "to-broker":
            declared[client] = (fields.get("properties") or {}, {})
        elif fields.get("type") == "CONNACK":
            declared[client] = (mine, fields.get("properties") or {})
        entries.append(entry)
    return entries


class ReplayError(Exception):
    """The reproducer's script could not run (its error is the message)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Replayed:
    """What a replay showed: whether the same rule fails, the verdict, the script's word."""

    still_fails: bool
    rule: str
    verdict: Verdict
    script_says: str
    trace: tuple[Entry, ...]


def replay(path: Path, host: str, port: int, *, timeout: float = 2.0) -> Replayed:
    """Run a reproducer's script against ``host:port`` and judge its trace with the model."""
    data = load(path)
    folder = path if path.is_dir() else path.parent
    edition = Edition(data["edition"])
    with tempfile.TemporaryDirectory(prefix="pubproof-replay-") as scratch:
        trace_file = Path(scratch) / "trace.jsonl"
        runnable = folder / "replay.py"
        if not runnable.exists():  # a reproducer kept as its data alone (the matrix's)
            runnable = Path(scratch) / "replay.py"
            runnable.write_text(script(data), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(runnable), host, str(port), "--trace",
             str(trace_file), "--timeout", str(timeout)],
            capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        lines = trace_file.read_text(encoding="utf-8").splitlines() if trace_file.exists() else []
    if done.returncode not in (0, 1) or not lines:
        raise ReplayError(f"the reproducer's script failed (status {done.returncode}): "
                          f"{done.stderr.strip()[-600:]}")  # fmt: skip
    trace = [json.loads(line) for line in lines if line.strip()]
    entries = evidence(trace, edition, data["readings"])
    verdict = judge_example(entries, edition, data["readings"])
    rule = data["rule"]
    said = (done.stdout.strip().splitlines() or [done.stderr.strip()])[-1]
    return Replayed(
        still_fails=rule in verdict.keys, rule=rule, verdict=verdict, script_says=said,
        trace=tuple(entries),
    )  # fmt: skip


def replay_client(path: Path, driver: str | None = None) -> Replayed:
    """Make a client reproducer's moves again with its driver (or ``driver``), judged by
    the model."""
    from pubproof.probe.clients.driver import command_line
    from pubproof.testing.client_machine import client_run

    data = load(path)
    edition = Edition(data["edition"])
    run = client_run(command_line(driver or data["driver"]), edition, data["readings"],
                     secrets.token_hex(3))  # fmt: skip
    done = run.replay([Move.from_json(m) for m in data["moves"]])
    if done is None:
        raise ReplayError("the reproducer's moves are not a plan")
    _, entries, verdict = done
    rule = data["rule"]
    said = "the moves made again with the driver"
    return Replayed(still_fails=rule in verdict.keys, rule=rule, verdict=verdict,
                    script_says=said, trace=tuple(entries))  # fmt: skip
