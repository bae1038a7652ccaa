"""The wire format's judgement: every packet the broker sent, and the case a check sent.

Every PUBLISH-family packet from the broker is decoded again with the model
(:func:`pubproof.model.wire.decode`): a packet the model rejects is a violation of the rule
it names. The case of a wire check (a packet the model rejects, or one whose verdict
depends on a reading) is decoded with the model under the chosen readings and under every
other value of each reading; the broker must close the connection exactly when the model
rejects the packet. MQTT 3.1.1 says so for malformed packets (e.g. [MQTT-3.3.1-4],
[MQTT-2.2.2-2]) and for protocol violations in general [MQTT-4.8.0-1]; MQTT 3.1 names no
receiver action, so a 3.1 broker that keeps the connection open is tolerated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pubproof.model import wire as model_wire
from pubproof.model.editions import READINGS, Edition, resolve_readings
from pubproof.model.rules import INCOMPLETE, RULES
from pubproof.model.wire import Failure
from pubproof.probe.evidence import is_packet, received
from pubproof.probe.findings import Finding, error, missing, passed, tolerated, violation
from pubproof.probe.frames import PUBLISH_FAMILY
from pubproof.probe.judge_link import as_p
from pubproof.probe.view import View

#: [MQTT-4.8.0-1] "Unless stated otherwise, if either the Server or Client encounters a
#: protocol violation, it MUST close the Network Connection on which it received that
#: Control Packet which caused the protocol violation."
CLOSE_ON_VIOLATION = "MQTT-4.8.0-1"


def frame_findings(view: View) -> list[Finding]:
    """The model's judgement of every packet the broker sent."""
    findings: list[Finding] = []
    for entry in view.entries:
        if not received(entry):
            continue
        data = bytes.fromhex(entry["hex"])
        who = f"{entry['client']}: the broker sent {entry['hex']}"
        if data and data[0] >> 4 in PUBLISH_FAMILY:
            verdict = model_wire.decode(data, view.edition, view.readings)
            if verdict.failure is not None:
                failure = verdict.failure
                findings.append(violation(f"{who}: {failure.message}", failure.rule))
            elif "error" in entry or verdict.packets != [as_p(entry)]:
                findings.append(error(f"{who}: the reference codec and the model disagree"))
        elif "error" in entry:
            findings.append(violation(f"{who}: a malformed {entry['type']}: {entry['error']}"))
    return findings


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the model makes of a case: must the broker close the connection?"""

    close: bool
    failure: Failure | None
    alternatives: tuple[tuple[str, str, bool], ...]  # (reading, value, close) that differ


def _rejects(data: bytes, edition: Edition, readings: Mapping[str, str]) -> Failure | None:
    failure = model_wire.decode(data, edition, readings).failure
    return None if failure is None or failure.rule == INCOMPLETE else failure


def expectation(data: bytes, edition: Edition, readings: Mapping[str, str]) -> Expectation:
    """The model's verdict on ``data`` under the readings, and under every other value."""
    chosen = resolve_readings(edition, readings)
    failure = _rejects(data, edition, chosen)
    close = failure is not None
    alternatives: list[tuple[str, str, bool]] = []
    for reading in READINGS.values():
        if not reading.applies_to(edition):
            continue
        for value in reading.values:
            if value == chosen[reading.name]:
                continue
            other = _rejects(data, edition, {**chosen, reading.name: value}) is not None
            if other != close:
                alternatives.append((reading.name, value, other))
    return Expectation(close, failure, tuple(alternatives))


def close_rules(rule_id: str, edition: Edition) -> tuple[str, ...]:
    """The rule a case breaks and the rules that make the receiver close the connection."""
    if edition is not Edition.V311:
        return (rule_id,)
    try:
        also = RULES.by_id(rule_id).also
    except KeyError:
        also = ()
    return (rule_id, *also, CLOSE_ON_VIOLATION)


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
    observed = outcome(view, index, entry["client"])
    rules = close_rules(exp.failure.rule, view.edition) if exp.failure else ()
    what = f"{exp.failure.message} [{exp.failure.rule}]" if exp.failure else "a valid packet"
    if observed in ("silent", "unknown") and not view.broker_alive:
        return [missing(f"no answer after {what}", *rules)]
    closed = observed == "closed"
    did = "closed the connection" if closed else "kept the connection open"
    if observed != "open" and not closed:
        did += " (and did not answer PINGREQ)"
    if closed == exp.close:
        return [passed(f"{did} after {what}, as the model says", *rules)]
    named = [f"{name}={value}" for name, value, close in exp.alternatives if close == closed]
    if named:
        return [tolerated(f"{did} after {what}: as under the reading {' or '.join(named)}")]
    if exp.close and view.edition is Edition.V31:
        return [tolerated(f"{did} after {what}: MQTT 3.1 names no receiver action for it", *rules)]
    return [violation(f"{did} after {what}", *rules)]
