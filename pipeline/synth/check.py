"""Check a ``pubproof check`` answer on a synthetic capture against what the generator knows.

:func:`compare` takes the generator's ``FILE.expected.json`` and the rows of the pipeline's
``violations`` table (and optionally ``packets`` and ``reconciliation.json``) and lists
every disagreement. The benchmark fails on any; the tests assert there is none.

A finding is matched to an injected fault by where it points: the direction and the frame
that carries the faulty packet's last byte. Each injected fault must get exactly the
findings the model makes on it (one for a wire fault; the receiver's and the sender's for
a flow fault), each naming the model's rule ids; no finding may point anywhere else.
Rule ids a finding names beyond the model's (a finer reading of the same statement, such
as [MQTT-2.3.1-4] for a server's identifier) are reported as notes, not failures.
Tolerated findings are not violations and are not compared.

The distribution findings (``source`` ``distribution``) are compared apart
(:func:`compare_distribution`): each distribution fault the broker injected
(:mod:`.broker`) must give exactly one finding of its kind naming its rule, on a
connection of its subscriber's client address, and no other distribution finding may
exist (tolerated ones included: the synthetic broker takes no MAY).
"""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: the kinds of finding that are violations (a malformed packet breaks a rule too)
VIOLATION_KINDS = frozenset({"violation", "malformed"})


@dataclass(slots=True)
class Comparison:
    """Disagreements (``problems``) and remarks (``notes``)."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _rules_of(row: Mapping[str, Any]) -> set[str]:
    rules = {str(row["rule"])}
    extra = row.get("rules")
    if isinstance(extra, str) and extra:
        rules.update(r.strip() for r in extra.split(","))
    elif isinstance(extra, list | tuple):
        rules.update(str(r) for r in extra)
    return rules


def compare_violations(
    expected: Mapping[str, Any], violations: Iterable[Mapping[str, Any]]
) -> Comparison:
    """The pipeline's violations against the injected faults (see the module docstring)."""
    result = Comparison()
    at: dict[tuple[str, int], list[Mapping[str, Any]]] = defaultdict(list)
    for row in violations:
        if row["kind"] in VIOLATION_KINDS and row.get("source") != "distribution":
            at[(str(row["direction"]), int(row["frame"]))].append(row)
    injected = {(str(r["direction"]), int(r["frame"])): r for r in expected["injected"]}
    if len(injected) != len(expected["injected"]):
        result.problems.append("two injected faults share a frame (the generator's bug)")
    mentioned: Counter[str] = Counter()
    for point, record in sorted(injected.items(), key=lambda item: item[0][1]):
        rows = at.pop(point, [])
        where = f"{record['fault']} at frame {point[1]} ({point[0]}, client {record['client']})"
        wanted = [set(finding) for finding in record["findings"]]
        if len(rows) != len(wanted):
            got = [sorted(_rules_of(row)) for row in rows]
            result.problems.append(f"{where}: {len(rows)} finding(s) {got}, expected {wanted}")
            continue
        free = [_rules_of(row) for row in rows]
        for rules in wanted:
            match = next((f for f in free if rules <= f), None)
            if match is None:
                result.problems.append(f"{where}: no finding names {sorted(rules)}; got {free}")
                break
            free.remove(match)
            mentioned.update(rules)
            if match - rules:
                result.notes.append(f"{where}: the finding also names {sorted(match - rules)}")
    for point, rows in sorted(at.items(), key=lambda item: item[0][1]):
        for row in rows:
            result.problems.append(
                f"unexpected {row['kind']} {row['rule']} at frame {point[1]} ({point[0]}): "
                f"{row.get('message', '')}"
            )
    counted = {rule: count for rule, count in sorted(expected["violations"].items())}
    if result.ok and dict(sorted(mentioned.items())) != counted:
        result.problems.append(f"per rule: found {dict(mentioned)}, expected {counted}")
    return result


def compare_packets(expected: Mapping[str, Any], types: Iterable[str]) -> list[str]:
    """The packets table's count per type against the generator's."""
    found = Counter(types)
    if found == Counter(expected["packets"]):
        return []
    diff = {
        kind: (expected["packets"].get(kind, 0), found.get(kind, 0))
        for kind in sorted(set(found) | set(expected["packets"]))
        if expected["packets"].get(kind, 0) != found.get(kind, 0)
    }
    return [f"packets per type differ (expected, found): {diff}"]


def compare_reconciliation(
    expected: Mapping[str, Any], reconciliation: Mapping[str, Any]
) -> list[str]:
    """Frames, connections and bytes against ``reconciliation.json``."""
    problems = []
    pairs = [
        ("frames", "frames_in"),
        ("frames", "frames_used"),
        ("connections", "connections"),
        ("tcp_payload_bytes", "tcp_payload_bytes"),
        ("mqtt_bytes", "bytes_framed"),
    ]
    for mine, theirs in pairs:
        if theirs in reconciliation and reconciliation[theirs] != expected[mine]:
            problems.append(
                f"{theirs} = {reconciliation[theirs]}, expected {mine} = {expected[mine]}"
            )
        elif theirs not in reconciliation:
            problems.append(f"reconciliation.json has no {theirs}")
    return problems


def client_of(connection: str) -> str:
    """The client end of a connection id (``CAPTURE:ADDRESS:PORT-SERVER:PORT#N``), as
    ``address:port`` with the address in its canonical form (IPv6 unbracketed)."""
    left = connection.rsplit("#", 1)[0].rsplit("-", 1)[0]
    rest, port = left.rsplit(":", 1)
    address = rest[rest.rindex("[") + 1 : -1] if rest.endswith("]") else rest.rsplit(":", 1)[1]
    return endpoint(address, port)


def endpoint(address: str, port: object) -> str:
    """``address:port`` with the address canonical (``fd00::0:13`` is ``fd00::13``)."""
    return f"{ipaddress.ip_address(address)}:{port}"


def compare_distribution(
    expected: Mapping[str, Any], violations: Iterable[Mapping[str, Any]]
) -> Comparison:
    """The pipeline's distribution findings against the injected distribution faults
    (see the module docstring)."""
    result = Comparison()
    wanted: Counter[tuple[str, str, str]] = Counter()
    for record in expected.get("distribution", []):
        if record["source"] == "distribution":
            address, _, port = str(record["subscriber"]).rpartition(":")
            wanted[(endpoint(address, port), record["rule"], record["kind"])] += 1
    found: Counter[tuple[str, str, str]] = Counter()
    for row in violations:
        if row.get("source") != "distribution":
            continue
        client = client_of(str(row["connection"]))
        found[(client, str(row["rule"]), str(row["kind"]))] += 1
    for key in sorted(set(wanted) | set(found)):
        if wanted[key] != found[key]:
            result.problems.append(
                f"distribution: {key[2]} {key[1]} for client {key[0]}: found {found[key]}, "
                f"expected {wanted[key]}"
            )
    return result
