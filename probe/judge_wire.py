"""The wire format's judgement: every packet the broker sent, and the case a check sent.

Every PUBLISH-family packet from the broker is decoded again with the model
(:func:`pubproof.model.wire.decode`): a packet the model rejects is a violation of the rule
it names (source ``wire``). The case of a wire check (a packet the model rejects, or one
whose verdict depends on a reading) is judged by the close judge
(:func:`pubproof.judge.close.expectation`, source ``close``): the broker must close the
connection exactly when the model rejects the packet. MQTT 3.1.1 says so for malformed
packets (e.g. [MQTT-3.3.1-4], [MQTT-2.2.2-2]) and for protocol violations in general
[MQTT-4.8.0-1]; MQTT 3.1 names no receiver action, so a 3.1 broker that keeps the
connection open is tolerated.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pubproof.judge.close import Expectation, close_charges, expectation
from pubproof.judge.describe import as_p
from pubproof.judge.findings import Finding, Source
from pubproof.judge.packets import PUBLISH_FAMILY
from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition
from pubproof.probe.evidence import is_packet, received
from pubproof.probe.findings import error, missing, passed, tolerated, violation
from pubproof.probe.view import View

WIRE, CLOSE = Source.WIRE, Source.CLOSE


def frame_findings(view: View, start: int = 0) -> list[Finding]:
    """The model's judgement of every packet the broker sent (from entry ``start`` on:
    each packet's judgement is its own, so a judge fed the evidence as it grows reads
    only what is new)."""
    findings: list[Finding] = []
    for entry in view.entries[start:]:
        if not received(entry):
            continue
        data = bytes.fromhex(entry["hex"])
        # the reason first, then the packet: a reader sees what went wrong before the hex
        who = f"{entry['client']}: the broker's {entry.get('type', 'packet')}"
        sent = f"(sent {entry['hex']})"
        if data and data[0] >> 4 in PUBLISH_FAMILY:
            verdict = model_wire.decode(data, view.edition, view.readings)
            if verdict.failure is not None:
                failure = verdict.failure
                message = f"{who}: {failure.message} {sent}"
                findings.append(violation(message, failure.rule, source=WIRE))
            elif "error" in entry or verdict.packets != [as_p(entry)]:
                message = f"{who}: the reference codec and the model disagree {sent}"
                findings.append(error(message, source=WIRE))
        elif "error" in entry:
            message = f"{who} is malformed: {entry['error']} {sent}"
            findings.append(violation(message, source=WIRE))
    return findings


def outcome(view: View, index: int, client: str) -> str:
    """On the case's connection, after the case: ``closed`` (whenever), else ``open``
    (PINGRESP came), else ``silent`` (a wait ran out), else ``unknown`` (evidence ends)."""
    seen = "unknown"
    for entry in view.entries[index + 1 :]:
        if entry.get("client") != client:
            continue
        if entry.get("event") == "closed":
            return "closed"
        if entry.get("type") == "CONNECT" or entry.get("event") == "dropped":
            break
        if entry.get("event") == "timeout" and seen == "unknown":
            seen = "silent"
        if is_packet(entry) and received(entry) and entry["type"] == "PINGRESP":
            seen = "open"
    return seen


def case_findings(view: View) -> list[Finding]:
    """Did the broker close the connection exactly when the model rejects the case?"""
    found = view.case()
    if found is None:
        return []  # the check stopped before its case: the findings say why
    index, entry = found
    exp = expectation(bytes.fromhex(entry["hex"]), view.edition, view.readings)
    charges = close_charges(exp.failure.rule, view.edition, "server") if exp.failure else None
    rules = charges.charged if charges else ()
    provoked = charges.provoked if charges else ()
    return [
        replace(f, provoked=provoked)
        for f in _case_findings(view, index, entry, exp, rules)
    ]


def _case_findings(
    view: View, index: int, entry: dict[str, Any], exp: Expectation, rules: tuple[str, ...]
) -> list[Finding]:
    """The findings of :func:`case_findings`, charging the broker with ``rules``."""
    close, alternatives = exp.close, exp.alternatives
    what = f"{exp.failure.message} [{exp.failure.rule}]" if exp.failure else "a valid packet"
    observed = outcome(view, index, entry["client"])
    if observed in ("silent", "unknown") and not view.broker_alive:
        return [missing(f"no answer after {what}", *rules, source=CLOSE)]
    closed = observed == "closed"
    did = "closed the connection" if closed else "kept the connection open"
    if observed != "open" and not closed:
        did += " (and did not answer PINGREQ)"
    if closed == close:
        return [passed(f"{did} after {what}, as the model says", *rules, source=CLOSE)]
    named = [f"{name}={value}" for name, value, c in alternatives if c == closed]
    if named:
        also = " or ".join(named)
        return [tolerated(f"{did} after {what}: as under the reading {also}", source=CLOSE)]
    if close and view.edition is Edition.V31:
        note = "MQTT 3.1 names no receiver action for it"
        return [tolerated(f"{did} after {what}: {note}", *rules, source=CLOSE)]
    return [violation(f"{did} after {what}", *rules, source=CLOSE)]
