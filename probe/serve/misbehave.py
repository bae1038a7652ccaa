"""``--misbehave NAME``: the broker breaks a rule on purpose, so that a client developer sees
what their client makes of it, judged as ``probe-client`` judges it.

Rules / theory of operation
---------------------------
Each name is a :class:`~pubproof.probe.serve.tricks.Tricks` hook (or a few) of
:class:`Misbehave`; everything else stays the reference. Two kinds:

- *provocations*: the broker does what a server may not, or what a client must be ready
  for, and the client's answers are judged by its link judge as always: ``drop-before-
  ack`` (a client's first QoS 1 or 2 PUBLISH is never answered: the connection drops; the
  client must re-send it with DUP 1 on a resumed session [MQTT-4.4.0-1] [MQTT-3.3.1-1], and
  not on a clean one), ``refuse-publish`` (5.0: PUBACK or PUBREC 0x80 to its first new
  message; never re-sent [MQTT-4.4.0-2]), ``forget-sessions`` (Session Present 0 whatever
  the CONNECT asked: the client re-sends nothing), ``qos2-duplicate`` (a QoS 2 copy sent
  again with DUP 1 before PUBREL: answered PUBREC, delivered once [MQTT-4.3.3-2]),
  ``qos1-duplicate`` (a QoS 1 copy sent twice), ``pubrel-unknown`` (a PUBREL for an
  identifier the client does not hold: PUBCOMP), ``resend-dup0`` (a resumed session's
  re-sends with DUP 0: the server breaks [MQTT-3.3.1-1]);
- *cases*: the broker sends a packet the model rejects, once per connection, and the close
  judge judges the client's reaction, as ``probe-client`` does
  (:func:`pubproof.probe.clients.judge.case_findings`: it must close exactly when the model
  says, in 5.0 with the DISCONNECT Reason Code the model calls for): every wire case of
  the client catalog by its check id (``wire.receive-qos3``, ``wire.puback-flags``, ...:
  a PUBLISH on a topic of the client's subscription right after its SUBACK, an
  acknowledgement where its own flow calls for one), and ``alias-above-maximum``,
  ``duplicate-property``, ``over-receive-maximum`` (5.0: a copy one beyond the client's
  Receive Maximum [MQTT-3.3.4-9]), ``alias-across-connections`` (5.0: an alias set on one
  connection, used alone on the next [MQTT-3.3.2-7]; needs ``--use-aliases``).

A case is judged :data:`OBSERVE` seconds after it was sent, or when its connection ends,
from the connection's trace (the probe's evidence format).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pubproof.model.editions import Edition
from pubproof.probe.checks50_wire import ACK_BUILDS, alias, publish50_bytes
from pubproof.probe.clients import checks50_wire, checks_wire
from pubproof.probe.clients.judge import ClientView, case_findings
from pubproof.probe.serve.connection import Connection
from pubproof.probe.serve.tricks import Tricks
from pubproof.reference.codec import encode
from pubproof.reference.jsonform import to_p
from pubproof.reference.packets import Packet, Publish, PubRec, PubRel
from pubproof.reference.properties import AckProperties
from pubproof.reference.session50 import Session50

V50 = Edition.V50
#: seconds the client has to close after a case before it is judged
OBSERVE = 1.5
#: the identifier of ``pubrel-unknown``'s PUBREL (the one probe-client uses)
UNKNOWN_ID = 4242
#: the 5.0 PUBLISH property identifiers the cases duplicate (Table 2-4)
PAYLOAD_FORMAT_INDICATOR = 0x01

PROVOCATIONS: Mapping[str, str] = MappingProxyType({
    "drop-before-ack": "a client's first QoS 1 or 2 PUBLISH is never answered: the "
    "connection drops (the client must re-send it with DUP 1 on a resumed session only)",
    "refuse-publish": "5.0: PUBACK or PUBREC 0x80 to a client's first QoS 1 or 2 message "
    "(it must never re-send it)",
    "forget-sessions": "Session Present 0 whatever the CONNECT asked (the client must re-send "
    "nothing of the session)",
    "qos2-duplicate": "each QoS 2 copy sent again with DUP 1 before its PUBREL (answered "
    "PUBREC, delivered once)",
    "qos1-duplicate": "each QoS 1 copy sent twice, the second with DUP 1 (each acknowledged)",
    "pubrel-unknown": "after CONNACK, a PUBREL for an identifier the client does not hold "
    "(it owes PUBCOMP)",
    "resend-dup0": "a resumed session's re-sent PUBLISH with DUP 0 (the broker breaks "
    "MQTT-3.3.1-1)",
})  # fmt: skip
OWN_CASES: Mapping[str, str] = MappingProxyType({
    "alias-above-maximum": "5.0: a copy with a Topic Alias one above the client's Topic "
    "Alias Maximum (it must DISCONNECT 0x94)",
    "duplicate-property": "5.0: a copy with its Payload Format Indicator twice (a Malformed "
    "Packet: DISCONNECT 0x81)",
    "over-receive-maximum": "5.0: a QoS 1 copy one beyond the client's Receive Maximum (it "
    "must DISCONNECT 0x93)",
    "alias-across-connections": "5.0: a Topic Alias set on one connection, used alone on "
    "the next (it must DISCONNECT 0x82; with --use-aliases)",
})  # fmt: skip


def _wire_cases() -> dict[str, str]:
    cases = {cid: "a wire case of probe-client (3.1, 3.1.1)" for cid in checks_wire.RECEIVE_CASES}
    cases |= {cid: "a wire case of probe-client (3.1, 3.1.1)" for cid in checks_wire.ACK_CASES}
    cases |= {cid: "a wire case of probe-client (5.0)" for cid in checks50_wire.RECEIVE_CASES}
    cases |= {cid: "a wire case of probe-client (5.0)" for cid in ACK_BUILDS}
    return cases


#: every name ``--misbehave`` takes, with what it does
MISBEHAVIOURS: Mapping[str, str] = MappingProxyType(
    {**PROVOCATIONS, **OWN_CASES, **_wire_cases()}
)


def _topic_of(topic_filter: str) -> str:
    """A topic name a topic filter matches (its wildcards made concrete)."""
    if topic_filter.startswith("$share/"):
        topic_filter = topic_filter.split("/", 2)[2] if topic_filter.count("/") >= 2 else "t"
    levels = ["pubproof" if level in ("+", "#") else level for level in topic_filter.split("/")]
    return "/".join(levels) or "pubproof"


class Misbehave(Tricks):
    """The misbehaviours asked for, by name (see the module docstring)."""

    def __init__(self, names: Sequence[str]) -> None:
        unknown = [n for n in names if n not in MISBEHAVIOURS]
        if unknown:
            raise ValueError(f"unknown misbehaviour: {', '.join(unknown)}")
        self.names = frozenset(names)
        self.done: set[tuple[str, str]] = set()  # (name, client id or connection) done once
        self.cases: dict[str, tuple[float, Connection]] = {}  # connection -> case sent at
        self.aliased: dict[str, tuple[str, int]] = {}  # client id -> (topic, alias) set

    # -- helpers ---------------------------------------------------------------------------

    def _once(self, name: str, key: str) -> bool:
        """Whether ``name`` is asked for and not yet done for ``key``."""
        if name not in self.names or (name, key) in self.done:
            return False
        self.done.add((name, key))
        return True

    def _case(self, conn: Connection, data: bytes) -> None:
        self.broker.send_case(conn, data)
        self.cases[conn.name] = (self.broker.now, conn)

    def _send(self, conn: Connection, packet: Packet) -> None:
        data = encode(packet, edition=conn.edition or V50, readings=conn.readings or None)
        self.broker.send_raw(conn, data, kind=packet.type_name, fields=dict(to_p(packet)))

    def _ack_case(self, conn: Connection, kind: str) -> Callable[[int], bytes] | None:
        """The acknowledgement case asked for that answers with ``kind``, once per
        connection."""
        table: Mapping[str, tuple[str, Callable[[int], bytes]]] = (
            ACK_BUILDS if conn.v50 else checks_wire.ACK_CASES
        )
        for name in sorted(self.names):
            found = table.get(name)
            if found is not None and found[0] == kind and self._once(name, conn.name):
                return found[1]
        return None

    # -- the hooks --------------------------------------------------------------------------

    def hold(self, conn: Connection, packet: Packet) -> bool:
        client = conn.client_id
        if isinstance(packet, Publish) and packet.qos and not packet.dup:
            case = self._ack_case(conn, "PUBACK" if packet.qos == 1 else "PUBREC")
            if case is not None and packet.packet_id is not None:
                self._case(conn, case(packet.packet_id))
                return True
            if self._once("drop-before-ack", client):
                self.broker.drop(conn, "drop-before-ack: the PUBLISH never answered")
                return True
        elif isinstance(packet, PubRec) and not packet.reason_code:
            case = self._ack_case(conn, "PUBREL")
            if case is not None:
                self._case(conn, case(packet.packet_id))
                return True
            if "qos2-duplicate" in self.names and conn.session is not None:
                flow = conn.session.flows.in_flight.get(packet.packet_id)
                if flow is not None and isinstance(flow[1], Publish) and not flow[1].dup:
                    self._send(conn, dataclasses.replace(flow[1], dup=True))
        elif isinstance(packet, PubRel):
            case = self._ack_case(conn, "PUBCOMP")
            if case is not None:
                self._case(conn, case(packet.packet_id))
                return True
        return False

    def refuse(self, conn: Connection, packet: Publish) -> int:
        if packet.qos and not packet.dup and self._once("refuse-publish", conn.client_id):
            return 0x80
        return 0

    def forget(self, conn: Connection) -> bool:
        return "forget-sessions" in self.names

    def outgoing(self, conn: Connection, packet: Publish) -> bytes | None:
        names = self.names
        if packet.dup and "resend-dup0" in names:
            self._send(conn, dataclasses.replace(packet, dup=False))
            return b""
        if conn.v50 and self._own_case(conn, packet):
            return b""
        if packet.qos == 1 and not packet.dup and "qos1-duplicate" in names:
            self._send(conn, packet)
            self._send(conn, dataclasses.replace(packet, dup=True))
            return b""
        return None

    def _own_case(self, conn: Connection, packet: Publish) -> bool:
        """The 5.0 cases of serve's own, sent for the copy ``packet`` (True: it is sent)."""
        declared = conn.client_declared
        topic = packet.topic.encode()
        if self._once("alias-above-maximum", conn.name):
            props = alias(declared.topic_alias_maximum + 1)
            self._case(conn, publish50_bytes(0x30, topic, properties=props, payload=b"alias"))
            return True
        if self._once("duplicate-property", conn.name):
            twice = bytes((PAYLOAD_FORMAT_INDICATOR, 0)) * 2
            self._case(conn, publish50_bytes(0x30, topic, properties=twice, payload=b"twice"))
            return True
        session = conn.session
        flows = session.flows if session is not None else None
        if "alias-across-connections" in self.names and packet.properties is not None:
            set_alias = packet.properties.topic_alias
            if set_alias is not None and packet.topic:
                self.aliased.setdefault(conn.client_id, (packet.topic, set_alias))
        if (
            packet.qos
            and isinstance(flows, Session50)
            and flows.quota == 0
            and self._once("over-receive-maximum", conn.name)
        ):
            # the copy takes the last unit of the client's quota; one more goes anyway
            self._send(conn, packet)
            used = {*flows.in_flight, packet.packet_id or 0}
            extra = Publish(topic=packet.topic, payload=b"one too many", qos=1,
                            packet_id=max(used) % 65535 + 1, properties=packet.properties)
            self._case(conn, self._encode(conn, extra))
            return True
        return False

    def _encode(self, conn: Connection, packet: Publish) -> bytes:
        return encode(packet, edition=conn.edition or V50, readings=conn.readings or None)

    def connected(self, conn: Connection) -> None:
        if self._once("pubrel-unknown", conn.name):
            props = AckProperties() if conn.v50 else None
            self._send(conn, PubRel(packet_id=UNKNOWN_ID, properties=props))
        seen = self.aliased.get(conn.client_id)
        if seen is not None and conn.v50 and self._once("alias-across-connections", conn.name):
            _, number = seen
            self._case(conn, publish50_bytes(0x30, b"", properties=alias(number),
                                             payload=b"carried"))  # fmt: skip

    def subscribed(self, conn: Connection) -> None:
        session = conn.session
        if session is None or not session.subscriptions:
            return
        topic = _topic_of(next(iter(session.subscriptions)))
        for name in sorted(self.names):
            if conn.v50:
                build50 = checks50_wire.RECEIVE_CASES.get(name)
                if build50 is not None and self._once(name, conn.name):
                    self._case(conn, build50(topic, conn.client_declared))
                    return
            else:
                build = checks_wire.RECEIVE_CASES.get(name)
                if build is not None and self._once(name, conn.name):
                    self._case(conn, build(topic))
                    return

    # -- the judgement of the cases -------------------------------------------------------------

    def tick(self, now: float) -> None:
        for name, (sent, conn) in list(self.cases.items()):
            if now - sent >= OBSERVE:
                self._judge(name, conn)

    def ended(self, conn: Connection) -> None:
        if conn.name in self.cases:
            self._judge(conn.name, conn)

    def _judge(self, name: str, conn: Connection) -> None:
        """The client's reaction to the case on ``conn``, judged as probe-client judges it."""
        del self.cases[name]
        broker = self.broker
        entries: list[dict[str, Any]] = list(
            conn.trace.entries(lambda data, d: broker.describe(data, d, conn))
        )
        view = ClientView(entries, conn.edition or V50, conn.readings)
        for finding in case_findings(view):
            broker.found(conn, finding, conn.trace.case[1] if conn.trace.case else b"")
        broker.flush()


def misbehaviour(names: Sequence[str]) -> Tricks:
    """The tricks ``names`` ask for (none: the reference, :class:`Tricks`)."""
    return Misbehave(names) if names else Tricks()


__all__ = ["MISBEHAVIOURS", "Misbehave", "misbehaviour"]
