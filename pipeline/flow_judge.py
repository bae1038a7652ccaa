"""The flow tables' judgement of one captured connection, both ends, made cheap.

:class:`FlowJudge` finds exactly what :class:`pubproof.pipeline.judge.ConnectionJudge`
(two :class:`pubproof.probe.judge_link.LinkJudge`) finds, finding for finding (verdict,
rule ids, message; ``tests/test_pipeline_flow_judge.py`` checks the two against each other
on random packet sequences), at a fraction of the cost, because on a capture most of what
``LinkJudge`` does is never read:

- a capture has no waits, so nothing owed ever becomes *missing*: what is owed only needs
  to be found again when the answer comes (first owed, first paid, per type and packet
  identifier), so it is kept per (type, identifier) instead of in one list scanned per
  packet;
- deliveries and the receiving broker's own judgements are never read, so they are not
  made; a message is only written when there is a finding;
- the model's tables (:func:`pubproof.model.flows.sender_step`,
  :func:`pubproof.model.flows.receiver_step`, Method B as ``LinkJudge``'s
  ``SessionModel``) are read once, at import, into lists indexed by small integers; the
  per-identifier states are plain ``dict[int, int]``. Every step still comes from the
  tables: nothing here restates what a state and an input lead to.

One difference, deliberate: the connection's edition reaches the judge when the CONNECT
is seen (``v311``); ``ConnectionJudge`` copied it to its ``LinkJudge`` only when built, so
a 3.1 connection was judged on Session Present as if it were 3.1.1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.model.flows import (
    RECEIVER_STATES,
    Method,
    ReceiverAction,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderInput,
    SenderState,
    Step,
    receiver_step,
    sender_step,
)
from pubproof.probe.findings import Finding, tolerated, violation
from pubproof.probe.judge_link import describe, same_message

_FORWARD_DUP = "MQTT-3.3.1-3"
#: a rule of the view's "broker" that binds a Server, and the same rule for a Client: the
#: view that judges the client takes it for the broker. [MQTT-2.3.1-4] "The same
#: conditions apply to a Server when it sends a PUBLISH with QoS >0" (those of
#: [MQTT-2.3.1-2]: "Each time a Client sends a new packet of one of these types it MUST
#: assign it a currently unused Packet Identifier")
_SERVER_TO_CLIENT_RULE = {"MQTT-2.3.1-4": "MQTT-2.3.1-2"}


def about_client(finding: Finding) -> Finding:
    """A finding of the roles-swapped view, which judges the client as if it were the
    broker, with the Server's rule ids replaced by the Client's (each id once)."""
    if not any(rule in _SERVER_TO_CLIENT_RULE for rule in finding.rules):
        return finding
    rules = tuple(dict.fromkeys(_SERVER_TO_CLIENT_RULE.get(r, r) for r in finding.rules))
    return Finding(finding.verdict, rules, finding.message)


SERVER, CLIENT = "server", "client"
_METHOD = Method.B  # LinkJudge's SessionModel default

# -- the tables, compiled once ------------------------------------------------------------

_S = list(SenderState)
_S_INDEX = {state: i for i, state in enumerate(_S)}
S_FREE = _S_INDEX[SenderState.FREE]
S_AWAIT_PUBCOMP = _S_INDEX[SenderState.AWAIT_PUBCOMP]
_R = list(ReceiverState)
_R_INDEX = {state: i for i, state in enumerate(_R)}
R_FREE = _R_INDEX[ReceiverState.FREE]
_REPLY = {
    ReceiverAction.SEND_PUBACK: "PUBACK",
    ReceiverAction.SEND_PUBREC: "PUBREC",
    ReceiverAction.SEND_PUBCOMP: "PUBCOMP",
}

#: a sender step: (defined, next state, sends PUBREL, re-sends PUBLISH, verdict, rules, note)
SenderEntry = tuple[bool, int, bool, bool, str, tuple[str, ...], str]
#: a receiver step: (defined, next state, replies (ack types, in order), verdict, rules, note)
ReceiverEntry = tuple[bool, int, tuple[str, ...], str, tuple[str, ...], str]


def _sender(state: SenderState, event: SenderInput) -> SenderEntry:
    step = sender_step(state, event)
    if isinstance(step, Step):
        actions = step.actions
        nxt = _S_INDEX[step.next]  # type: ignore[index]
        return (
            True, nxt, SenderAction.SEND_PUBREL in actions,
            SenderAction.RESEND_PUBLISH in actions, "", step.rules, step.note,
        )  # fmt: skip
    return False, -1, False, False, step.verdict, step.rules, step.note


def _receiver(state: ReceiverState, event: ReceiverInput) -> ReceiverEntry | None:
    if state not in RECEIVER_STATES[_METHOD]:
        return None
    step = receiver_step(_METHOD, state, event)
    if isinstance(step, Step):
        replies = tuple(_REPLY[a] for a in step.actions if a in _REPLY)
        return True, _R_INDEX[step.next], replies, "", step.rules, step.note  # type: ignore[index]
    return False, -1, (), step.verdict, step.rules, step.note


SI = SenderInput
_SENDER_INPUTS = (SI.PUBLISH_QOS1, SI.PUBLISH_QOS2, SI.PUBACK, SI.PUBREC, SI.PUBCOMP, SI.RESUME)
#: SENDER[input][state]
SENDER: dict[SenderInput, list[SenderEntry]] = {
    event: [_sender(state, event) for state in _S] for event in _SENDER_INPUTS
}
_PUBLISH_IN = {1: SENDER[SI.PUBLISH_QOS1], 2: SENDER[SI.PUBLISH_QOS2]}
_ACK_IN = {"PUBACK": SENDER[SI.PUBACK], "PUBREC": SENDER[SI.PUBREC], "PUBCOMP": SENDER[SI.PUBCOMP]}
_RESUME = SENDER[SI.RESUME]
RI = ReceiverInput
#: RECEIVER[input][state] (None for a state Method B does not use)
RECEIVER: dict[ReceiverInput, list[ReceiverEntry | None]] = {
    event: [_receiver(state, event) for state in _R]
    for event in (RI.PUBLISH_QOS1, RI.PUBLISH_QOS2, RI.PUBREL)
}
_RX_PUBLISH = {1: RECEIVER[RI.PUBLISH_QOS1], 2: RECEIVER[RI.PUBLISH_QOS2]}
_RX_PUBREL = RECEIVER[RI.PUBREL]
_FLOW_TYPES = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP"})
_P_FIELDS = ("type", "dup", "qos", "retain", "topic", "packet_id", "payload_hex")
JUDGED = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "CONNECT", "CONNACK"})


class _View:
    """One ``LinkJudge``: ``client`` is the end whose packets go "to the broker"; the
    findings are about the other end (the "broker")."""

    __slots__ = (
        "broker_rx", "broker_tx", "client", "client_rx", "client_tx", "connections", "owed",
        "pending", "persistent",
    )  # fmt: skip

    def __init__(self, client: str) -> None:
        self.client = client
        self.broker_rx: dict[int | None, int] = {}  # packet id -> receiver state
        self.client_rx: dict[int | None, int] = {}
        self.broker_tx: dict[int, list[Any]] = {}  # packet id -> [sender state, message]
        self.client_tx: dict[int, int] = {}  # packet id -> sender state
        # (type, packet id) -> what is owed, first owed first (a PUBLISH's P, else None);
        # a list, not a deque: it rarely holds more than one
        self.owed: dict[tuple[str, int | None], list[Mapping[str, Any] | None]] = {}
        self.connections = 0
        self.persistent = False
        self.pending: str | None = None

    # -- owed answers ----------------------------------------------------------------------

    def _owe(self, kind: str, packet_id: int | None, packet: Mapping[str, Any] | None) -> None:
        queue = self.owed.get((kind, packet_id))
        if queue is None:
            self.owed[kind, packet_id] = [packet]
        else:
            queue.append(packet)

    def _pay(self, kind: str, packet_id: int | None) -> tuple[bool, Mapping[str, Any] | None]:
        queue = self.owed.get((kind, packet_id))
        if not queue:
            return False, None
        packet = queue.pop(0)
        if not queue:
            del self.owed[kind, packet_id]
        return True, packet

    # -- what the "client" sent --------------------------------------------------------------

    def to_broker(self, kind: str, fields: Mapping[str, Any]) -> None:
        if kind == "CONNECT":
            self.connections += 1
            clean = bool(fields.get("clean_session"))
            if self.connections > 1:
                self.pending = "resume" if self.persistent and not clean else "clean"
            self.persistent = not clean
            return
        if kind not in _FLOW_TYPES:
            return
        packet_id: Any = fields.get("packet_id")
        if kind == "PUBLISH":
            qos = fields.get("qos")
            table = _PUBLISH_IN.get(qos)  # type: ignore[arg-type]
            if (
                table is not None
                and packet_id is not None
                and not fields.get("dup")
                and self.client_tx.get(packet_id, S_FREE) == S_FREE
            ):
                entry = table[S_FREE]
                assert entry[0]
                self.client_tx[packet_id] = entry[1]
            self._broker_receives(_RX_PUBLISH[qos], packet_id)  # type: ignore[index]
        elif kind == "PUBREL":
            assert packet_id is not None
            self._broker_receives(_RX_PUBREL, packet_id, pubrel=True)
        else:
            self._our_ack(kind, packet_id)

    def _broker_receives(
        self, table: list[ReceiverEntry | None], packet_id: int | None, pubrel: bool = False
    ) -> None:
        state = self.broker_rx.get(packet_id, R_FREE) if packet_id is not None else R_FREE
        entry = table[state]
        assert entry is not None
        if not entry[0]:
            assert not pubrel
            return  # the receiving end's own judgement of the "client": not this view's
        for reply in entry[2]:
            self._owe(reply, packet_id, None)
        if packet_id is not None:
            if entry[1] == R_FREE:
                self.broker_rx.pop(packet_id, None)
            else:
                self.broker_rx[packet_id] = entry[1]

    def _our_ack(self, kind: str, packet_id: int) -> None:
        flow = self.broker_tx.get(packet_id)
        if flow is None:
            return  # whatever the table says, nothing of the "broker" awaited it
        entry = _ACK_IN[kind][flow[0]]
        if not entry[0]:
            return
        if entry[2]:
            self._owe("PUBREL", packet_id, None)
        if entry[1] == S_FREE:
            del self.broker_tx[packet_id]
        else:
            flow[0] = entry[1]

    # -- what the "broker" sent --------------------------------------------------------------

    def from_broker(
        self, kind: str, fields: Mapping[str, Any], v311: bool, found: list[Finding]
    ) -> None:
        if kind == "CONNACK":
            self._connack(fields, v311, found)
            return
        if kind not in _FLOW_TYPES:
            return
        packet_id: Any = fields.get("packet_id")
        if kind == "PUBLISH":
            if packet_id is not None:
                self._their_publish(fields, packet_id, found)
            self._client_receives(_RX_PUBLISH[fields["qos"]], fields, packet_id, found)
        elif kind == "PUBREL":
            self._their_pubrel(packet_id, found)
            self._client_receives(_RX_PUBREL, fields, packet_id, found)
        else:
            self._their_ack(kind, packet_id, found)

    def _connack(self, fields: Mapping[str, Any], v311: bool, found: list[Finding]) -> None:
        pending, self.pending = self.pending, None
        if pending is None or fields.get("return_code") != 0:
            return
        resume = pending == "resume"
        if resume and v311 and not fields.get("session_present"):
            found.append(
                violation(
                    f"{self.client}: reconnected without a clean session, the broker answered "
                    "Session Present 0 (it lost the session)",
                    "MQTT-3.2.2-2",
                    "MQTT-3.1.2-4",
                )
            )
            resume = False
        if not resume:
            # SessionModel.reconnect(resume=False): the receivers forget their identifiers
            self.broker_rx.clear()
            self.client_rx.clear()
            self.broker_tx.clear()
            self.client_tx.clear()
            return
        for packet_id, flow in self.broker_tx.items():
            entry = _RESUME[flow[0]]
            assert entry[0]
            if entry[3]:
                self._owe("PUBLISH", packet_id, {**flow[1], "dup": True})
            if entry[2]:
                self._owe("PUBREL", packet_id, None)

    def _their_publish(
        self, fields: Mapping[str, Any], packet_id: int, found: list[Finding]
    ) -> None:
        paid, resent = self._pay("PUBLISH", packet_id)
        if paid:
            assert resent is not None
            if not fields["dup"]:
                found.append(violation(f"{self._what(fields)}: re-sent with DUP 0", "MQTT-3.3.1-1"))
            if not same_message(fields, resent):  # type: ignore[arg-type]
                found.append(
                    violation(
                        f"{self._what(fields)}: the re-send is not the original message",
                        "MQTT-4.4.0-1",
                    )
                )
            return
        flow = self.broker_tx.get(packet_id)
        if flow is None:
            entry = _PUBLISH_IN[fields["qos"]][S_FREE]
            assert entry[0]
            self.broker_tx[packet_id] = [entry[1], {k: fields[k] for k in _P_FIELDS if k in fields}]
            if fields["dup"]:
                found.append(
                    violation(
                        f"{self._what(fields)}: DUP 1 on a message the broker had not sent "
                        "this client",
                        "MQTT-3.3.1-3",
                    )
                )
            return
        what = self._what(fields)
        if not same_message(fields, flow[1]):  # type: ignore[arg-type]
            found.append(
                violation(
                    f"{what}: a new message on a packet identifier still in use",
                    "MQTT-2.3.1-4",
                    "MQTT-2.3.1-2",
                )
            )
            flow[1] = {k: fields[k] for k in _P_FIELDS if k in fields}
        elif flow[0] == S_AWAIT_PUBCOMP:
            found.append(violation(f"{what}: the PUBLISH re-sent after its PUBREL", "MQTT-4.3.3-1"))
        elif fields["dup"]:
            found.append(
                tolerated(
                    f"{what}: re-sent on the same connection (3.1.1 requires re-sending only on "
                    "reconnect and does not forbid it)",
                    "MQTT-4.4.0-1",
                )
            )
        else:
            found.append(violation(f"{what}: re-sent with DUP 0", "MQTT-3.3.1-1"))

    def _what(self, fields: Mapping[str, Any]) -> str:
        return f"{self.client}: {describe(fields)}"

    def _their_pubrel(self, packet_id: int, found: list[Finding]) -> None:
        if self._pay("PUBREL", packet_id)[0]:
            return
        flow = self.broker_tx.get(packet_id)
        what = f"{self.client}: PUBREL {packet_id}"
        if flow is None:
            note = "for a packet identifier with no flow in progress (the client answers PUBCOMP)"
            found.append(tolerated(f"{what} {note}", "MQTT-4.3.3-2"))
        elif flow[0] == S_AWAIT_PUBCOMP:
            note = "again: a re-send on the same connection"
            found.append(tolerated(f"{what} {note}", "MQTT-4.3.3-1"))
        else:
            note = "before the client's PUBREC (PUBREL only after PUBREC)"
            found.append(violation(f"{what} {note}", "MQTT-4.3.3-1"))

    def _their_ack(self, kind: str, packet_id: int, found: list[Finding]) -> None:
        paid = self._pay(kind, packet_id)[0]
        entry = _ACK_IN[kind][self.client_tx.get(packet_id, S_FREE)]
        if entry[0]:
            if entry[1] == S_FREE:
                self.client_tx.pop(packet_id, None)
            else:
                self.client_tx[packet_id] = entry[1]
        elif not paid:
            found.append(
                Finding(entry[4], entry[5], f"{self.client}: {kind} {packet_id}: {entry[6]}")
            )

    def _client_receives(
        self,
        table: list[ReceiverEntry | None],
        fields: Mapping[str, Any],
        packet_id: int | None,
        found: list[Finding],
    ) -> None:
        state = self.client_rx.get(packet_id, R_FREE) if packet_id is not None else R_FREE
        entry = table[state]
        assert entry is not None
        if not entry[0]:
            found.append(
                Finding(entry[3], entry[4], f"{self.client}: {describe(fields)}: {entry[5]}")
            )
            return
        if packet_id is not None:
            if entry[1] == R_FREE:
                self.client_rx.pop(packet_id, None)
            else:
                self.client_rx[packet_id] = entry[1]


class FlowJudge:
    """Feed the packets of one connection in capture order; each call returns the findings
    about the packet's sender (the same as :class:`~pubproof.pipeline.judge.ConnectionJudge`)."""

    __slots__ = ("clean_session", "of_client", "of_server", "v311")

    def __init__(self, *, v311: bool = True) -> None:
        self.v311 = v311
        self.clean_session: bool | None = None  # from CONNECT; None until it is seen
        self.of_server = _View(SERVER)  # the client "to the broker": judges the server
        self.of_client = _View(CLIENT)  # the server "to the broker": judges the client

    def owed_by(self, direction: str) -> list[tuple[str, int | None]]:
        """The answers the end that sends ``direction`` owes now, as (type, packet
        identifier), once per answer owed (the view that takes that end for the broker
        keeps them)."""
        view = self.of_server if direction == "s2c" else self.of_client
        return [key for key, queue in view.owed.items() for _ in queue]

    def feed(self, direction: str, fields: Mapping[str, Any]) -> list[Finding]:
        """Judge one packet (``fields``: ``P`` or a control packet's fields) sent ``c2s``
        or ``s2c``; the findings are about its sender."""
        kind = fields.get("type")
        if kind == "CONNECT" and direction == "c2s":
            self.clean_session = bool(fields.get("clean_session"))
        if kind not in JUDGED or (kind == "PUBLISH" and fields.get("qos") not in (1, 2)):
            return []  # as ConnectionJudge: the tables cannot judge these
        assert isinstance(kind, str)
        found: list[Finding] = []
        if direction == "c2s":
            self.of_server.to_broker(kind, fields)
            self.of_client.from_broker(kind, fields, self.v311, found)
            # [MQTT-3.3.1-3] binds a forwarding server only: never a finding about a client
            return [about_client(f) for f in found if _FORWARD_DUP not in f.rules]
        self.of_server.from_broker(kind, fields, self.v311, found)
        self.of_client.to_broker(kind, fields)
        if found and self.clean_session is not True:
            # a resumed session re-sends with DUP 1 what an earlier connection sent
            return [f for f in found if _FORWARD_DUP not in f.rules]
        return found
