"""A probe client: one named MQTT client, well-behaved by default (the reference Session),
with the switches a check needs to make it misbehave on purpose.

In MQTT 5.0 the client is the reference :class:`~pubproof.reference.session50.Session50`:
it declares its limits in CONNECT (:attr:`Client.properties`: Receive Maximum, Topic Alias
Maximum, Maximum Packet Size, Session Expiry Interval), takes the broker's from CONNACK,
resolves the broker's Topic Aliases, keeps the send quota, answers a PUBREL it does not
hold with PUBCOMP 0x92, and sends DISCONNECT with the Reason Code its session calls for.

The client never waits on its own: the check's context reads every connection and hands
each packet to its client (:meth:`Client.handle`), so several clients can be watched at
once under one deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pubproof.judge import packets as control
from pubproof.model.editions import Edition, Limits
from pubproof.probe.evidence import Entry, Recorder, connack_code
from pubproof.probe.link import Link, ProbeError, Received
from pubproof.probe.target import Target
from pubproof.probe.timing import Timing
from pubproof.reference.codec import encode
from pubproof.reference.packets import Packet, Publish
from pubproof.reference.properties import PublishProperties
from pubproof.reference.session import Deliver, Judgement, Method, Send, Session
from pubproof.reference.session50 import Disconnect, Session50, Wait

#: the Receive Maximum and Topic Alias Maximum an end has when it declares none (3.1.2.11.3,
#: 3.1.2.11.5)
DEFAULT_RECEIVE_MAXIMUM = 65535

#: A client's decision to keep a packet from its session (as if it crashed before reading).
Hold = Callable[[Packet], bool]


@dataclass(frozen=True, slots=True, kw_only=True)
class Subscription:
    """MQTT 5.0: a topic filter and its Subscription Options (3.8.3.1)."""

    filter: str
    qos: int = 2
    no_local: bool = False
    retain_as_published: bool = False
    retain_handling: int = 0

    @property
    def fields(self) -> dict[str, Any]:
        """The subscription as :func:`pubproof.judge.packets.subscribe` takes it."""
        return {
            "filter": self.filter, "qos": self.qos, "no_local": self.no_local,
            "retain_as_published": self.retain_as_published,
            "retain_handling": self.retain_handling,
        }  # fmt: skip


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


def with_properties(packet: Publish, properties: PublishProperties | None) -> Publish:
    """MQTT 5.0: the PUBLISH a reference session chose, with ``properties`` beside the Topic
    Alias it gave (the packet as it is when None)."""
    if properties is None:
        return packet
    alias = packet.properties.topic_alias if packet.properties else None
    return replace(packet, properties=replace(properties, topic_alias=alias))


class Client:
    """One MQTT client of a check."""

    def __init__(self, ctx: Host, name: str, client_id: str) -> None:
        self.ctx = ctx
        self.name = name
        self.client_id = client_id
        self.v50 = ctx.edition is Edition.V50
        self.session: Any = Session50() if self.v50 else Session(method=Method.B)
        #: MQTT 5.0: the properties of the client's CONNECT (what it declares)
        self.properties: dict[str, Any] = {}
        #: MQTT 5.0: whether the client's session gives topic names aliases (up to the
        #: broker's Topic Alias Maximum); off unless a check is about them
        self.use_aliases = False
        self.connack: Entry | None = None
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
        if self.v50:
            self.link.limits = self.own_limits
            data = control.connect(
                self.client_id, clean=clean, edition=Edition.V50, properties=self.properties
            )
        else:
            data = control.connect(self.client_id, clean=clean, edition=ctx.edition)
        self.link.send(data)
        ctx.wait_for(self, "CONNACK", lambda: self.count("CONNACK") > before)
        entry = self._last("CONNACK")
        assert entry is not None
        if connack_code(entry) != 0:
            raise ProbeError(f"{self.name}: the broker refused the connection: {entry}")
        self.connack = entry
        if self.v50:
            self._negotiated(entry)
        return entry

    @property
    def own_limits(self) -> Limits:
        """MQTT 5.0: the Topic Alias Maximum and Maximum Packet Size the client declares."""
        return Limits(
            topic_alias_maximum=self.properties.get("topic_alias_maximum", 0),
            maximum_packet_size=self.properties.get("maximum_packet_size"),
        )

    def _negotiated(self, connack: Entry) -> None:
        """MQTT 5.0: the limits of both ends, as CONNECT and CONNACK declared them."""
        theirs = connack.get("properties", {})
        assert self.link is not None
        self.link.peer_limits = Limits(
            topic_alias_maximum=theirs.get("topic_alias_maximum", 0),
            maximum_packet_size=theirs.get("maximum_packet_size"),
        )
        session = self.session
        session.receive_maximum = self.properties.get("receive_maximum", DEFAULT_RECEIVE_MAXIMUM)
        session.topic_alias_maximum = self.properties.get("topic_alias_maximum", 0)
        session.peer_receive_maximum = theirs.get("receive_maximum", DEFAULT_RECEIVE_MAXIMUM)
        tam = theirs.get("topic_alias_maximum", 0)
        session.peer_topic_alias_maximum = tam if self.use_aliases else 0
        if not session.in_flight:
            session.quota = session.peer_receive_maximum

    @property
    def session_present(self) -> bool:
        """Whether the last CONNACK said Session Present."""
        return bool(self.connack and self.connack.get("session_present"))

    def reconnect(self, *, clean: bool) -> Entry:
        """A new connection for the same client id; resumed sessions re-send (reference)."""
        if self.link is not None and not self.link.closed:
            self.link.drop()
        connack = self.connect(clean=clean)
        resume = not clean and (self.session_present or not self.v50)
        for output in self.session.reconnect(resume=resume):
            if isinstance(output, Send):
                self.send(output.packet)
        return connack

    def drop(self) -> None:
        """Lose the connection: no DISCONNECT."""
        if self.link is not None:
            self.link.drop()

    def disconnect(self, reason_code: int = 0x00) -> None:
        """DISCONNECT (MQTT 5.0: with ``reason_code``), then close the connection."""
        if self.link is not None and not self.link.closed:
            data = control.disconnect(reason_code) if self.v50 else control.DISCONNECT
            self.link.send(data)
            self.link.drop()

    # -- sending -----------------------------------------------------------------------

    def send(self, packet: Packet, *, case: bool = False) -> None:
        """Encode ``packet`` with the reference codec and send it."""
        self.send_raw(
            encode(packet, edition=self.ctx.edition, readings=self.ctx.readings), case=case
        )

    @property
    def link_limits(self) -> Limits | None:
        """MQTT 5.0: the broker's limits on this connection (None before CONNACK)."""
        return None if self.link is None else self.link.peer_limits

    def send_raw(self, data: bytes, *, case: bool = False, breaks: tuple[str, ...] = ()) -> None:
        """Send bytes as they are (``case``: the packet the check is about; ``breaks``: the
        client's own rules they break on purpose, for which the broker may close)."""
        if self.link is None:
            raise ProbeError(f"{self.name} is not connected")
        self.link.send(data, case=case, breaks=breaks)

    def publish(
        self,
        topic: str,
        payload: bytes,
        qos: int = 0,
        retain: bool = False,
        properties: PublishProperties | None = None,
    ) -> Publish:
        """Publish through the reference session; the PUBLISH it sends. MQTT 5.0:
        ``properties`` go with it (beside the Topic Alias the session chose); at send
        quota 0 the message waits for an acknowledgement, as the session says
        [MQTT-4.9.0-2]."""
        outputs = self.session.publish(topic, payload, qos=qos, retain=retain)
        if outputs and isinstance(outputs[0], Wait):
            self.ctx.wait_for(self, "a send quota above 0", lambda: self.session.quota > 0)
            outputs = self.session.publish(topic, payload, qos=qos, retain=retain)
        if not outputs or isinstance(outputs[0], Wait):
            # the probe cannot go on: recorded, so that the verdict says so
            message = f"{self.name}: every packet identifier is in use (or no send quota)"
            self.ctx.recorder.event("error", None, message=message)
            raise ProbeError(message)
        sent = outputs[0]
        assert isinstance(sent, Send) and isinstance(sent.packet, Publish)
        packet = with_properties(sent.packet, properties)
        self.send(packet)
        return packet

    def subscribe(
        self,
        *subscriptions: tuple[str, int] | Subscription,
        identifier: int | None = None,
    ) -> list[int]:
        """SUBSCRIBE and wait for SUBACK; the granted QoS values (MQTT 5.0: the Reason
        Codes; a subscription may carry its options, the SUBSCRIBE a Subscription
        Identifier)."""
        packet_id = self._next_subscribe_id
        self._next_subscribe_id += 1
        if self.v50:
            wanted = [
                (s if isinstance(s, Subscription) else Subscription(filter=s[0], qos=s[1])).fields
                for s in subscriptions
            ]
            properties = {} if identifier is None else {"subscription_identifiers": [identifier]}
            data = control.subscribe(packet_id, wanted, edition=Edition.V50, properties=properties)
            self.send_raw(data)
        else:
            plain = [s for s in subscriptions if isinstance(s, tuple)]
            self.send_raw(control.subscribe(packet_id, plain))

        def suback() -> Entry | None:
            entry = self._last("SUBACK")
            return entry if entry is not None and entry.get("packet_id") == packet_id else None

        self.ctx.wait_for(self, "SUBACK", lambda: suback() is not None)
        entry = suback()
        assert entry is not None
        granted: list[int] = entry["granted"] if "granted" in entry else entry["reason_codes"]
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
            elif isinstance(output, Disconnect):
                # the reference's verdict on the broker's packet; the judge gives the model's
                self.disconnect(output.reason_code)
                return
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
