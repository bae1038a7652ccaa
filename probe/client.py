"""A probe client: one named MQTT client, well-behaved by default (the reference Session),
with the switches a check needs to make it misbehave on purpose.

The client never waits on its own: the check's context reads every connection and hands
each packet to its client (:meth:`Client.handle`), so several clients can be watched at
once under one deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from pubproof.judge import packets as control
from pubproof.model.editions import Edition
from pubproof.probe.evidence import Entry, Recorder
from pubproof.probe.link import Link, ProbeError, Received
from pubproof.probe.target import Target
from pubproof.probe.timing import Timing
from pubproof.reference.codec import encode
from pubproof.reference.packets import Packet, Publish
from pubproof.reference.session import Deliver, Judgement, Method, Send, Session

#: A client's decision to keep a packet from its session (as if it crashed before reading).
Hold = Callable[[Packet], bool]


class Host(Protocol):
    """What a client needs of the check it runs in (:class:`~pubproof.probe.context.
    CheckContext`)."""

    target: Target
    recorder: Recorder
    timing: Timing
    edition: Edition
    readings: Mapping[str, str]

    def cap(self, seconds: float) -> float: ...

    def wait_for(
        self,
        client: Client,
        what: str,
        done: Callable[[], bool],
        *,
        closed_ok: bool = False,
    ) -> None: ...


class Client:
    """One MQTT client of a check."""

    def __init__(self, ctx: Host, name: str, client_id: str) -> None:
        self.ctx = ctx
        self.name = name
        self.client_id = client_id
        self.session = Session(method=Method.B)
        self.link: Link | None = None
        self.deliveries: list[Publish] = []  # what the application was handed
        self.received: list[Received] = []  # every packet from the broker, in order
        self.held: list[Packet] = []  # packets kept from the session by ``hold``
        self.hold: Hold | None = None
        self._next_subscribe_id = 1

    # -- connection --------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether the client has an open connection."""
        return self.link is not None and not self.link.closed

    def connect(self, *, clean: bool = True) -> Entry:
        """CONNECT and wait for CONNACK; ``ProbeError`` if the broker refuses."""
        ctx = self.ctx
        self.link = Link.open(
            ctx.target, self.name, ctx.recorder, ctx.cap(ctx.timing.answer), ctx.edition,
            ctx.readings,
        )  # fmt: skip
        before = self.count("CONNACK")
        self.link.send(control.connect(self.client_id, clean=clean, edition=ctx.edition))
        ctx.wait_for(self, "CONNACK", lambda: self.count("CONNACK") > before)
        entry = self._last("CONNACK")
        assert entry is not None
        if entry.get("return_code") != 0:
            raise ProbeError(f"{self.name}: the broker refused the connection: {entry}")
        return entry

    def reconnect(self, *, clean: bool) -> Entry:
        """A new connection for the same client id; resumed sessions re-send (reference)."""
        if self.link is not None and not self.link.closed:
            self.link.drop()
        connack = self.connect(clean=clean)
        for output in self.session.reconnect(resume=not clean):
            if isinstance(output, Send):
                self.send(output.packet)
        return connack

    def drop(self) -> None:
        """Lose the connection: no DISCONNECT."""
        if self.link is not None:
            self.link.drop()

    def disconnect(self) -> None:
        """DISCONNECT, then close the connection."""
        if self.link is not None and not self.link.closed:
            self.link.send(control.DISCONNECT)
            self.link.drop()

    # -- sending -----------------------------------------------------------------------

    def send(self, packet: Packet, *, case: bool = False) -> None:
        """Encode ``packet`` with the reference codec and send it."""
        self.send_raw(
            encode(packet, edition=self.ctx.edition, readings=self.ctx.readings), case=case
        )

    def send_raw(self, data: bytes, *, case: bool = False) -> None:
        """Send bytes as they are (``case``: the packet the check is about)."""
        if self.link is None:
            raise ProbeError(f"{self.name} is not connected")
        self.link.send(data, case=case)

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> Publish:
        """Publish through the reference session; the PUBLISH it sends."""
        outputs = self.session.publish(topic, payload, qos=qos, retain=retain)
        if not outputs:
            raise ProbeError(f"{self.name}: every packet identifier is in use")
        sent = outputs[0]
        assert isinstance(sent, Send) and isinstance(sent.packet, Publish)
        self.send(sent.packet)
        return sent.packet

    def subscribe(self, *subscriptions: tuple[str, int]) -> list[int]:
        """SUBSCRIBE and wait for SUBACK; the granted QoS values."""
        packet_id = self._next_subscribe_id
        self._next_subscribe_id += 1
        self.send_raw(control.subscribe(packet_id, subscriptions))

        def suback() -> Entry | None:
            entry = self._last("SUBACK")
            return entry if entry is not None and entry.get("packet_id") == packet_id else None

        self.ctx.wait_for(self, "SUBACK", lambda: suback() is not None)
        entry = suback()
        assert entry is not None
        granted: list[int] = entry.get("granted", [])
        return granted

    def ping(self) -> None:
        """PINGREQ, and wait for PINGRESP: everything sent before it has been read."""
        count = self.count("PINGRESP")
        self.send_raw(control.PINGREQ)
        self.ctx.wait_for(self, "PINGRESP", lambda: self.count("PINGRESP") > count)

    # -- receiving ---------------------------------------------------------------------

    def handle(self, received: Received) -> None:
        """A packet from the broker: to the session (unless held), answers sent back."""
        self.received.append(received)
        packet = received.packet
        if packet is None:
            return
        if self.hold is not None and self.hold(packet):
            self.held.append(packet)
            return
        self.feed(packet)

    def feed(self, packet: Packet) -> None:
        """Hand a packet to the session and carry out what it says."""
        for output in self.session.receive(packet):
            if isinstance(output, Deliver):
                self.deliveries.append(output.message)
            elif isinstance(output, Send):
                self.send(output.packet)
            else:
                assert isinstance(output, Judgement)  # judged later, from the evidence

    def release(self, count: int = 1) -> None:
        """Stop holding; hand the first ``count`` held packets to the session, drop the rest."""
        self.hold = None
        held, self.held = self.held[:count], []
        for packet in held:
            self.feed(packet)

    def count(self, kind: str, **fields: Any) -> int:
        """How many packets of a type (with these field values) came from the broker."""
        return sum(
            1
            for r in self.received
            if r.type == kind and all(r.entry.get(k) == v for k, v in fields.items())
        )

    def _last(self, kind: str) -> Entry | None:
        for r in reversed(self.received):
            if r.type == kind:
                return r.entry
        return None

    def delivered(self, payloads: Sequence[bytes]) -> bool:
        """Whether the application has been handed each of these payloads."""
        got = [m.payload for m in self.deliveries]
        return all(p in got for p in payloads)

    @property
    def settled(self) -> bool:
        """No flow in progress at this end."""
        return not self.session.in_flight and not self.session.held
