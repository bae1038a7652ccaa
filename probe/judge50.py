"""MQTT 5.0: the model's judgement of a check's evidence beyond the 3.x judges.

- :func:`declared`: the limits each end declared on a connection (the client in CONNECT,
  the broker in CONNACK), read from the evidence, so that every packet is decoded with the
  limits of its receiver (:func:`frame_findings50`: what the broker sent, decoded by
  :func:`pubproof.model.wire.decode` with the client's Topic Alias Maximum and Maximum
  Packet Size).
- :func:`case_findings50`: the probe's deliberate fault (the *case*) against the model: the
  wire format with the broker's limits (:func:`pubproof.judge.close.expectation`), and,
  for a packet the wire accepts, the 5.0 link judge fed the connection up to the case
  (its Receive Maximum, its alias map: :class:`pubproof.judge.link50.LinkJudge50`). Must
  the broker close, and with which DISCONNECT Reason Code
  (:func:`pubproof.judge.close.reason_code_verdict`)?
  [MQTT-4.13.1-1] "When a Server detects a Malformed Packet or Protocol Error, and a Reason
  Code is given in the specification, it MUST close the Network Connection." 4.13.1 adds
  that in the case of an error in any other packet than CONNECT "it SHOULD send a
  DISCONNECT packet containing the Reason Code before closing".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pubproof.judge.close import (
    DISCONNECT_REASON,
    Charges,
    close_charges,
    expectation,
    reason_code_verdict,
)
from pubproof.judge.findings import Finding, Source
from pubproof.judge.limits import Declared, Negotiated, too_large
from pubproof.judge.limits import declared as declared_by
from pubproof.judge.link50 import LinkJudge50
from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition
from pubproof.probe.evidence import FROM_BROKER, TO_BROKER, Entry, is_packet
from pubproof.probe.findings import deviation, error, missing, passed, tolerated, violation
from pubproof.probe.judge_wire import outcome
from pubproof.probe.view import View

V50 = Edition.V50
WIRE, CLOSE = Source.WIRE, Source.CLOSE
#: the keys of a packet entry that are the probe's, not the packet's
ENTRY_KEYS = frozenset({"dir", "client", "hex", "t", "case"})
DEFAULT_DECLARED = Declared()


@dataclass(frozen=True, slots=True)
class Ends:
    """Which end of the connections a probe judges, and which way each end's packets go
    in its evidence: the broker probe judges the server (pubproof's packets go
    ``to-broker``), the client probe (:mod:`pubproof.probe.clients`) the client
    (pubproof's server sends ``to-client``)."""

    judged: str  # the judged end's role in findings: "broker" or "client"
    probe_dir: str  # the direction of what pubproof sends
    judged_dir: str  # the direction of what the judged end sends

    @property
    def judged_server(self) -> bool:
        """Whether the judged end is the server."""
        return self.judged == "broker"

    @property
    def client_dir(self) -> str:
        """The direction of the client's packets (its CONNECT)."""
        return self.probe_dir if self.judged_server else self.judged_dir

    @property
    def server_dir(self) -> str:
        """The direction of the server's packets (its CONNACK)."""
        return self.judged_dir if self.judged_server else self.probe_dir


#: the broker probe's ends: pubproof is the client, the broker is judged
BROKER_ENDS = Ends("broker", TO_BROKER, FROM_BROKER)


class Evidence(Protocol):
    """What these judges read of a check's evidence (the broker probe's
    :class:`~pubproof.probe.view.View`, the client probe's ``ClientView``)."""

    @property
    def entries(self) -> Sequence[Entry]: ...

    @property
    def readings(self) -> Mapping[str, str]: ...

    def case(self) -> tuple[int, Entry] | None: ...


def declared(view: Evidence, index: int, ends: Ends = BROKER_ENDS) -> tuple[Declared, Declared]:
    """(the client's, the server's) declarations in force at entry ``index`` on the
    connection of that entry's client: the last CONNECT and CONNACK before it."""
    client = view.entries[index].get("client")
    mine, theirs = DEFAULT_DECLARED, DEFAULT_DECLARED
    for entry in view.entries[:index]:
        if entry.get("client") != client or not is_packet(entry):
            continue
        if entry["type"] == "CONNECT" and entry["dir"] == ends.client_dir:
            mine, theirs = declared_by(entry.get("properties", {})), DEFAULT_DECLARED
        elif entry["type"] == "CONNACK" and entry["dir"] == ends.server_dir:
            theirs = declared_by(entry.get("properties", {}))
    return mine, theirs


def receiver_declared(view: Evidence, index: int, ends: Ends = BROKER_ENDS) -> Declared:
    """What the receiver of entry ``index`` declared (the limits its packets are judged
    by): the client's CONNECT for a packet the server sent, the server's CONNACK for one
    the client sent."""
    client, server = declared(view, index, ends)
    return client if view.entries[index]["dir"] == ends.server_dir else server


def packet_fields(entry: Entry) -> dict[str, Any]:
    """A packet entry without the probe's keys: the packet's ``P`` (or description)."""
    return {k: v for k, v in entry.items() if k not in ENTRY_KEYS}


def frame_findings50(view: Evidence, ends: Ends = BROKER_ENDS, start: int = 0) -> list[Finding]:
    """The model's judgement of every packet the judged end sent (the broker by default),
    with the limits its receiver declared (from entry ``start`` on: each packet's
    judgement rests on it and the entries before it, never on those after)."""
    findings: list[Finding] = []
    direction = "s2c" if ends.judged_server else "c2s"
    for index in range(start, len(view.entries)):
        entry = view.entries[index]
        if entry.get("dir") != ends.judged_dir:
            continue
        data = bytes.fromhex(entry["hex"])
        # the reason first, then the packet: a reader sees what went wrong before the hex
        who = f"{entry['client']}: the {ends.judged}'s {entry.get('type', 'packet')}"
        sent = f"(sent {entry['hex']})"
        limits = receiver_declared(view, index, ends)
        if data and data[0] >> 4 in (3, 4, 5, 6, 7):
            verdict = model_wire.decode(data, V50, view.readings, limits.wire_limits())
            if verdict.failure is not None:
                failure = verdict.failure
                message = f"{who}: {failure.message} {sent}"
                findings.append(violation(message, failure.rule, source=WIRE))
            elif "error" in entry or verdict.packets != [packet_fields(entry)]:
                message = f"{who}: the reference codec and the model disagree {sent}"
                findings.append(error(message, source=WIRE))
        else:
            if "error" in entry:
                message = f"{who} is malformed: {entry['error']} {sent}"
                findings.append(violation(message, source=WIRE))
            # a control packet over the receiver's Maximum Packet Size ([MQTT-3.1.2-24],
            # [MQTT-3.2.2-15])
            negotiated = Negotiated(client=limits, server=limits)
            over = too_large(len(data), direction, negotiated, role=ends.judged)
            if over is not None:
                message = f"{who}: {over.message} {sent}"
                findings.append(violation(message, *over.rules, source=WIRE))
    return findings


# -- the case ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseExpectation:
    """What the model makes of a case: close or not, why, and the DISCONNECT it calls for."""

    close: bool
    rule: str | None
    message: str
    reason_code: int | None
    alternatives: tuple[tuple[str, str, bool], ...] = ()

    def charges(self, ends: Ends) -> Charges:
        """What the judged end of ``ends`` owes after the case (its own duties) and what
        the case broke (:func:`pubproof.judge.close.close_charges`)."""
        if self.rule is None:
            return Charges((), ())
        return close_charges(self.rule, V50, "server" if ends.judged_server else "client")


def case_expectation(view: Evidence, index: int, ends: Ends = BROKER_ENDS) -> CaseExpectation:
    """The model's verdict on the case at ``index``: its wire format with the judged
    end's limits (:func:`pubproof.judge.close.expectation`), then, if the wire accepts it,
    the 5.0 link judge (:class:`pubproof.judge.link50.LinkJudge50`) fed the connection up
    to the case: must the judged end (the broker by default) close?"""
    entry = view.entries[index]
    limits = receiver_declared(view, index, ends)
    exp = expectation(bytes.fromhex(entry["hex"]), V50, view.readings, limits.wire_limits())
    if exp.failure is not None:
        failure = exp.failure
        return CaseExpectation(
            close=True, rule=failure.rule, message=failure.message,
            reason_code=failure.reason_code, alternatives=exp.alternatives,
        )  # fmt: skip
    if exp.alternatives:
        return CaseExpectation(
            close=False, rule=None, message="a valid packet", reason_code=None,
            alternatives=exp.alternatives,
        )  # fmt: skip
    return _flow_expectation(view, index, ends)


def _flow_expectation(view: Evidence, index: int, ends: Ends) -> CaseExpectation:
    """The link judge's verdict on the case, after everything on the same connection."""
    client = view.entries[index]["client"]
    start = 0
    for at in range(index, -1, -1):
        candidate = view.entries[at]
        if candidate.get("client") == client and candidate.get("type") == "CONNECT":
            start = at
            break
    judge = LinkJudge50(client, ends.judged, server=ends.judged_server)
    found: list[Finding] = []
    for at in range(start, index + 1):
        entry = view.entries[at]
        if entry.get("client") != client or not is_packet(entry) or "error" in entry:
            continue
        if entry["dir"] == ends.probe_dir:
            judge.peer_sent(entry["type"], packet_fields(entry), at)
        else:
            judge.judged_sent(entry["type"], packet_fields(entry), found, at)
    offence = judge.offence
    if offence is None:
        return CaseExpectation(close=False, rule=None, message="a valid packet", reason_code=None)
    return CaseExpectation(
        close=True, rule=offence.rule, message=offence.message, reason_code=offence.reason_code
    )


def disconnect_after(
    view: Evidence, index: int, client: str, ends: Ends = BROKER_ENDS
) -> Entry | None:
    """The judged end's DISCONNECT on the case's connection after the case, if any."""
    for entry in view.entries[index + 1 :]:
        if entry.get("client") != client:
            continue
        if entry.get("dir") == ends.judged_dir and entry.get("type") == "DISCONNECT":
            return entry
        if entry.get("type") == "CONNECT" or entry.get("event") in ("closed", "dropped"):
            return None
    return None


def case_findings50(view: View) -> list[Finding]:
    """Did the broker close the connection exactly when the model says, and with the
    DISCONNECT Reason Code the model calls for?"""
    found = view.case()
    if found is None:
        return []
    index, entry = found
    client = entry["client"]
    exp = case_expectation(view, index)
    charges = exp.charges(BROKER_ENDS)
    return [
        replace(f, provoked=charges.provoked)
        for f in _case_findings50(view, index, client, exp, charges.charged)
    ]


def _case_findings50(
    view: View, index: int, client: str, exp: CaseExpectation, rules: tuple[str, ...]
) -> list[Finding]:
    """The findings of :func:`case_findings50`, charging the broker with ``rules``."""
    observed = outcome(view, index, client)
    what = f"{exp.message} [{exp.rule}]" if exp.rule else exp.message
    if observed in ("silent", "unknown") and not view.broker_alive:
        return [missing(f"no answer after {what}", *rules, source=CLOSE)]
    closed = observed == "closed"
    did = "closed the connection" if closed else "kept the connection open"
    if observed != "open" and not closed:
        did += " (and did not answer PINGREQ)"
    if closed != exp.close:
        named = [f"{n}={v}" for n, v, close in exp.alternatives if close == closed]
        if named:
            also = " or ".join(named)
            return [tolerated(f"{did} after {what}: as under the reading {also}", source=CLOSE)]
        return [violation(f"{did} after {what}", *rules, source=CLOSE)]
    findings = [passed(f"{did} after {what}, as the model says", *rules, source=CLOSE)]
    if closed and exp.reason_code is not None:
        findings.append(reason_code_finding(view, index, client, exp))
    return findings


def reason_code_finding(
    view: Evidence, index: int, client: str, exp: CaseExpectation, ends: Ends = BROKER_ENDS
) -> Finding:
    """The judged end closed after the case: with the DISCONNECT Reason Code the model
    calls for? 4.13.1: "In the case of an error in any other packet it SHOULD send a
    DISCONNECT packet containing the Reason Code before closing the Network Connection":
    closing without it, or with another code than the one the model calls for (a general
    code of 4.13 aside, tolerated), is a deviation from a SHOULD, never a violation."""
    assert exp.reason_code is not None
    provoked = exp.charges(ends).provoked
    rule = DISCONNECT_REASON
    wanted = f"0x{exp.reason_code:02X}"
    disconnect = disconnect_after(view, index, client, ends)
    found: Finding
    if disconnect is None:
        note = f"without DISCONNECT (it SHOULD send DISCONNECT {wanted}, 4.13.1)"
        found = deviation(f"closed {note}", rule, source=CLOSE)
    else:
        code = int(disconnect.get("reason_code", 0))
        got = f"0x{code:02X}"
        verdict = reason_code_verdict(exp.reason_code, code)
        message = f"DISCONNECT {got} where the model calls for {wanted}"
        if verdict == "pass":
            found = passed(f"DISCONNECT {got}, as the model says", rule, source=CLOSE)
        elif verdict == "tolerated":
            found = tolerated(f"{message} ({got} names the fault's class)", rule, source=CLOSE)
        else:
            found = deviation(f"{message} (4.13.1: it SHOULD send it)", rule, source=CLOSE)
    return replace(found, provoked=provoked)
