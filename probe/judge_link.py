"""The flow tables' judgement of one client's connections to the broker.

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

from pubproof.model.flows import Method, SenderAction, SenderInput, SenderState, Step, sender_step
from pubproof.model.session import SessionModel
from pubproof.model.trace import P, PublishP, ack
from pubproof.probe.evidence import Entry
from pubproof.probe.findings import Finding, missing, tolerated, violation

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


def describe(p: Mapping[str, Any]) -> str:
    """``PUBLISH 3 (QoS 1, DUP) on a/b`` or ``PUBREC 3``, for messages."""
    if p["type"] != "PUBLISH" or "error" in p:
        ident = p.get("packet_id")
        return p["type"] if ident is None else f"{p['type']} {ident}"
    flags = (
        [f"QoS {p['qos']}"] + (["DUP"] if p["dup"] else []) + (["RETAIN"] if p["retain"] else [])
    )
    ident = "" if p["packet_id"] is None else f" {p['packet_id']}"
    return f"PUBLISH{ident} ({', '.join(flags)}) on {p['topic']}"


def same_message(a: PublishP, b: PublishP) -> bool:
    """Same topic, payload and QoS (the packet identifier and flags aside)."""
    return (a["topic"], a["payload_hex"], a["qos"]) == (b["topic"], b["payload_hex"], b["qos"])


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
            if not same_message(p, resent.packet):  # type: ignore[arg-type]
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
            finding = Finding(
                step.verdict, step.rules, f"{self.client}: {kind} {packet_id}: {step.note}"
            )
            self.findings.append(finding)

    def _client_receives(self, p: P) -> None:
        for output in self.client_rx.receive(p):
            if output.kind == "deliver" and output.packet is not None:
                self.deliveries.append(output.packet)  # type: ignore[arg-type]
            elif output.kind in ("violation", "tolerated"):
                message = f"{self.client}: {describe(p)}: {output.note}"
                self.findings.append(Finding(output.kind, output.rules, message))
