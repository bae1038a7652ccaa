"""One end of an MQTT 5.0 session, driven by the 5.0 flow tables and the Topic Alias tables.

:class:`SessionModel50` extends :class:`pubproof.model.session.SessionModel` (3.1 and
3.1.1): the same state per packet identifier (the outgoing flows in sending order, the
incoming QoS 2 flows, the last identifier allocated), the same allocation and bookkeeping,
and it too only routes packets and events to table entries, here of
:mod:`pubproof.model.flows50` and :mod:`pubproof.model.topic_alias`, and carries out their
actions. It replaces the routing (the 5.0 tables' inputs and actions differ: Reason Codes,
quota) and adds the state those actions act on that is not per packet identifier:

- the **send quota**, set to the peer's Receive Maximum at each connection
  [MQTT-4.9.0-1] and moved by the tables' ``TAKE_QUOTA`` / ``RELEASE_QUOTA``; a new QoS 1
  or 2 message at zero quota waits (the output ``wait``, nothing sent, no state)
  [MQTT-4.9.0-2];
- the count of incoming QoS 2 flows not yet completed, against the end's own Receive
  Maximum: a new one beyond it is the input ``PUBLISH_OVER_RECEIVE_MAXIMUM`` (QoS 1 is
  acknowledged at once, so it counts only at the moment it arrives);
- the two Topic Alias maps of the connection (incoming alias -> topic, outgoing topic ->
  alias), dropped with it [MQTT-3.3.2-7].

An end is told the negotiated limits when it is made: its own Receive Maximum and Topic
Alias Maximum (what it sent) and its peer's (what it received). The application's verdict
on an incoming message is ``receive(packet, refuse=code)``: a code of 0x80 or more refuses
a new QoS 1 or 2 message (PUBACK / PUBREC with that code).

Outputs (:class:`Output50`, an :class:`~pubproof.model.session.Output` with a Reason Code)
are those of the 3.1.1 session plus ``wait`` and ``disconnect`` (with the DISCONNECT
Reason Code); after a ``disconnect`` the connection is closed and the caller
reconnects the session (or not) with :meth:`reconnect`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pubproof.model.flows import ReceiverState, SenderState, Undefined
from pubproof.model.flows50 import (
    ACTION_CODE,
    PROTOCOL_ERROR,
    TOPIC_ALIAS_INVALID,
    ReceiverAction50,
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
    is_error,
    receiver_step50,
    sender_step50,
)
from pubproof.model.session import Outgoing, Output, SessionModel
from pubproof.model.topic_alias import (
    RECEIVER_ALIAS,
    SENDER_ALIAS,
    AliasIn,
    AliasInAction,
    AliasInInput,
    AliasOut,
    AliasOutAction,
    AliasOutInput,
)
from pubproof.model.trace import AckP, AckType, P, PublishP, PublishProps

SA, SI, RA, RI = SenderAction50, SenderInput50, ReceiverAction50, ReceiverInput50
_ACK_OF: dict[ReceiverAction50, AckType] = {
    RA.SEND_PUBACK: "PUBACK", RA.SEND_PUBACK_ERROR: "PUBACK",
    RA.SEND_PUBREC: "PUBREC", RA.SEND_PUBREC_ERROR: "PUBREC",
    RA.SEND_PUBCOMP: "PUBCOMP", RA.SEND_PUBCOMP_NOT_FOUND: "PUBCOMP",
}  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Output50(Output):
    """Something a 5.0 end does: send, deliver, judge its peer, wait, or disconnect (its
    ``kind``: those of :class:`~pubproof.model.session.Output`, ``wait``, ``disconnect``)."""

    reason_code: int | None = None  # the DISCONNECT's


def ack50(kind: AckType, packet_id: int, reason_code: int = 0) -> AckP:
    """A 5.0 acknowledgement ``P``."""
    return {"type": kind, "packet_id": packet_id, "reason_code": reason_code, "properties": {}}


def publish50(
    topic: str, payload: bytes, qos: int, retain: bool, packet_id: int | None
) -> PublishP:
    """A 5.0 PUBLISH ``P`` with no properties."""
    return {
        "type": "PUBLISH", "dup": False, "qos": qos, "retain": retain, "topic": topic,
        "packet_id": packet_id, "payload_hex": payload.hex(), "properties": {},
    }  # fmt: skip


@dataclass(slots=True, kw_only=True)
class SessionModel50(SessionModel):
    """One end of a 5.0 session with its negotiated limits. The outgoing messages
    (:attr:`outgoing`) are kept as the application published them: the whole topic, no
    alias (each sending applies the connection's Topic Alias table).

    Its ``publish``, ``receive`` and ``reconnect`` return :class:`Output50`; its ``publish``
    allocates the packet identifier (no chosen one, as a trace gives the 3.x end)."""

    receive_maximum: int = 65535  # this end's, sent to the peer
    topic_alias_maximum: int = 0  # this end's, sent to the peer
    peer_receive_maximum: int = 65535
    peer_topic_alias_maximum: int = 0
    quota: int = -1  # set from peer_receive_maximum when the session starts
    alias_in: dict[int, str] = field(default_factory=dict)
    alias_out: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.quota < 0:
            # [MQTT-4.9.0-1] "MUST set its initial send quota to a non-zero value not
            # exceeding the Receive Maximum"
            self.quota = self.peer_receive_maximum

    # -- the application publishes -----------------------------------------------------

    # The overrides return Output50 lists (list is invariant) and this ``publish`` takes no
    # chosen identifier: hence the ignores of [override] on the three entry points.
    def publish(  # type: ignore[override]
        self, topic: str, payload: bytes, qos: int, retain: bool = False
    ) -> list[Output50]:
        """What the end sends for a new message (``wait`` at zero send quota)."""
        if qos == 0:
            message = publish50(topic, payload, 0, retain, None)
            # [MQTT-4.3.1-1] "the sender MUST send a PUBLISH packet with QoS 0 and DUP 0"
            return [Output50(kind="send", packet=self._aliased(message), rules=("MQTT-4.3.1-1",))]
        if self.quota <= 0:
            return [
                Output50(
                    kind="wait", rules=("MQTT-4.9.0-2",), note="send quota 0: the message waits"
                )
            ]
        packet_id = self._allocate()
        if packet_id is None:
            return []  # every identifier in use: the application must wait
        message = publish50(topic, payload, qos, retain, packet_id)
        step = sender_step50(SenderState.FREE, SI.PUBLISH_QOS1 if qos == 1 else SI.PUBLISH_QOS2)
        assert isinstance(step, Step50)
        flow = Outgoing(step.next, message)  # type: ignore[arg-type]
        self.outgoing[packet_id] = flow
        return self._sender_actions(step, flow, packet_id)

    def _aliased(self, message: PublishP) -> PublishP:
        """The PUBLISH as sent on this connection: the Topic Alias sender table applied."""
        topic = message["topic"]
        state = AliasOut.ALIASED if topic in self.alias_out else AliasOut.NONE
        free = len(self.alias_out) < self.peer_topic_alias_maximum
        event = AliasOutInput.SEND_ALIAS_FREE if free else AliasOutInput.SEND_ALIASES_USED
        step = SENDER_ALIAS[state, event]
        props: PublishProps = dict(message.get("properties", {}))  # type: ignore[assignment]
        for action in step.actions:
            if action is AliasOutAction.ASSIGN:
                self.alias_out[topic] = len(self.alias_out) + 1
            elif action is AliasOutAction.SEND_TOPIC_AND_ALIAS:
                props["topic_alias"] = self.alias_out[topic]
            elif action is AliasOutAction.SEND_ALIAS_ONLY:
                props["topic_alias"] = self.alias_out[topic]
                return {**message, "topic": "", "properties": props}
        return {**message, "properties": props}

    def _sender_actions(self, step: Step50, flow: Outgoing, packet_id: int) -> list[Output50]:
        outputs: list[Output50] = []
        for action in step.actions:
            if action is SA.TAKE_QUOTA:
                self.quota -= 1
            elif action is SA.RELEASE_QUOTA:
                self.quota += 1
            elif action is SA.SEND_PUBLISH:
                outputs.append(self._send(self._aliased(flow.message), step))
            elif action is SA.RESEND_PUBLISH:
                resent: PublishP = {**flow.message, "dup": True}
                outputs.append(self._send(self._aliased(resent), step))
            elif action in (SA.SEND_PUBREL, SA.SEND_PUBREL_NOT_FOUND):
                packet = ack50("PUBREL", packet_id, ACTION_CODE[action])
                outputs.append(self._send(packet, step))
        return outputs

    @staticmethod
    def _send(packet: P, step: Step50) -> Output50:
        return Output50(kind="send", packet=packet, rules=step.rules)

    # -- a packet arrives ---------------------------------------------------------------

    def receive(self, packet: P, *, refuse: int = 0) -> list[Output50]:  # type: ignore[override]
        """What the end does with a packet from its peer. ``refuse`` (>= 0x80) is the
        application's refusal of a new QoS 1 or 2 message."""
        if packet["type"] == "PUBLISH":
            return self._receive_publish50(packet, refuse)
        packet_id = packet["packet_id"]
        code = packet.get("reason_code", 0)
        if packet["type"] == "PUBREL":
            event = RI.PUBREL_OK if not is_error(code) else RI.PUBREL_NOT_FOUND
            return self._receiver_event(event, packet_id, packet)
        ok = not is_error(code)
        sender_event = {
            "PUBACK": (SI.PUBACK_OK, SI.PUBACK_ERROR),
            "PUBREC": (SI.PUBREC_OK, SI.PUBREC_ERROR),
            "PUBCOMP": (SI.PUBCOMP_OK, SI.PUBCOMP_NOT_FOUND),
        }[packet["type"]][0 if ok else 1]
        flow = self.outgoing.get(packet_id)
        state = flow.state if flow is not None else SenderState.FREE
        step = sender_step50(state, sender_event)
        if isinstance(step, Undefined):
            return [Output50(kind=step.verdict, packet=packet, rules=step.rules, note=step.note)]
        if flow is None:  # an entry for a free identifier: PUBREL 0x92 to a stray PUBREC
            return self._sender_actions(step, Outgoing(SenderState.FREE, packet), packet_id)  # type: ignore[arg-type]
        self._move(packet_id, flow, step.next)  # type: ignore[arg-type]
        return self._sender_actions(step, flow, packet_id)

    def _resolve(self, packet: PublishP) -> PublishP | Output50:
        """The PUBLISH with its topic name resolved through the Topic Alias tables, or the
        DISCONNECT the receiver answers."""
        props: PublishProps = dict(packet.get("properties", {}))  # type: ignore[assignment]
        alias = props.pop("topic_alias", None)
        if alias is None:
            if packet["topic"] == "":
                return Output50(
                    kind="disconnect", packet=packet, rules=("PP50-3.3.2-topic-or-alias",),
                    reason_code=PROTOCOL_ERROR,
                )  # fmt: skip
            return packet
        if not 1 <= alias <= self.topic_alias_maximum:
            event = AliasInInput.ALIAS_INVALID
        elif packet["topic"]:
            event = AliasInInput.TOPIC_AND_ALIAS
        else:
            event = AliasInInput.ALIAS_ONLY
        state = AliasIn.SET if alias in self.alias_in else AliasIn.UNSET
        step = RECEIVER_ALIAS[state, event]
        topic = packet["topic"]
        for action in step.actions:
            if action is AliasInAction.SET_MAPPING:
                self.alias_in[alias] = topic
            elif action is AliasInAction.RESOLVE:
                topic = self.alias_in[alias]
            else:
                code = (
                    TOPIC_ALIAS_INVALID
                    if action is AliasInAction.DISCONNECT_ALIAS_INVALID
                    else PROTOCOL_ERROR
                )
                return Output50(
                    kind="disconnect", packet=packet, rules=step.rules, note=step.note,
                    reason_code=code,
                )  # fmt: skip
        return {**packet, "topic": topic, "properties": props}

    def _receive_publish50(self, packet: PublishP, refuse: int) -> list[Output50]:
        resolved = self._resolve(packet)
        if isinstance(resolved, Output50):
            return [resolved]
        qos, packet_id = resolved["qos"], resolved["packet_id"]
        if qos == 0:
            return self._receiver_event(RI.PUBLISH_QOS0, None, resolved)
        assert packet_id is not None
        refused = is_error(refuse)
        if packet_id in self.incoming:  # a duplicate of a held QoS 2 flow (or a QoS 1 on it)
            event = (
                (RI.PUBLISH_QOS1_REFUSED if refused else RI.PUBLISH_QOS1)
                if qos == 1
                else (RI.PUBLISH_QOS2_REFUSED if refused else RI.PUBLISH_QOS2)
            )
        elif len(self.incoming) >= self.receive_maximum:
            event = RI.PUBLISH_OVER_RECEIVE_MAXIMUM
        elif qos == 1:
            event = RI.PUBLISH_QOS1_REFUSED if refused else RI.PUBLISH_QOS1
        else:
            event = RI.PUBLISH_QOS2_REFUSED if refused else RI.PUBLISH_QOS2
        return self._receiver_event(event, packet_id, resolved, refuse)

    def _receiver_event(
        self, event: ReceiverInput50, packet_id: int | None, packet: P, refuse: int = 0
    ) -> list[Output50]:
        state, stored = ReceiverState.FREE, None
        if packet_id is not None and event is not RI.PUBLISH_QOS0:
            state, stored = self.incoming.get(packet_id, (ReceiverState.FREE, None))
        step = receiver_step50(self.method, state, event)
        if isinstance(step, Undefined):
            return [Output50(kind=step.verdict, packet=packet, rules=step.rules, note=step.note)]
        outputs: list[Output50] = []
        for action in step.actions:
            if action is RA.DELIVER:
                outputs.append(Output50(kind="deliver", packet=packet, rules=step.rules))
            elif action is RA.STORE:
                stored = packet  # type: ignore[assignment]
            elif action is RA.DELIVER_STORED:
                assert stored is not None
                outputs.append(Output50(kind="deliver", packet=stored, rules=step.rules))
            elif action is RA.DISCONNECT_RECEIVE_MAXIMUM:
                outputs.append(
                    Output50(
                        kind="disconnect", packet=packet, rules=step.rules,
                        reason_code=ACTION_CODE[action],
                    )
                )  # fmt: skip
            else:
                assert packet_id is not None
                kind = _ACK_OF[action]  # type: ignore[index]
                code = ACTION_CODE.get(action, refuse)
                outputs.append(Output50(kind="send", packet=ack50(kind, packet_id, code),
                                        rules=step.rules))  # fmt: skip
        if packet_id is not None and event is not RI.PUBLISH_QOS0:
            self._set_incoming(packet_id, step.next, stored)  # type: ignore[arg-type]
        return outputs

    # -- the connection ---------------------------------------------------------------

    def reconnect(self, *, resume: bool) -> list[Output50]:  # type: ignore[override]
        """A new connection. ``resume``: Clean Start 0 and a session present; otherwise
        (Clean Start 1, or the session expired) everything is dropped [MQTT-4.4.0-1]."""
        self._new_connection()
        outputs: list[Output50] = []
        event = SI.RESUME if resume else SI.CLEAN
        for packet_id, flow in list(self.outgoing.items()):  # original order [MQTT-4.6.0-1]
            step = sender_step50(flow.state, event)
            assert isinstance(step, Step50)
            outputs += self._sender_actions(step, flow, packet_id)
            self._move(packet_id, flow, step.next)  # type: ignore[arg-type]
        r_event = RI.RESUME if resume else RI.CLEAN
        for packet_id, (state, stored) in list(self.incoming.items()):
            r_step = receiver_step50(self.method, state, r_event)
            assert isinstance(r_step, Step50)
            self._set_incoming(packet_id, r_step.next, stored)  # type: ignore[arg-type]
        if not resume:
            self.last_id = 0
        return outputs

    def _new_connection(self) -> None:
        """The quota starts afresh [MQTT-4.9.0-1]; the Topic Alias maps go with the old
        connection [MQTT-3.3.2-7] (the tables' NEW_CONNECTION entries)."""
        self.quota = self.peer_receive_maximum
        for alias in list(self.alias_in):
            if RECEIVER_ALIAS[AliasIn.SET, AliasInInput.NEW_CONNECTION].next is AliasIn.UNSET:
                del self.alias_in[alias]
        for topic in list(self.alias_out):
            if SENDER_ALIAS[AliasOut.ALIASED, AliasOutInput.NEW_CONNECTION].next is AliasOut.NONE:
                del self.alias_out[topic]

    def snapshot(self) -> dict[str, Any]:
        """The session state in a comparable, JSON-ready form."""
        # the base named, not super(): a slotted dataclass is a new class, which the
        # zero-argument super() of its methods does not know
        return SessionModel.snapshot(self) | {
            "quota": self.quota,
            "alias_in": sorted(self.alias_in.items()),
            "alias_out": sorted(self.alias_out.items()),
        }
