"""The reference session engine: one end of an MQTT session, sans-IO.

Theory of operation
-------------------
A ``Session`` is both a sender (of what its application publishes) and a receiver (of what
its peer publishes). It consumes packets from the peer (:meth:`receive`), publish requests
from the application (:meth:`publish`) and connection events (:meth:`reconnect`), and
returns what to do: packets to send, messages to deliver, and judgements of the peer. It
never touches a socket or a clock.

State per packet identifier: outgoing flows awaiting PUBACK, PUBREC or PUBCOMP (in sending
order, which is also the re-send order [MQTT-4.6.0-1]); incoming QoS 2 flows awaiting
PUBREL, holding the message (Method A) or only the identifier (Method B). The state can be
saved (:meth:`to_json`) and restored (:meth:`from_json`), so a resumed session works
across process restarts.

This is an independent implementation; the tests drive it side by side with
:class:`pubproof.model.session.SessionModel` and check that the two agree after every step.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from pubproof.reference.jsonform import from_p, to_p
from pubproof.reference.packets import Packet, PubAck, PubComp, Publish, PubRec, PubRel


class Method(enum.Enum):
    """How the receiving end handles QoS 2 (MQTT 3.1.1 section 4.3.3)."""

    A = "A"  # store the message, deliver on PUBREL
    B = "B"  # deliver on PUBLISH, hold the packet identifier until PUBREL


class Awaiting(enum.Enum):
    PUBACK = "PUBACK"
    PUBREC = "PUBREC"
    PUBCOMP = "PUBCOMP"


@dataclass(frozen=True, slots=True, kw_only=True)
class Send:
    """Send this packet to the peer."""

    packet: Packet


@dataclass(frozen=True, slots=True, kw_only=True)
class Deliver:
    """Hand this message to the application."""

    message: Publish


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgement:
    """The peer did something the protocol does not define: a violation, or tolerated."""

    verdict: str  # "violation" | "tolerated"
    rule: str
    packet: Packet
    note: str


Output = Send | Deliver | Judgement

_FIRST_SEND = {1: Awaiting.PUBACK, 2: Awaiting.PUBREC}
_IGNORED_PUBACK = "PUBACK for an identifier not awaiting one (unknown, or a QoS 2 flow): ignored"
_QOS1_ON_HELD_ID = "a QoS 1 PUBLISH on an identifier the sender still holds for a QoS 2 flow"


class Session:
    """One end of a session (client or server: the flows are the same)."""

    __slots__ = ("_incoming", "_last_id", "_outgoing", "method")

    def __init__(self, *, method: Method = Method.B) -> None:
        self.method = method
        self._outgoing: dict[int, list[Any]] = {}  # id -> [Awaiting, Publish]
        self._incoming: dict[int, Publish | None] = {}  # id -> stored message (A) or None (B)
        self._last_id = 0

    # -- the application ----------------------------------------------------------------

    def publish(
        self, topic: str, payload: bytes = b"", qos: int = 0, retain: bool = False
    ) -> list[Output]:
        """Start a new outgoing message; [] if every packet identifier is in use."""
        if not qos:
            return [Send(packet=Publish(topic=topic, payload=payload, retain=retain))]
        packet_id = self._next_id()
        if packet_id is None:
            return []
        message = Publish(topic=topic, payload=payload, qos=qos, packet_id=packet_id, retain=retain)
        self._outgoing[packet_id] = [_FIRST_SEND[qos], message]
        return [Send(packet=message)]

    def _next_id(self) -> int | None:
        outgoing, candidate = self._outgoing, self._last_id
        if len(outgoing) >= 65535:
            return None
        while True:
            candidate = candidate + 1 if candidate < 65535 else 1
            if candidate not in outgoing:
                self._last_id = candidate
                return candidate

    # -- packets from the peer -------------------------------------------------------------

    def receive(self, packet: Packet) -> list[Output]:
        if isinstance(packet, Publish):
            return self._on_publish(packet)
        packet_id = packet.packet_id
        if isinstance(packet, PubRel):
            if packet_id in self._incoming:
                stored = self._incoming.pop(packet_id)
                if stored is not None:
                    return [Deliver(message=stored), Send(packet=PubComp(packet_id=packet_id))]
            return [Send(packet=PubComp(packet_id=packet_id))]
        flow = self._outgoing.get(packet_id)
        awaiting = flow[0] if flow is not None else None
        if isinstance(packet, PubAck):
            if awaiting is Awaiting.PUBACK:
                del self._outgoing[packet_id]
                return []
            return [
                Judgement(
                    verdict="tolerated",
                    rule="MQTT-3.3.4-1",
                    packet=packet,
                    note=_IGNORED_PUBACK,
                )
            ]
        if isinstance(packet, PubRec):
            if awaiting is Awaiting.PUBREC or awaiting is Awaiting.PUBCOMP:
                assert flow is not None
                flow[0] = Awaiting.PUBCOMP
                return [Send(packet=PubRel(packet_id=packet_id))]
            return [
                Judgement(
                    verdict="tolerated",
                    rule="MQTT-3.3.4-1",
                    packet=packet,
                    note="PUBREC for an identifier not awaiting one: ignored",
                )
            ]
        # PUBCOMP
        if awaiting is Awaiting.PUBCOMP:
            del self._outgoing[packet_id]
            return []
        return [
            Judgement(
                verdict="tolerated",
                rule="MQTT-4.3.3-2",
                packet=packet,
                note="PUBCOMP for an identifier not awaiting one: ignored",
            )
        ]

    def _on_publish(self, packet: Publish) -> list[Output]:
        qos = packet.qos
        if qos == 0:
            return [Deliver(message=packet)]
        packet_id = packet.packet_id
        assert packet_id is not None
        held = packet_id in self._incoming
        if qos == 1:
            if held:
                return [
                    Judgement(
                        verdict="violation",
                        rule="MQTT-2.3.1-2",
                        packet=packet,
                        note=_QOS1_ON_HELD_ID,
                    )
                ]
            return [Deliver(message=packet), Send(packet=PubAck(packet_id=packet_id))]
        if held:  # a duplicate before PUBREL: acknowledge again, deliver nothing
            return [Send(packet=PubRec(packet_id=packet_id))]
        if self.method is Method.A:
            self._incoming[packet_id] = packet
            return [Send(packet=PubRec(packet_id=packet_id))]
        self._incoming[packet_id] = None
        return [Deliver(message=packet), Send(packet=PubRec(packet_id=packet_id))]

    # -- the connection ---------------------------------------------------------------

    def reconnect(self, *, resume: bool) -> list[Output]:
        """A new connection. Resumed: re-send unacknowledged PUBLISH (DUP=1) and PUBREL in
        their original order [MQTT-4.4.0-1]. Clean: forget everything."""
        if not resume:
            self._outgoing.clear()
            self._incoming.clear()
            self._last_id = 0
            return []
        out: list[Output] = []
        for packet_id, (awaiting, message) in self._outgoing.items():
            if awaiting is Awaiting.PUBCOMP:
                out.append(Send(packet=PubRel(packet_id=packet_id)))
            else:
                out.append(
                    Send(
                        packet=Publish(
                            topic=message.topic,
                            payload=message.payload,
                            qos=message.qos,
                            packet_id=packet_id,
                            retain=message.retain,
                            dup=True,
                        )
                    )
                )
        return out

    # -- state ----------------------------------------------------------------------------

    @property
    def in_flight(self) -> dict[int, tuple[Awaiting, Publish]]:
        """Outgoing flows by packet identifier, in sending order."""
        return {i: (a, m) for i, (a, m) in self._outgoing.items()}

    @property
    def held(self) -> dict[int, Publish | None]:
        """Incoming QoS 2 flows awaiting PUBREL."""
        return dict(self._incoming)

    def to_json(self) -> dict[str, Any]:
        """The whole session state, as JSON-ready data."""
        return {
            "method": self.method.value,
            "last_id": self._last_id,
            "outgoing": [[i, a.value, to_p(m)] for i, (a, m) in self._outgoing.items()],
            "incoming": [[i, None if m is None else to_p(m)] for i, m in self._incoming.items()],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        """A session restored from :meth:`to_json`."""
        session = cls(method=Method(data["method"]))
        session._last_id = int(data["last_id"])
        for packet_id, awaiting, message in data["outgoing"]:
            publish = from_p(message)
            assert isinstance(publish, Publish)
            session._outgoing[int(packet_id)] = [Awaiting(awaiting), publish]
        for packet_id, message in data["incoming"]:
            session._incoming[int(packet_id)] = None if message is None else from_p(message)  # type: ignore[assignment]
        return session
