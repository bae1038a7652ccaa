"""Judging a client from a check's evidence: every packet it sent, every silence, every
close, every message its application received, and its driver's end.

The same judges as for a broker, the other way round (:mod:`pubproof.judge`):

- the wire format: each PUBLISH-family packet the client sent, decoded by the model
  (:func:`pubproof.model.wire.decode`; source ``wire``);
- the flow tables: one :class:`~pubproof.judge.link.LinkJudge` over the client's
  connections with the **client** as the judged end and pubproof's server as its peer
  (source ``link``), the Server's rule ids replaced by the Client's where the standard
  words an obligation twice (:func:`pubproof.judge.ends.about_client`); an answer the
  client still owed when pubproof waited is *missing*;
- the close judge: after a packet the model rejects (the check's ``case``), the client
  must close the connection [MQTT-4.8.0-1] (source ``close``), and its application must
  never be handed the message;
- the driver: one that could not start or ended on its own with a failure is an ``error``
  with its exit status and standard error, never a pass (source ``probe``).

MQTT 5.0 uses the broker probe's 5.0 judges with the ends swapped (:data:`CLIENT_ENDS`):
the 5.0 link judge (:class:`~pubproof.judge.link50.LinkJudge50`, the client judged, with
what its CONNECT and pubproof's CONNACK declared: the server's Receive Maximum, Topic Alias
Maximum, Maximum QoS, Retain Available), every packet the client sent decoded with the
server's limits (:func:`pubproof.probe.judge50.frame_findings50`), and the case judged by
:func:`pubproof.probe.judge50.case_expectation` with the client's own limits: must it
close, and with which DISCONNECT Reason Code?

The verdict is a function of the evidence alone (:func:`judge_client`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from pubproof.judge.close import Charges, close_charges, expectation
from pubproof.judge.describe import as_p
from pubproof.judge.ends import about_client
from pubproof.judge.findings import Finding, Source
from pubproof.judge.link import FORWARD_DUP, LinkJudge
from pubproof.judge.link50 import link_judge
from pubproof.judge.packets import PUBLISH_FAMILY
from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition
from pubproof.probe.clients.server import FROM_CLIENT, TO_CLIENT
from pubproof.probe.evidence import Entry
from pubproof.probe.findings import (
    Judgement,
    conclude,
    deviation,
    error,
    missing,
    passed,
    tolerated,
    violation,
)
from pubproof.probe.judge50 import (
    CaseExpectation,
    Ends,
    case_expectation,
    frame_findings50,
    packet_fields,
    reason_code_finding,
)
from pubproof.probe.report import NOT_APPLICABLE

WAIT_EVENTS = ("timeout", "quiet", "deadline")
_P_TYPES = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP"})
#: MQTT 5.0: the client is the judged end; pubproof's server sends ``to-client``
CLIENT_ENDS = Ends("client", TO_CLIENT, FROM_CLIENT)


class ClientView:
    """Read-only questions about one client check's evidence."""

    def __init__(
        self, entries: Sequence[Entry], edition: Edition, readings: Mapping[str, str]
    ) -> None:
        self.entries = list(entries)
        self.edition = edition
        self.readings = readings

    def packets(
        self, kind: str, direction: str = FROM_CLIENT, conn: str | None = None
    ) -> list[Entry]:
        """Packets of one type one way (on one connection, if named)."""
        return [
            e
            for e in self.entries
            if e.get("dir") == direction
            and e.get("type") == kind
            and (conn is None or e.get("client") == conn)
        ]

    def conns(self) -> list[str]:
        """The client's connections, in order."""
        return [e["client"] for e in self.entries if e.get("event") == "accepted"]

    def messages(self) -> list[Entry]:
        """What the application received, in order."""
        return [e for e in self.entries if e.get("event") == "app" and e.get("what") == "message"]

    def copies(self, payload: bytes) -> list[Entry]:
        """The application's messages with this payload."""
        return [m for m in self.messages() if m.get("payload_hex") == payload.hex()]

    def case(self) -> tuple[int, Entry] | None:
        """The packet the check is about, and its index."""
        for index, entry in enumerate(self.entries):
            if entry.get("case"):
                return index, entry
        return None

    @cached_property
    def link(self) -> tuple[LinkJudge, list[Finding]]:
        """The flow tables' judgement of the client, over all its connections."""
        v50 = self.edition is Edition.V50
        judge = link_judge("client", "client", edition=self.edition, keep=True)
        found: list[Finding] = []
        last_wait = -1
        after_case: set[str] = set()
        for index, entry in enumerate(self.entries):
            event = entry.get("event")
            if event is not None:
                if event in WAIT_EVENTS:
                    last_wait = index
                elif event in ("closed", "dropped") and entry.get("client") in self.conns():
                    found += judge.close(last_wait)
                continue
            if "dir" not in entry:
                continue
            conn = str(entry.get("client"))
            if entry.get("case"):
                after_case.add(conn)  # what the client makes of the case: the close judge's
            if conn in after_case or "error" in entry:
                continue
            kind = entry["type"]
            # 5.0: the P (properties, Reason Codes) or description as it is
            plain = as_p(entry) if kind in _P_TYPES else entry
            fields = packet_fields(entry) if v50 else plain
            if entry["dir"] == FROM_CLIENT:
                if kind == "CONNECT":
                    judge.peer_sent(kind, fields, index)  # the session it asks for
                else:
                    judge.judged_sent(kind, fields, found, index)
            elif kind == "CONNACK":
                judge.judged_sent(kind, fields, [], index)  # Session Present is pubproof's
            else:
                judge.peer_sent(kind, fields, index)
        found += judge.close(last_wait)
        # [MQTT-3.3.1-3] binds a forwarding server only: never a finding about a client
        return judge, [about_client(f) for f in found if FORWARD_DUP not in f.rules]

    @cached_property
    def client_alive(self) -> bool:
        """After pubproof's last wait that ran out, did the client send anything, or keep
        a connection open?"""
        last = -1
        for index, entry in enumerate(self.entries):
            if entry.get("event") in ("timeout", "deadline"):
                last = index
        if last < 0:
            return True
        return any(e.get("dir") == FROM_CLIENT for e in self.entries[last + 1 :]) or any(
            c not in self.closed_by_client() for c in self.conns()
        )

    def closed_by_client(self) -> set[str]:
        """The connections the client closed."""
        return {str(e["client"]) for e in self.entries if e.get("event") == "closed"}


def wire_findings(view: ClientView) -> list[Finding]:
    """The model's judgement of every packet the client sent (5.0: with the limits the
    server declared)."""
    if view.edition is Edition.V50:
        return frame_findings50(view, CLIENT_ENDS)
    findings: list[Finding] = []
    for entry in view.entries:
        if entry.get("dir") != FROM_CLIENT:
            continue
        data = bytes.fromhex(entry["hex"])
        who = f"{entry['client']}: the client sent {entry['hex']}"
        if data and data[0] >> 4 in PUBLISH_FAMILY:
            verdict = model_wire.decode(data, view.edition, view.readings)
            if verdict.failure is not None:
                failure = verdict.failure
                findings.append(
                    violation(f"{who}: {failure.message}", failure.rule, source=Source.WIRE)
                )
        elif "error" in entry:
            message = f"{who}: a malformed {entry['type']}: {entry['error']}"
            findings.append(violation(message, source=Source.WIRE))
    return findings


def driver_findings(view: ClientView) -> list[Finding]:
    """The driver could not start, never connected, or ended on its own with a failure:
    evidence against the check, never a pass."""
    findings: list[Finding] = []
    for entry in view.entries:
        event = entry.get("event")
        if event == "error":
            findings.append(error(f"the driver: {entry.get('message')}"))
        elif event == "app" and entry.get("what") == "error":
            findings.append(error(f"the driver reported an error: {entry.get('message')}"))
        elif event == "driver-exit" and entry.get("on_its_own"):
            status = entry.get("status")
            stderr = [line for line in str(entry.get("stderr") or "").splitlines() if line.strip()]
            # the line that names the failure (a traceback's last, node's "TypeError ..."),
            # else the last lines
            named = [line.strip() for line in stderr if "Error" in line or "error" in line]
            tail = named[-1] if named else " | ".join(stderr[-3:])
            if status != 0:
                findings.append(
                    error(f"the client's driver exited with status {status} during the "
                          f"check: {tail or '(no standard error)'}")
                )  # fmt: skip
    if not view.conns() and not any(f.verdict == "error" for f in findings):
        findings.append(error("the client never connected to pubproof's server"))
    return findings


@dataclass(frozen=True, slots=True)
class CaseModel:
    """What the model makes of a case sent to the client, in either edition."""

    close: bool
    what: str  # the fault and its rule, or "a valid packet"
    #: the client's own duties after the case and the rules the case broke
    #: (:func:`pubproof.judge.close.close_charges`)
    charges: Charges
    alternatives: tuple[tuple[str, str, bool], ...]  # (reading, value, close)
    payload: str | None = None  # 5.0: the case's payload (other messages are not the case's)
    v50: CaseExpectation | None = None  # 5.0: the close judge's expectation (Reason Code)


def case_model(view: ClientView, index: int) -> CaseModel:
    """The model's verdict on the case at ``index``: 3.x, the wire format
    (:func:`pubproof.judge.close.expectation`); 5.0, the wire format with the client's own
    limits, then the 5.0 flow tables (:func:`pubproof.probe.judge50.case_expectation`)."""
    entry = view.entries[index]
    if view.edition is Edition.V50:
        exp50 = case_expectation(view, index, CLIENT_ENDS)
        what = f"{exp50.message} [{exp50.rule}]" if exp50.rule else exp50.message
        return CaseModel(
            exp50.close, what, exp50.charges(CLIENT_ENDS), exp50.alternatives,
            entry.get("payload_hex"), exp50,
        )  # fmt: skip
    exp = expectation(bytes.fromhex(entry["hex"]), view.edition, view.readings)
    if exp.failure is None:
        return CaseModel(exp.close, "a valid packet", Charges((), ()), exp.alternatives)
    failure = exp.failure
    what = f"{failure.message} [{failure.rule}]"
    charges = close_charges(failure.rule, view.edition, "client")
    return CaseModel(exp.close, what, charges, exp.alternatives)


def case_findings(view: ClientView) -> list[Finding]:
    """After the case (a packet the model rejects, or accepts only under a reading): did
    the client close the connection exactly when the model says, and was the message kept
    from its application? MQTT 5.0: and with the DISCONNECT Reason Code the model calls
    for?

    The client is charged with its own duties only (:func:`pubproof.judge.close.
    close_charges`): the rules the case broke bind pubproof's server, the sender, and are
    each finding's ``provoked``. In 3.1.1 a receiver MUST close [MQTT-4.8.0-1]; MQTT 3.1
    names no receiver action (tolerated); in 5.0 [MQTT-4.13.1-1] is worded for a Server
    ("When a Server detects a Malformed Packet or Protocol Error, and a Reason Code is
    given in the specification, it MUST close the Network Connection"), while "When a
    Client detects a Malformed Packet or Protocol Error, and a Reason Code is given in the
    specification, it SHOULD close the Network Connection" (4.13.1): a 5.0 client that
    keeps the connection open is a *deviation*, as the close judge of captures has it,
    and so is its DISCONNECT with another Reason Code (a SHOULD too). A message handed to
    the application breaks the same duty as reading on (the packet was never a packet):
    a violation where the client MUST close, a deviation where it SHOULD."""
    found = view.case()
    if found is None:
        return []
    index, entry = found
    model = case_model(view, index)
    return [
        replace(f, provoked=model.charges.provoked)
        for f in _case_findings(view, index, entry, model)
    ]


def _case_findings(
    view: ClientView, index: int, entry: Entry, model: CaseModel
) -> list[Finding]:
    """The findings of :func:`case_findings`."""
    conn = str(entry["client"])
    what = model.what
    rules = model.charges.charged
    closed = any(
        e.get("event") == "closed" and e.get("client") == conn for e in view.entries[index + 1 :]
    )
    findings: list[Finding] = []
    if model.close and entry.get("type") == "PUBLISH":
        got = [
            m for m in view.messages()
            if m["t"] >= entry["t"] and model.payload in (None, m.get("payload_hex"))
        ]  # fmt: skip
        if got:
            handed = (
                f"the application was handed the PUBLISH the model rejects ({what}): "
                f"{len(got)} message(s), topic {got[0].get('topic')!r}"
            )
            # a reading under which the receiver keeps the packet (5.0 payload-utf8=accept:
            # "The receiver MAY validate that the Payload is of the format indicated") makes
            # handing it on what that receiver does
            keeps = " or ".join(f"{n}={v}" for n, v, close in model.alternatives if not close)
            if keeps:
                findings.append(
                    tolerated(f"{handed}: as under the reading {keeps}", source=Source.CLOSE)
                )
            elif not rules:  # MQTT 3.1: no receiver action named
                note = "MQTT 3.1 names no receiver action for it"
                findings.append(tolerated(f"{handed}: {note}", source=Source.CLOSE))
            elif model.charges.should:
                findings.append(deviation(handed, *rules, source=Source.CLOSE))
            else:
                findings.append(violation(handed, *rules, source=Source.CLOSE))
    did = "closed the connection" if closed else "kept the connection open"
    if closed == model.close:
        findings.append(
            passed(f"{did} after {what}, as the model says", *rules, source=Source.CLOSE)
        )
        if closed and model.v50 is not None and model.v50.reason_code is not None:
            findings.append(reason_code_finding(view, index, conn, model.v50, CLIENT_ENDS))
        return findings
    named = [f"{name}={value}" for name, value, close in model.alternatives if close == closed]
    if named:
        also = " or ".join(named)
        findings.append(
            tolerated(f"{did} after {what}: as under the reading {also}", source=Source.CLOSE)
        )
    elif model.close and view.edition is Edition.V31:
        note = "MQTT 3.1 names no receiver action for it"
        findings.append(tolerated(f"{did} after {what}: {note}", *rules, source=Source.CLOSE))
    elif model.close and model.charges.should:
        # "When a Client detects a Malformed Packet or Protocol Error, and a Reason Code is
        # given in the specification, it SHOULD close the Network Connection." (4.13.1)
        note = "5.0: a Server MUST close, a Client SHOULD (4.13.1)"
        findings.append(deviation(f"{did} after {what}; {note}", *rules, source=Source.CLOSE))
    else:
        findings.append(violation(f"{did} after {what}", *rules, source=Source.CLOSE))
    return findings


ClientJudge = Callable[[ClientView], list[Finding]]


def not_applicable(view: ClientView) -> str | None:
    """Why the check could not be run on this client, if the evidence says so (a
    ``not-applicable`` event, recorded by the check)."""
    for entry in view.entries:
        if entry.get("event") == NOT_APPLICABLE:
            return str(entry.get("message"))
        if entry.get("event") == "app" and entry.get("what") == "unsupported":
            return f"the driver: {entry.get('message')}"  # e.g. an edition it does not speak
    return None


def client_findings(view: ClientView, own: ClientJudge) -> list[Finding]:
    """Every judge's findings on a client check's evidence: the driver's end, the wire
    format, the flow tables on the client's links, the close after a case, and the
    check's own judge. The one list :func:`judge_client` concludes from, and what
    ``pubproof explore-client`` reads after each move."""
    _, link_findings = view.link
    return [
        *driver_findings(view),
        *wire_findings(view),
        *link_findings,
        *case_findings(view),
        *own(view),
    ]


def judge_client(
    own: ClientJudge,
    rules: Sequence[str],
    entries: Sequence[Entry],
    edition: Edition,
    readings: Mapping[str, str],
) -> Judgement:
    """The verdict of a client check on this evidence."""
    view = ClientView(entries, edition, readings)
    findings = client_findings(view, own)
    why = not_applicable(view)
    if why is not None and not [f for f in findings if f.verdict == "violation"]:
        return Judgement(
            NOT_APPLICABLE, tuple(rules), why, Source.PROBE, dict.fromkeys(rules, NOT_APPLICABLE)
        )
    return conclude(
        findings, rules, broker_alive=view.client_alive, silence="the client went silent",
        role="client", edition=edition,
    )  # fmt: skip


def delivered(view: ClientView, payload: bytes, qos: int, rule: str) -> list[Finding]:
    """The application got the message as its QoS says: at most once (0), at least once
    (1), exactly once (2); never is missing."""
    got = view.copies(payload)
    label = f"{payload.decode(errors='replace')!r} (QoS {qos})"
    if not got:
        return [missing(f"the application never got {label}", rule)]
    times = len(got)
    if times == 1:
        return [passed(f"the application got {label} once", rule)]
    if qos == 1:
        return [
            tolerated(f"the application got {label} {times} times: QoS 1 is at least once", rule)
        ]
    return [violation(f"the application got {label} {times} times", rule)]


def property_differences(expected: Mapping[str, Any], got: Mapping[str, Any]) -> str:
    """MQTT 5.0: how two PUBLISH property sets (the P form) differ, property by property
    ("" when they are the same; the Topic Alias is the connection's, not the message's)."""
    mine = {k: v for k, v in got.items() if k != "topic_alias"}
    differ = sorted(k for k in {*mine, *expected} if mine.get(k) != expected.get(k))
    return "; ".join(f"{k}: {expected.get(k)!r}, got {mine.get(k)!r}" for k in differ)


def sent_ids(view: ClientView, kind: str, direction: str = FROM_CLIENT) -> list[Any]:
    """The packet identifiers of one type, one way, in order."""
    return [e.get("packet_id") for e in view.packets(kind, direction) if "error" not in e]


__all__ = [
    "NOT_APPLICABLE",
    "TO_CLIENT",
    "ClientJudge",
    "ClientView",
    "client_findings",
    "delivered",
    "judge_client",
    "sent_ids",
]
