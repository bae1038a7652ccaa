"""One end of an MQTT session (client or server), driven by the flow tables.

An end is both a sender (of the messages its application publishes) and a receiver (of
the messages its peer publishes). For each packet identifier it keeps the state the
tables of :mod:`pubproof.model.flows` give it, and every action it takes is read from
those tables: this class only routes packets to table entries and carries out the
actions. It is the readable engine the reference session is tested against, and what
:func:`replay` uses to judge a trace.

Packet identifiers are allocated as the next one after the last used, skipping those in
use and wrapping from 65535 to 1; the standard only requires an unused, non-zero one
[MQTT-2.3.1-2], and the reference allocates the same way so the two can be compared
packet for packet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pubproof.model.flows import (
    Method,
    ReceiverAction,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderInput,
    SenderState,
    Step,
    Undefined,
    receiver_step,
    sender_step,
)
from pubproof.model.trace import P, PublishP, ack, publish

SA, SI, RA, RI = SenderAction, SenderInput, ReceiverAction, ReceiverInput


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    """Something an end does: send a packet, deliver a message, or judge its peer."""

    kind: str  # "send" | "deliver" | "violation" | "tolerated"
    packet: P | None = None
    rules: tuple[str, ...] = ()
    note: str = ""


@dataclass(slots=True)
class Outgoing:
    """A message this end sent at QoS 1 or 2 and the state of its flow."""

    state: SenderState
    message: PublishP  # as the application published it


@dataclass(slots=True)
class SessionModel:
    """One end of a session: its outgoing flows and its incoming QoS 2 flows.

    :class:`pubproof.model.session50.SessionModel50` extends it for MQTT 5.0: the same
    state per packet identifier, allocation and bookkeeping, driven by the 5.0 tables."""

    method: Method = Method.B
    outgoing: dict[int, Outgoing] = field(default_factory=dict)  # in sending order
    incoming: dict[int, tuple[ReceiverState, PublishP | None]] = field(default_factory=dict)
    last_id: int = 0

    # -- the application publishes -----------------------------------------------------

    def publish(
        self,
        topic: str,
        payload: bytes,
        qos: int,
        retain: bool = False,
        *,
        packet_id: int | None = None,
    ) -> list[Output]:
        """The application publishes a message: what the end sends for it.

        ``packet_id`` is the identifier the end chose (from a trace); without it the end
        allocates one. A chosen identifier that is still in use is judged a violation of
        [MQTT-2.3.1-2] and its old flow is forgotten, as the end that chose it did.
        """
        if qos == 0:
            return [
                Output(
                    kind="send",
                    packet=publish(topic=topic, payload=payload, retain=retain),
                    rules=("MQTT-4.3.1-1",),
                )
            ]
        judged: list[Output] = []
        if packet_id is None:
            packet_id = self._allocate()
            if packet_id is None:
                return []  # every identifier is in use: the application must wait
        else:
            old = self.outgoing.pop(packet_id, None)
            if old is not None:
                # [MQTT-2.3.1-2] "Each time a Client sends a new packet of one of these
                # types it MUST assign it a currently unused Packet Identifier"
                judged.append(
                    Output(
                        kind="violation",
                        packet=old.message,
                        rules=("MQTT-2.3.1-2",),
                        note=f"packet identifier {packet_id} reused while its message is "
                        f"still in flight ({old.state.name})",
                    )
                )
            self.last_id = packet_id
        message = publish(topic=topic, qos=qos, packet_id=packet_id, payload=payload, retain=retain)
        event = SI.PUBLISH_QOS1 if qos == 1 else SI.PUBLISH_QOS2
        step = sender_step(SenderState.FREE, event)
        assert isinstance(step, Step)
        self.outgoing[packet_id] = Outgoing(step.next, message)  # type: ignore[arg-type]
        return judged + self._sender_outputs(step, message)

    def _allocate(self) -> int | None:
        candidate = self.last_id
        for _ in range(65535):
            candidate = candidate % 65535 + 1
            if candidate not in self.outgoing:
                self.last_id = candidate
                return candidate
        return None

    # -- a packet arrives ---------------------------------------------------------------

    def receive(self, packet: P) -> list[Output]:
        kind = packet["type"]
        if kind == "PUBLISH":
            return self._receive_publish(packet)  # type: ignore[arg-type]
        packet_id = packet["packet_id"]
        assert packet_id is not None
        if kind == "PUBREL":
            return self._receive_pubrel(packet_id)
        event = {"PUBACK": SI.PUBACK, "PUBREC": SI.PUBREC, "PUBCOMP": SI.PUBCOMP}[kind]
        flow = self.outgoing.get(packet_id)
        state = flow.state if flow is not None else SenderState.FREE
        step = sender_step(state, event)
        if isinstance(step, Undefined):
            return [Output(kind=step.verdict, packet=packet, rules=step.rules, note=step.note)]
        assert flow is not None
        self._move(packet_id, flow, step.next)  # type: ignore[arg-type]
        return self._sender_outputs(step, flow.message)

    def _receive_publish(self, packet: PublishP) -> list[Output]:
        qos, packet_id = packet["qos"], packet["packet_id"]
        event = (RI.PUBLISH_QOS0, RI.PUBLISH_QOS1, RI.PUBLISH_QOS2)[qos]
        state, stored = (ReceiverState.FREE, None)
        if packet_id is not None:
            state, stored = self.incoming.get(packet_id, (ReceiverState.FREE, None))
        if event is RI.PUBLISH_QOS0:
            state = ReceiverState.FREE  # QoS 0 touches no identifier's state
        step = receiver_step(self.method, state, event)
        if isinstance(step, Undefined):
            return [Output(kind=step.verdict, packet=packet, rules=step.rules, note=step.note)]
        outputs: list[Output] = []
        for action in step.actions:
            if action is RA.DELIVER:
                outputs.append(Output(kind="deliver", packet=packet, rules=step.rules))
            elif action is RA.STORE:
                stored = packet
            else:
                outputs.append(self._reply(action, packet_id, step))  # type: ignore[arg-type]
        if packet_id is not None and event is not RI.PUBLISH_QOS0:
            self._set_incoming(packet_id, step.next, stored)  # type: ignore[arg-type]
        return outputs

    def _receive_pubrel(self, packet_id: int) -> list[Output]:
        state, stored = self.incoming.get(packet_id, (ReceiverState.FREE, None))
        step = receiver_step(self.method, state, RI.PUBREL)
        assert isinstance(step, Step)
        outputs: list[Output] = []
        for action in step.actions:
            if action is RA.DELIVER_STORED:
                assert stored is not None
                outputs.append(Output(kind="deliver", packet=stored, rules=step.rules))
            else:
                outputs.append(self._reply(action, packet_id, step))  # type: ignore[arg-type]
        self._set_incoming(packet_id, step.next, None)  # type: ignore[arg-type]
        return outputs

    def _move(self, packet_id: int, flow: Outgoing, state: SenderState) -> None:
        """The outgoing flow moves to ``state``; at FREE its identifier is free again."""
        if state is SenderState.FREE:
            del self.outgoing[packet_id]
        else:
            flow.state = state

    def _set_incoming(self, packet_id: int, state: ReceiverState, stored: PublishP | None) -> None:
        """The incoming flow moves to ``state``, holding ``stored``; at FREE it is gone."""
        if state is ReceiverState.FREE:
            self.incoming.pop(packet_id, None)
        else:
            self.incoming[packet_id] = (state, stored)

    @staticmethod
    def _reply(action: ReceiverAction, packet_id: int, step: Step) -> Output:
        kind = {RA.SEND_PUBACK: "PUBACK", RA.SEND_PUBREC: "PUBREC", RA.SEND_PUBCOMP: "PUBCOMP"}[
            action
        ]
        return Output(kind="send", packet=ack(kind, packet_id), rules=step.rules)  # type: ignore[arg-type]

    def _sender_outputs(self, step: Step, message: PublishP) -> list[Output]:
        outputs: list[Output] = []
        for action in step.actions:
            if action is SA.SEND_PUBLISH:
                outputs.append(Output(kind="send", packet=message, rules=step.rules))
            elif action is SA.RESEND_PUBLISH:
                outputs.append(
                    Output(kind="send", packet={**message, "dup": True}, rules=step.rules)
                )
            elif action is SA.SEND_PUBREL:
                assert message["packet_id"] is not None
                outputs.append(
                    Output(
                        kind="send", packet=ack("PUBREL", message["packet_id"]), rules=step.rules
                    )
                )
        return outputs

    # -- the connection ---------------------------------------------------------------

    def reconnect(self, *, resume: bool) -> list[Output]:
        """A new connection: re-send what the tables say (resumed) or forget (clean)."""
        outputs: list[Output] = []
        event = SI.RESUME if resume else SI.CLEAN
        for packet_id, flow in list(self.outgoing.items()):  # original order [MQTT-4.6.0-1]
            step = sender_step(flow.state, event)
            assert isinstance(step, Step)
            outputs += self._sender_outputs(step, flow.message)
            self._move(packet_id, flow, step.next)  # type: ignore[arg-type]
        if not resume:
            self.incoming.clear()
            self.last_id = 0
        return outputs

    def snapshot(self) -> dict[str, Any]:
        """The session state in a comparable, JSON-ready form."""
        return {
            "outgoing": [[i, f.state.name, f.message] for i, f in self.outgoing.items()],
            "incoming": sorted([i, s.name, m] for i, (s, m) in self.incoming.items()),
        }
