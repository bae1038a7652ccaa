"""A readable oracle for the link judge: the same judgement over the model's SessionModel.

:class:`pubproof.judge.link.LinkJudge` reads the flow tables compiled into typed entries;
this oracle drives :class:`pubproof.model.session.SessionModel` (the tables' readable
engine) and :func:`pubproof.model.flows.sender_step` directly, one packet entry at a time,
as the probe's judge did before there was one link judge. ``tests/test_judge_link.py``
holds the two equal, finding for finding, on random packet sequences.

The flow tables' judgement of one client's connections to the broker.

Four table-driven ends watch the packets of one client (across its reconnections):

- the broker as *receiver* of what the client publishes (``SessionModel``): each PUBLISH
  and PUBREL the client sends makes the broker owe an answer (PUBACK, PUBREC, PUBCOMP);
- the broker as *sender* of what it forwards to the client (:func:`sender_step` per packet
  identifier the broker chose): a PUBREC from the client makes it owe PUBREL, a resumed
  session makes it owe the re-sends [MQTT-4.4.0-1];
- a model client as *receiver* of what the broker forwards (``SessionModel``): what a
  well-behaved client delivers, and what the tables call a violation or tolerate;
- the client as *sender* (:func:`sender_step`): which acknowledgements it awaits, so an
  acknowledgement nobody awaits is judged as the tables say.

The probe's own deliberate faults (packets marked ``case``, or that the model rejects) are
not fed to the ends, nor is anything on that connection after a case (what the broker makes
of the case is :mod:`pubproof.probe.judge_wire`'s to judge). An answer still owed when
the probe waited (a ``quiet`` or ``timeout`` event after it) is *missing*; owed answers
end with the connection.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pubproof.judge.describe import describe, same_message
from pubproof.judge.findings import Finding, Source
from pubproof.model.flows import Method, SenderAction, SenderInput, SenderState, Step, sender_step
from pubproof.model.session import SessionModel
from pubproof.model.trace import P, PublishP, ack

Entry = dict[str, Any]


def _finding(verdict: str, message: str, *rules: str) -> Finding:
    return Finding(verdict=verdict, rules=rules, message=message, source=Source.LINK)


def missing(message: str, *rules: str) -> Finding:
    return _finding("missing", message, *rules)


def violation(message: str, *rules: str) -> Finding:
    return _finding("violation", message, *rules)


def tolerated(message: str, *rules: str) -> Finding:
    return _finding("tolerated", message, *rules)


_P_FIELDS = ("type", "dup", "qos", "retain", "topic", "packet_id", "payload_hex")
_ACK_INPUT = {
    "PUBACK": SenderInput.PUBACK, "PUBREC": SenderInput.PUBREC, "PUBCOMP": SenderInput.PUBCOMP,
}  # fmt: skip
_PUBLISH_INPUT = {1: SenderInput.PUBLISH_QOS1, 2: SenderInput.PUBLISH_QOS2}
_FLOW_TYPES = ("PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP")
WAIT_EVENTS = ("timeout", "quiet", "deadline")


def as_p(entry: Entry) -> P:
    """The ``P`` of a packet entry (without dir, client, hex)."""
    p: Any = {k: entry[k] for k in _P_FIELDS if k in entry}
    return p  # type: ignore[no-any-return]


@dataclass(slots=True)
class Owed:
    """A packet the broker owes the client."""

    packet: P
    rules: tuple[str, ...]
    since: int  # index of the entry that made it owed
    why: str


@dataclass(slots=True)
class _Flow:
    state: SenderState
    message: PublishP


@dataclass(slots=True)
class LinkJudge:
    """Feed it the entries of a check in order; read its findings and deliveries."""

    client: str
    v311: bool = True
    broker_rx: SessionModel = field(default_factory=lambda: SessionModel(method=Method.B))
    client_rx: SessionModel = field(default_factory=lambda: SessionModel(method=Method.B))
    broker_tx: dict[int, _Flow] = field(default_factory=dict)
    client_tx: dict[int, SenderState] = field(default_factory=dict)
    owed: list[Owed] = field(default_factory=list)
    deliveries: list[PublishP] = field(default_factory=list)  # at a model client
    findings: list[Finding] = field(default_factory=list)
    connections: int = 0
    persistent: bool = False  # the last CONNECT asked to keep the session
    pending: str | None = None  # "resume" or "clean", applied at CONNACK
    last_wait: int = -1
    after_case: bool = False  # the connection carries the probe's case: the case judge's

    # -- the entries ----------------------------------------------------------------------

    def feed(self, index: int, entry: Entry) -> None:
        """Judge the next entry of the check (``index`` is its position)."""
        if "event" in entry:
            self._event(index, entry)
        elif entry.get("client") == self.client:
            if entry.get("case") or entry.get("type") == "CONNECT":
                # What the broker does after the probe's deliberate fault (accept it, close)
                # is the case's to judge, until the client connects again.
                self.after_case = bool(entry.get("case"))
            if "error" in entry or self.after_case:
                return
            if entry["dir"] == "to-broker":
                self._to_broker(index, entry)
            else:
                self._from_broker(index, entry)

    def finish(self) -> None:
        """The evidence ends: whatever was owed before the last wait is missing."""
        self._void_owed()

    def _event(self, index: int, entry: Entry) -> None:
        if entry["event"] in WAIT_EVENTS:
            self.last_wait = index
        elif entry["event"] in ("closed", "dropped") and entry.get("client") == self.client:
            self._void_owed()

    def _void_owed(self) -> None:
        for owed in self.owed:
            if owed.since < self.last_wait:
                self.findings.append(
                    missing(f"{self.client}: no {describe(owed.packet)} ({owed.why})", *owed.rules)
                )
        self.owed.clear()

    def _owe(self, packet: P, rules: tuple[str, ...], since: int, why: str) -> None:
        self.owed.append(Owed(packet, rules, since, why))

    def _pay(self, kind: str, packet_id: int | None) -> Owed | None:
        for owed in self.owed:
            if owed.packet["type"] == kind and owed.packet["packet_id"] == packet_id:
                self.owed.remove(owed)
                return owed
        return None

    # -- what the client sent ---------------------------------------------------------------

    def _to_broker(self, index: int, entry: Entry) -> None:
        kind = entry["type"]
        if kind == "CONNECT":
            self.connections += 1
            clean = bool(entry.get("clean_session"))
            if self.connections > 1:
                self.pending = "resume" if self.persistent and not clean else "clean"
            self.persistent = not clean
            return
        if kind not in _FLOW_TYPES:
            return
        p = as_p(entry)
        if kind == "PUBLISH":
            self._our_publish(index, p)  # type: ignore[arg-type]
        elif kind == "PUBREL":
            self._broker_receives(index, p)
        else:
            self._our_ack(index, kind, p["packet_id"])  # type: ignore[arg-type]

    def _our_publish(self, index: int, p: PublishP) -> None:
        qos, packet_id = p["qos"], p["packet_id"]
        if (
            qos in _PUBLISH_INPUT
            and packet_id is not None
            and not p["dup"]
            and self.client_tx.get(packet_id, SenderState.FREE) is SenderState.FREE
        ):
            step = sender_step(SenderState.FREE, _PUBLISH_INPUT[qos])
            assert isinstance(step, Step)
            self.client_tx[packet_id] = step.next  # type: ignore[assignment]
        self._broker_receives(index, p)

    def _broker_receives(self, index: int, p: P) -> None:
        for output in self.broker_rx.receive(p):
            if output.kind == "send" and output.packet is not None:
                self._owe(output.packet, output.rules, index, f"the answer to {describe(p)}")
            # a delivery at the broker is its own business; a violation or tolerated
            # judgement here is of the probe's own deliberate fault

    def _our_ack(self, index: int, kind: str, packet_id: int) -> None:
        flow = self.broker_tx.get(packet_id)
        step = sender_step(flow.state if flow else SenderState.FREE, _ACK_INPUT[kind])
        if not isinstance(step, Step) or flow is None:
            return  # the probe acknowledged nothing the broker awaits: its own doing
        if SenderAction.SEND_PUBREL in step.actions:
            self._owe(ack("PUBREL", packet_id), step.rules, index, f"the answer to {kind}")
        if step.next is SenderState.FREE:
            del self.broker_tx[packet_id]
        else:
            flow.state = step.next  # type: ignore[assignment]

    # -- what the broker sent ---------------------------------------------------------------

    def _from_broker(self, index: int, entry: Entry) -> None:
        kind = entry["type"]
        if kind == "CONNACK":
            self._connack(index, entry)
            return
        if kind not in _FLOW_TYPES:
            return
        p = as_p(entry)
        if kind == "PUBLISH":
            self._their_publish(index, p)  # type: ignore[arg-type]
        elif kind == "PUBREL":
            self._their_pubrel(p["packet_id"])  # type: ignore[arg-type]
            self._client_receives(p)
        else:
            self._their_ack(kind, p["packet_id"])  # type: ignore[arg-type]

    def _connack(self, index: int, entry: Entry) -> None:
        pending, self.pending = self.pending, None
        if pending is None or entry.get("return_code") != 0:
            return
        resume = pending == "resume"
        if resume and self.v311 and not entry.get("session_present"):
            self.findings.append(
                violation(
                    f"{self.client}: reconnected without a clean session, the broker answered "
                    "Session Present 0 (it lost the session)",
                    "MQTT-3.2.2-2",
                    "MQTT-3.1.2-4",
                )
            )
            resume = False
        self.broker_rx.reconnect(resume=resume)
        self.client_rx.reconnect(resume=resume)
        if not resume:
            self.broker_tx.clear()
            self.client_tx.clear()
            return
        for packet_id, flow in list(self.broker_tx.items()):
            step = sender_step(flow.state, SenderInput.RESUME)
            assert isinstance(step, Step)
            why = "the re-send the resumed session owes"
            if SenderAction.RESEND_PUBLISH in step.actions:
                self._owe({**flow.message, "dup": True}, step.rules, index, why)
            if SenderAction.SEND_PUBREL in step.actions:
                self._owe(ack("PUBREL", packet_id), step.rules, index, why)

    def _their_publish(self, index: int, p: PublishP) -> None:
        packet_id = p["packet_id"]
        if packet_id is not None:
            self._track_their_publish(p, packet_id)
        self._client_receives(p)

    def _track_their_publish(self, p: PublishP, packet_id: int) -> None:
        resent = self._pay("PUBLISH", packet_id)
        flow = self.broker_tx.get(packet_id)
        what = f"{self.client}: {describe(p)}"
        if resent is not None:
            if not p["dup"]:
                self.findings.append(violation(f"{what}: re-sent with DUP 0", "MQTT-3.3.1-1"))
            if not same_message(p, resent.packet):
                self.findings.append(
                    violation(f"{what}: the re-send is not the original message", "MQTT-4.4.0-1")
                )
            return
        if flow is None:
            step = sender_step(SenderState.FREE, _PUBLISH_INPUT[p["qos"]])
            assert isinstance(step, Step)
            self.broker_tx[packet_id] = _Flow(step.next, p)  # type: ignore[arg-type]
            if p["dup"]:
                self.findings.append(
                    violation(
                        f"{what}: DUP 1 on a message the broker had not sent this client",
                        "MQTT-3.3.1-3",
                    )
                )
            return
        if not same_message(p, flow.message):
            self.findings.append(
                violation(
                    f"{what}: a new message on a packet identifier still in use",
                    "MQTT-2.3.1-4",
                    "MQTT-2.3.1-2",
                )
            )
            flow.message = p
        elif flow.state is SenderState.AWAIT_PUBCOMP:
            self.findings.append(
                violation(f"{what}: the PUBLISH re-sent after its PUBREL", "MQTT-4.3.3-1")
            )
        elif p["dup"]:
            self.findings.append(
                tolerated(
                    f"{what}: re-sent on the same connection (3.1.1 requires re-sending only on "
                    "reconnect and does not forbid it)",
                    "MQTT-4.4.0-1",
                )
            )
        else:
            self.findings.append(violation(f"{what}: re-sent with DUP 0", "MQTT-3.3.1-1"))

    def _their_pubrel(self, packet_id: int) -> None:
        if self._pay("PUBREL", packet_id) is not None:
            return
        flow = self.broker_tx.get(packet_id)
        what = f"{self.client}: PUBREL {packet_id}"
        if flow is None:
            note = "for a packet identifier with no flow in progress (the client answers PUBCOMP)"
            self.findings.append(tolerated(f"{what} {note}", "MQTT-4.3.3-2"))
        elif flow.state is SenderState.AWAIT_PUBCOMP:
            note = "again: a re-send on the same connection"
            self.findings.append(tolerated(f"{what} {note}", "MQTT-4.3.3-1"))
        else:
            note = "before the client's PUBREC (PUBREL only after PUBREC)"
            self.findings.append(violation(f"{what} {note}", "MQTT-4.3.3-1"))

    def _their_ack(self, kind: str, packet_id: int) -> None:
        paid = self._pay(kind, packet_id) is not None
        state = self.client_tx.get(packet_id, SenderState.FREE)
        step = sender_step(state, _ACK_INPUT[kind])
        if isinstance(step, Step):
            if step.next is SenderState.FREE:
                self.client_tx.pop(packet_id, None)
            else:
                self.client_tx[packet_id] = step.next  # type: ignore[assignment]
        elif not paid:
            message = f"{self.client}: {kind} {packet_id}: {step.note}"
            self.findings.append(_finding(step.verdict, message, *step.rules))

    def _client_receives(self, p: P) -> None:
        for output in self.client_rx.receive(p):
            if output.kind == "deliver" and output.packet is not None:
                self.deliveries.append(output.packet)  # type: ignore[arg-type]
            elif output.kind in ("violation", "tolerated"):
                message = f"{self.client}: {describe(p)}: {output.note}"
                self.findings.append(_finding(output.kind, message, *output.rules))


_FORWARD_DUP = "MQTT-3.3.1-3"
_SERVER_TO_CLIENT_RULE = {"MQTT-2.3.1-4": "MQTT-2.3.1-2"}


def about_client(finding: Finding) -> Finding:
    """The roles-swapped view's finding with the Client's rule ids."""
    if not any(rule in _SERVER_TO_CLIENT_RULE for rule in finding.rules):
        return finding
    return finding.with_rules(
        tuple(dict.fromkeys(_SERVER_TO_CLIENT_RULE.get(r, r) for r in finding.rules))
    )


_JUDGED = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "CONNECT", "CONNACK"})
SERVER, CLIENT = "server", "client"


@dataclass(slots=True)
class ConnectionJudge:
    """Feed the packets of one connection in capture order; each call returns the findings
    about the packet's sender."""

    v311: bool = True
    clean_session: bool | None = None  # from CONNECT; None until (or unless) it is seen
    of_server: LinkJudge = field(default_factory=lambda: LinkJudge(client=SERVER))
    of_client: LinkJudge = field(default_factory=lambda: LinkJudge(client=CLIENT))
    index: int = 0

    def __post_init__(self) -> None:
        self.of_server.v311 = self.v311
        self.of_client.v311 = self.v311

    def feed(self, direction: str, fields: Mapping[str, Any]) -> list[Finding]:
        """Judge one packet (``fields``: ``P`` or a control packet's fields) sent ``c2s``
        or ``s2c``; the findings are about its sender."""
        kind = fields.get("type")
        if kind == "CONNECT" and direction == "c2s":
            self.clean_session = bool(fields.get("clean_session"))
        if kind not in _JUDGED or (kind == "PUBLISH" and fields.get("qos") not in (1, 2)):
            # LinkJudge ignores other types; a QoS 0 PUBLISH changes no state and cannot be
            # judged by the tables (DUP on QoS 0 is the codec's), and QoS 3 (accepted only
            # under 3.1's qos3=accept reading) has no flow: skip them
            return []
        c2s = direction == "c2s"
        self.index += 1
        found: list[Finding] = []
        for judge, name, to_broker in (
            (self.of_server, SERVER, c2s),
            (self.of_client, CLIENT, not c2s),
        ):
            before = len(judge.findings)
            entry = {**fields, "dir": "to-broker" if to_broker else "from-broker", "client": name}
            judge.feed(self.index, entry)
            judge.deliveries.clear()  # kept by LinkJudge for the probe; unbounded here
            for finding in judge.findings[before:]:
                if _FORWARD_DUP in finding.rules and (
                    name == CLIENT or self.clean_session is not True
                ):
                    continue
                found.append(about_client(finding) if name == CLIENT else finding)
        return found
