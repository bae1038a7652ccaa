"""The reference MQTT 5.0 session engine: one end of a session, sans-IO.

Theory of operation
-------------------
As :class:`pubproof.reference.session.Session` for 3.1.1, with what 5.0 adds to the flows:

- Reason Codes: a PUBACK or PUBREC of 0x80 or more ends the flow (the identifier is free
  and the PUBLISH is never re-sent, [MQTT-4.4.0-2]); PUBREL answers only a PUBREC below
  0x80 [MQTT-4.3.3-4]; a PUBREL for an identifier not held is answered PUBCOMP 0x92, a
  PUBREC for one not held PUBREL 0x92. ``receive(packet, refuse=code)`` lets the
  application refuse a new QoS 1 or 2 message (PUBACK / PUBREC with that code).
- Flow control (4.9): the send quota is the peer's Receive Maximum at each connection,
  less one for each flow still unacknowledged that is taken up again; one QoS 1 or 2
  PUBLISH sent takes one, a PUBACK, a PUBCOMP or a PUBREC of 0x80 or more gives one back;
  at zero a new message gets :class:`Wait`. A new QoS 1 or 2 PUBLISH that would make more
  than this end's Receive Maximum unacknowledged is answered :class:`Disconnect` 0x93.
- Topic Alias: aliases 1, 2, ... are given to topic names in the order they are first
  sent, up to the peer's Topic Alias Maximum; the first PUBLISH on a connection carries
  the topic name and the alias, later ones the alias alone. Incoming aliases are mapped
  and resolved; an unknown one is DISCONNECT 0x82, one of 0 or above this end's maximum
  0x94. Both maps belong to the connection [MQTT-3.3.2-7].
- Re-sending only on a resumed session (Clean Start 0, session present) [MQTT-4.4.0-1].

The state is saved with :meth:`to_json` and restored with :meth:`from_json`. This is an
independent implementation of the 5.0 flows: it reads no table of the model, and the
tests drive it side by side with :class:`pubproof.model.session50.SessionModel50`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pubproof.reference.jsonform import from_p, to_p
from pubproof.reference.packets import Packet, PubAck, PubComp, Publish, PubRec, PubRel
from pubproof.reference.properties import AckProperties, PublishProperties
from pubproof.reference.session import Deliver, Judgement, Method, Send

NOT_FOUND = 0x92
_NO_ACK_PROPS = AckProperties()
_NO_PROPS = PublishProperties()


@dataclass(frozen=True, slots=True, kw_only=True)
class Wait:
    """The send quota is 0: the new message waits [MQTT-4.9.0-2]."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Disconnect:
    """Send DISCONNECT with this Reason Code and close the connection."""

    reason_code: int
    rule: str
    packet: Packet


Output50 = Send | Deliver | Judgement | Wait | Disconnect

# What each outgoing flow awaits.
PUBACK, PUBREC, PUBCOMP = "PUBACK", "PUBREC", "PUBCOMP"
_STRAY = {
    PubAck: ("MQTT-3.3.4-1", "PUBACK for an identifier not awaiting one: ignored"),
    PubComp: ("MQTT-4.3.3-5", "PUBCOMP for an identifier not awaiting one: ignored"),
}


def _ack(cls: type[PubAck | PubRec | PubRel | PubComp], packet_id: int, code: int = 0) -> Send:
    return Send(packet=cls(packet_id=packet_id, reason_code=code, properties=_NO_ACK_PROPS))


class Session50:
    """One end of a 5.0 session (client or server) with its negotiated limits."""

    __slots__ = (
        "_alias_in", "_alias_out", "_incoming", "_last_id", "_outgoing", "method",
        "peer_receive_maximum", "peer_topic_alias_maximum", "quota", "receive_maximum",
        "topic_alias_maximum",
    )  # fmt: skip

    def __init__(
        self,
        *,
        method: Method = Method.B,
        receive_maximum: int = 65535,
        topic_alias_maximum: int = 0,
        peer_receive_maximum: int = 65535,
        peer_topic_alias_maximum: int = 0,
    ) -> None:
        self.method = method
        self.receive_maximum = receive_maximum
        self.topic_alias_maximum = topic_alias_maximum
        self.peer_receive_maximum = peer_receive_maximum
        self.peer_topic_alias_maximum = peer_topic_alias_maximum
        self.quota = peer_receive_maximum
        self._outgoing: dict[int, list[Any]] = {}  # id -> [awaiting, Publish as published]
        self._incoming: dict[int, Publish | None] = {}  # held QoS 2: message (A) or None (B)
        self._last_id = 0
        self._alias_in: dict[int, str] = {}
        self._alias_out: dict[str, int] = {}

    # -- the application ----------------------------------------------------------------

    def publish(
        self,
        topic: str,
        payload: bytes = b"",
        qos: int = 0,
        retain: bool = False,
        properties: PublishProperties | None = None,
    ) -> list[Output50]:
        """Start a new outgoing message (``properties``: the message's own, kept for its
        re-sends; the session adds the Topic Alias it chooses); ``[Wait()]`` at send quota
        0, ``[]`` if every packet identifier is in use."""
        if qos and self.quota <= 0:
            return [Wait()]
        packet_id = None
        if qos:
            packet_id = self._next_id()
            if packet_id is None:
                return []
        message = Publish(
            topic=topic, payload=payload, qos=qos, packet_id=packet_id, retain=retain,
            properties=_NO_PROPS if properties is None else replace(properties, topic_alias=None),
        )  # fmt: skip
        if qos:
            assert packet_id is not None
            self._outgoing[packet_id] = [PUBACK if qos == 1 else PUBREC, message]
            self.quota -= 1
        return [Send(packet=self._on_the_wire(message))]

    def _next_id(self) -> int | None:
        if len(self._outgoing) >= 65535:
            return None
        candidate = self._last_id
        while True:
            candidate = 1 if candidate >= 65535 else candidate + 1
            if candidate not in self._outgoing:
                self._last_id = candidate
                return candidate

    def _on_the_wire(self, message: Publish) -> Publish:
        props = message.properties or _NO_PROPS
        alias = self._alias_out.get(message.topic)
        if alias is not None:
            return replace(message, topic="", properties=replace(props, topic_alias=alias))
        if len(self._alias_out) < self.peer_topic_alias_maximum:
            alias = self._alias_out[message.topic] = len(self._alias_out) + 1
            return replace(message, properties=replace(props, topic_alias=alias))
        return message

    # -- packets from the peer -------------------------------------------------------------

    def receive(self, packet: Packet, *, refuse: int = 0) -> list[Output50]:
        if isinstance(packet, Publish):
            return self._on_publish(packet, refuse)
        packet_id, code = packet.packet_id, packet.reason_code
        if isinstance(packet, PubRel):
            return self._on_pubrel(packet_id)
        flow = self._outgoing.get(packet_id)
        awaiting = flow[0] if flow is not None else None
        if isinstance(packet, PubRec):
            if code < 0x80 and awaiting in (PUBREC, PUBCOMP):
                assert flow is not None
                flow[0] = PUBCOMP
                return [_ack(PubRel, packet_id)]
            if code >= 0x80 and awaiting == PUBREC:
                del self._outgoing[packet_id]  # acknowledged, never re-sent
                self.quota += 1
                return []
            if code < 0x80 and awaiting is None:
                return [_ack(PubRel, packet_id, NOT_FOUND)]
            note = (
                "PUBREC for an identifier awaiting PUBACK: ignored"
                if code < 0x80
                else "PUBREC with an error for an identifier not awaiting PUBREC: ignored"
            )
            return [Judgement(verdict="tolerated", rule="MQTT-3.3.4-1", packet=packet, note=note)]
        wanted = PUBACK if isinstance(packet, PubAck) else PUBCOMP
        if awaiting == wanted:
            del self._outgoing[packet_id]
            self.quota += 1  # whatever the Reason Code
            return []
        rule, note = _STRAY[type(packet)]
        return [Judgement(verdict="tolerated", rule=rule, packet=packet, note=note)]

    def _on_pubrel(self, packet_id: int) -> list[Output50]:
        if packet_id not in self._incoming:
            return [_ack(PubComp, packet_id, NOT_FOUND)]
        stored = self._incoming.pop(packet_id)
        done = _ack(PubComp, packet_id)
        return [Deliver(message=stored), done] if stored is not None else [done]

    def _resolve(self, packet: Publish) -> Publish | Disconnect:
        props = packet.properties or _NO_PROPS
        alias = props.topic_alias
        if alias is None:
            if not packet.topic:
                return Disconnect(reason_code=0x82, rule="PP50-3.3.2-topic-or-alias", packet=packet)
            return packet
        if alias < 1 or alias > self.topic_alias_maximum:
            return Disconnect(reason_code=0x94, rule="MQTT-3.3.2-8", packet=packet)
        topic = packet.topic
        if topic:
            self._alias_in[alias] = topic
        elif alias in self._alias_in:
            topic = self._alias_in[alias]
        else:
            return Disconnect(
                reason_code=0x82, rule="PP50-3.3.2-topic-alias-unknown", packet=packet
            )
        return replace(packet, topic=topic, properties=replace(props, topic_alias=None))

    def _on_publish(self, packet: Publish, refuse: int) -> list[Output50]:
        resolved = self._resolve(packet)
        if isinstance(resolved, Disconnect):
            return [resolved]
        qos, packet_id = resolved.qos, resolved.packet_id
        if qos == 0:
            return [Deliver(message=resolved)]
        assert packet_id is not None
        if packet_id in self._incoming:
            if qos == 1:
                note = "a QoS 1 PUBLISH on an identifier the sender still holds for a QoS 2 flow"
                return [
                    Judgement(verdict="violation", rule="MQTT-4.3.3-1", packet=resolved, note=note)
                ]
            return [_ack(PubRec, packet_id)]  # a duplicate: the first decision stands
        if len(self._incoming) >= self.receive_maximum:
            return [Disconnect(reason_code=0x93, rule="MQTT-3.3.4-7", packet=resolved)]
        reply = PubAck if qos == 1 else PubRec
        if refuse >= 0x80:
            return [_ack(reply, packet_id, refuse)]
        if qos == 1:
            return [Deliver(message=resolved), _ack(PubAck, packet_id)]
        if self.method is Method.A:
            self._incoming[packet_id] = resolved
            return [_ack(PubRec, packet_id)]
        self._incoming[packet_id] = None
        return [Deliver(message=resolved), _ack(PubRec, packet_id)]

    # -- the connection ---------------------------------------------------------------

    def reconnect(self, *, resume: bool) -> list[Output50]:
        """A new connection: Clean Start 0 with the session present (``resume``) re-sends
        unacknowledged PUBLISH (DUP 1) and PUBREL in their order; otherwise (Clean Start 1
        or an expired session) the session starts empty."""
        self._alias_in.clear()
        self._alias_out.clear()
        self.quota = self.peer_receive_maximum
        if not resume:
            self._outgoing.clear()
            self._incoming.clear()
            self._last_id = 0
            return []
        out: list[Output50] = []
        for packet_id, (awaiting, message) in self._outgoing.items():
            self.quota -= 1  # the flow is unacknowledged on this connection too
            if awaiting == PUBCOMP:
                out.append(_ack(PubRel, packet_id))
            else:
                out.append(Send(packet=self._on_the_wire(replace(message, dup=True))))
        return out

    # -- state ----------------------------------------------------------------------------

    @property
    def in_flight(self) -> dict[int, tuple[str, Publish]]:
        """Outgoing flows by packet identifier (what each awaits), in sending order."""
        return {i: (a, m) for i, (a, m) in self._outgoing.items()}

    @property
    def held(self) -> dict[int, Publish | None]:
        return dict(self._incoming)

    @property
    def aliases(self) -> tuple[dict[int, str], dict[str, int]]:
        """The connection's Topic Alias maps: incoming alias -> topic, outgoing topic -> alias."""
        return dict(self._alias_in), dict(self._alias_out)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method.value,
            "limits": [self.receive_maximum, self.topic_alias_maximum,
                       self.peer_receive_maximum, self.peer_topic_alias_maximum],
            "quota": self.quota,
            "last_id": self._last_id,
            "outgoing": [[i, a, to_p(m)] for i, (a, m) in self._outgoing.items()],
            "incoming": [[i, None if m is None else to_p(m)] for i, m in self._incoming.items()],
            "alias_in": [[a, t] for a, t in self._alias_in.items()],
            "alias_out": [[t, a] for t, a in self._alias_out.items()],
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session50:
        rm, tam, peer_rm, peer_tam = (int(v) for v in data["limits"])
        session = cls(
            method=Method(data["method"]), receive_maximum=rm, topic_alias_maximum=tam,
            peer_receive_maximum=peer_rm, peer_topic_alias_maximum=peer_tam,
        )  # fmt: skip
        session.quota = int(data["quota"])
        session._last_id = int(data["last_id"])
        for packet_id, awaiting, message in data["outgoing"]:
            publish = from_p(message)
            assert isinstance(publish, Publish)
            session._outgoing[int(packet_id)] = [str(awaiting), publish]
        for packet_id, message in data["incoming"]:
            session._incoming[int(packet_id)] = None if message is None else from_p(message)  # type: ignore[assignment]
        session._alias_in = {int(a): str(t) for a, t in data["alias_in"]}
        session._alias_out = {str(t): int(a) for t, a in data["alias_out"]}
        return session
