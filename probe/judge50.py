"""MQTT 5.0: the model's judgement of a check's evidence beyond the 3.x judges.

- :func:`declared`: the limits each end declared on a connection (the client in CONNECT,
  the broker in CONNACK), read from the evidence, so that every packet is decoded with the
  limits of its receiver (:func:`frame_findings50`: what the broker sent, decoded by
  :func:`pubproof.model.wire.decode` with the client's Topic Alias Maximum and Maximum
  Packet Size).
- :func:`case_findings50`: the probe's deliberate fault (the *case*) against the model: the
  wire format with the broker's limits (:func:`pubproof.judge.close.expectation`), and,
  for a packet the wire accepts, the 5.0 flows and Topic Alias tables as a model server
  receiving every packet the client sent on that connection (its Receive Maximum, its
  alias map). Must the broker close, and with which DISCONNECT Reason Code?
  [MQTT-4.13.1-1] "When a Server detects a Malformed Packet or Protocol Error, and a Reason
  Code is given in the specification, it MUST close the Network Connection." 4.13.1 adds
  that in the case of an error in any other packet than CONNECT "it SHOULD send a
  DISCONNECT packet containing the Reason Code before closing".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pubproof.judge.close import expectation
from pubproof.judge.findings import Finding, Source
from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition, Limits
from pubproof.model.session50 import SessionModel50
from pubproof.probe.evidence import Entry, is_packet, received, sent
from pubproof.probe.findings import error, missing, passed, tolerated, violation
from pubproof.probe.judge_wire import outcome
from pubproof.probe.view import View

V50 = Edition.V50
#: DISCONNECT 0x93 Receive Maximum exceeded (3.3.4)
RECEIVE_MAXIMUM_EXCEEDED = 0x93
WIRE, CLOSE = Source.WIRE, Source.CLOSE
#: [MQTT-4.13.1-1] the Server closes the connection on a Malformed Packet or Protocol Error
CLOSE_WITH_REASON = "MQTT-4.13.1-1"
#: the Reason Codes an end may use for any Malformed Packet or Protocol Error (4.13.1)
GENERIC_CODES = frozenset({0x80, 0x81, 0x82})
#: the keys of a packet entry that are the probe's, not the packet's
ENTRY_KEYS = frozenset({"dir", "client", "hex", "t", "case"})
DEFAULT_RECEIVE_MAXIMUM = 65535


@dataclass(frozen=True, slots=True, kw_only=True)
class Declared:
    """What one end declared about what it receives."""

    receive_maximum: int = DEFAULT_RECEIVE_MAXIMUM
    topic_alias_maximum: int = 0
    maximum_packet_size: int | None = None

    @classmethod
    def of(cls, properties: Mapping[str, Any]) -> Declared:
        """From a CONNECT's or CONNACK's properties (absent ones have their defaults)."""
        return cls(
            receive_maximum=properties.get("receive_maximum", DEFAULT_RECEIVE_MAXIMUM),
            topic_alias_maximum=properties.get("topic_alias_maximum", 0),
            maximum_packet_size=properties.get("maximum_packet_size"),
        )

    @property
    def limits(self) -> Limits:
        """The wire format's limits (:class:`pubproof.model.editions.Limits`)."""
        return Limits(
            topic_alias_maximum=self.topic_alias_maximum,
            maximum_packet_size=self.maximum_packet_size,
        )


def declared(view: View, index: int) -> tuple[Declared, Declared]:
    """(the client's, the broker's) declarations in force at entry ``index`` on the
    connection of that entry's client: the last CONNECT and CONNACK before it."""
    client = view.entries[index].get("client")
    mine, theirs = Declared(), Declared()
    for entry in view.entries[:index]:
        if entry.get("client") != client or not is_packet(entry):
            continue
        if entry["type"] == "CONNECT" and sent(entry):
            mine, theirs = Declared.of(entry.get("properties", {})), Declared()
        elif entry["type"] == "CONNACK" and received(entry):
            theirs = Declared.of(entry.get("properties", {}))
    return mine, theirs


def packet_fields(entry: Entry) -> dict[str, Any]:
    """A packet entry without the probe's keys: the packet's ``P`` (or description)."""
    return {k: v for k, v in entry.items() if k not in ENTRY_KEYS}


def frame_findings50(view: View) -> list[Finding]:
    """The model's judgement of every packet the broker sent, with the client's limits."""
    findings: list[Finding] = []
    for index, entry in enumerate(view.entries):
        if not received(entry):
            continue
        data = bytes.fromhex(entry["hex"])
        who = f"{entry['client']}: the broker sent {entry['hex']}"
        if data and data[0] >> 4 in (3, 4, 5, 6, 7):
            mine, _ = declared(view, index)
            verdict = model_wire.decode(data, V50, view.readings, mine.limits)
            if verdict.failure is not None:
                failure = verdict.failure
                findings.append(violation(f"{who}: {failure.message}", failure.rule, source=WIRE))
            elif "error" in entry or verdict.packets != [packet_fields(entry)]:
                message = f"{who}: the reference codec and the model disagree"
                findings.append(error(message, source=WIRE))
        elif "error" in entry:
            message = f"{who}: a malformed {entry['type']}: {entry['error']}"
            findings.append(violation(message, source=WIRE))
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

    @property
    def rules(self) -> tuple[str, ...]:
        """The rule the case breaks and the rule that makes the broker close."""
        return () if self.rule is None else (self.rule, CLOSE_WITH_REASON)


def case_expectation(view: View, index: int) -> CaseExpectation:
    """The model's verdict on the case at ``index``: its wire format with the broker's
    limits, then (if the wire accepts it) the flows of a model server that received every
    packet the client sent on that connection."""
    entry = view.entries[index]
    _, theirs = declared(view, index)
    data = bytes.fromhex(entry["hex"])
    exp = expectation(data, V50, view.readings)
    failure = model_wire.decode(data, V50, view.readings, theirs.limits).failure
    if failure is not None and failure.rule != "incomplete":
        alternatives = exp.alternatives if exp.failure is not None else ()
        return CaseExpectation(
            close=True, rule=failure.rule, message=failure.message,
            reason_code=failure.reason_code, alternatives=alternatives,
        )  # fmt: skip
    if exp.failure is None and exp.alternatives:
        return CaseExpectation(
            close=False, rule=None, message="a valid packet", reason_code=None,
            alternatives=exp.alternatives,
        )  # fmt: skip
    return _flow_expectation(view, index, theirs)


def _flow_expectation(view: View, index: int, theirs: Declared) -> CaseExpectation:
    """The model server's answer to the case, after the client's earlier packets on the
    same connection."""
    client = view.entries[index]["client"]
    server = SessionModel50(
        receive_maximum=theirs.receive_maximum,
        topic_alias_maximum=theirs.topic_alias_maximum,
    )
    start = 0
    for at in range(index, -1, -1):
        candidate = view.entries[at]
        if candidate.get("client") == client and candidate.get("type") == "CONNECT":
            start = at
            break
    outputs: list[Any] = []
    for entry in view.entries[start : index + 1]:
        if entry.get("client") != client or not sent(entry) or "error" in entry:
            continue
        if entry["type"] not in ("PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP"):
            continue
        outputs = server.receive(packet_fields(entry))  # type: ignore[arg-type]
    for output in outputs:
        if output.kind == "disconnect":
            code = output.reason_code or 0
            note = output.note or f"the model server answers DISCONNECT 0x{code:02X}"
            if code == RECEIVE_MAXIMUM_EXCEEDED:
                note = (
                    f"a QoS {output.packet['qos'] if output.packet else '1 or 2'} PUBLISH "
                    f"beyond the broker's Receive Maximum {theirs.receive_maximum}, none "
                    "acknowledged: DISCONNECT 0x93"
                )
            return CaseExpectation(
                close=True, rule=output.rules[0] if output.rules else None,
                message=note, reason_code=output.reason_code,
            )  # fmt: skip
    return CaseExpectation(close=False, rule=None, message="a valid packet", reason_code=None)


def disconnect_after(view: View, index: int, client: str) -> Entry | None:
    """The broker's DISCONNECT on the case's connection after the case, if any."""
    for entry in view.entries[index + 1 :]:
        if entry.get("client") != client:
            continue
        if received(entry) and entry.get("type") == "DISCONNECT":
            return entry
        if entry.get("type") == "CONNECT" or entry.get("event") in ("closed", "dropped"):
            return None
    return None


def reason_code_verdict(expected: int, sent_code: int) -> str:
    """The broker's DISCONNECT Reason Code against the model's: ``pass`` when it is the
    one, ``tolerated`` for 0x80, 0x81 or 0x82 (Unspecified error, Malformed Packet,
    Protocol Error: each names the fault's class) in place of a more specific one,
    ``violation`` for anything else."""
    if sent_code == expected:
        return "pass"
    if sent_code in GENERIC_CODES and expected not in GENERIC_CODES:
        return "tolerated"
    return "violation"


def case_findings50(view: View) -> list[Finding]:
    """Did the broker close the connection exactly when the model says, and with the
    DISCONNECT Reason Code the model calls for?"""
    found = view.case()
    if found is None:
        return []
    index, entry = found
    client = entry["client"]
    exp = case_expectation(view, index)
    observed = outcome(view, index, client)
    what = f"{exp.message} [{exp.rule}]" if exp.rule else exp.message
    if observed in ("silent", "unknown") and not view.broker_alive:
        return [missing(f"no answer after {what}", *exp.rules, source=CLOSE)]
    closed = observed == "closed"
    did = "closed the connection" if closed else "kept the connection open"
    if observed != "open" and not closed:
        did += " (and did not answer PINGREQ)"
    if closed != exp.close:
        named = [f"{n}={v}" for n, v, close in exp.alternatives if close == closed]
        if named:
            also = " or ".join(named)
            return [tolerated(f"{did} after {what}: as under the reading {also}", source=CLOSE)]
        return [violation(f"{did} after {what}", *exp.rules, source=CLOSE)]
    findings = [passed(f"{did} after {what}, as the model says", *exp.rules, source=CLOSE)]
    if closed and exp.reason_code is not None:
        findings.append(_reason_code(view, index, client, exp))
    return findings


def _reason_code(view: View, index: int, client: str, exp: CaseExpectation) -> Finding:
    assert exp.reason_code is not None
    wanted = f"0x{exp.reason_code:02X}"
    disconnect = disconnect_after(view, index, client)
    if disconnect is None:
        note = f"without DISCONNECT (it SHOULD send DISCONNECT {wanted}, 4.13.1)"
        return tolerated(f"closed {note}", *exp.rules, source=CLOSE)
    code = int(disconnect.get("reason_code", 0))
    got = f"0x{code:02X}"
    verdict = reason_code_verdict(exp.reason_code, code)
    if verdict == "pass":
        return passed(f"DISCONNECT {got}, as the model says", *exp.rules, source=CLOSE)
    message = f"DISCONNECT {got} where the model calls for {wanted}"
    if verdict == "tolerated":
        return tolerated(f"{message} ({got} names the fault's class)", *exp.rules, source=CLOSE)
    return violation(message, *exp.rules, source=CLOSE)
