"""PUBLISH and its acknowledgements through the broker: each one a client sends judged and
answered, each copy the distribution owes sent within the client's limits.

Rules / theory of operation
---------------------------
In: the connection's reference decoder (the edition, the readings, 5.0 the limits the
broker declared) reads the packet; a packet it rejects is the wire judge's finding (the
rule it names, the DISCONNECT Reason Code of that rule), and the broker closes the
connection, unless ``--lenient`` and a named reading accepts the packet
(:func:`pubproof.judge.close.expectation`'s alternatives): then the connection goes on
under that reading. A packet the codec accepts is fed to the client's link judge, whose
findings are reported; in 5.0 a packet its receiver must close for (the judge's
``offence``: Receive Maximum exceeded, QoS above Maximum QoS, RETAIN without Retain
Available) closes the connection with the offence's Reason Code. Otherwise the reference
session answers it (PUBACK, PUBREC, PUBCOMP, PUBREL) and hands on the messages the broker
takes ownership of (QoS 0 on receipt, QoS 1 with its PUBACK, QoS 2 with its PUBREC:
Method B), which the distribution engine owes to the matching sessions.

Out: a session's owed copies go in order [MQTT-4.6.0-6] while the client's limits let
them: its Receive Maximum (5.0: the reference session's send quota, [MQTT-3.3.4-9]), the
broker's window of copies under way (3.x), and what its socket has taken (a client that
does not read stops getting copies until it does; the engine's bound keeps its queue).
A copy is started in the engine (which gives its Message Expiry Interval, reduced by the
wait [MQTT-3.3.2-6]), given a packet identifier by the reference session, encoded and
written; a 5.0 copy larger than the client's Maximum Packet Size is discarded unsent
[MQTT-3.1.2-25]. The copy's flow completes in the engine when the client's PUBACK or
PUBCOMP (or 5.0 error PUBREC) ends it in the reference session.
"""

from __future__ import annotations

from typing import Any

from pubproof.judge.close import expectation
from pubproof.judge.distribution_events import C2S
from pubproof.judge.findings import TOLERATED, VIOLATION, Finding, Source
from pubproof.model.editions import Edition
from pubproof.probe.serve.connection import ClientSession, Connection
from pubproof.probe.serve.engine import Copy, PublishOutcome, message_properties, publication
from pubproof.probe.serve.host import Host
from pubproof.probe.serve.judging import at, client_findings
from pubproof.reference.codec import Decoder, encode
from pubproof.reference.errors import InvalidPacket, ProtocolError
from pubproof.reference.jsonform import to_p
from pubproof.reference.packets import Packet, PubAck, PubComp, Publish, PubRec, PubRel
from pubproof.reference.properties import PublishProperties
from pubproof.reference.session import Deliver, Judgement, Send
from pubproof.reference.session50 import Disconnect, Session50, Wait

V50 = Edition.V50


# -- in ---------------------------------------------------------------------------------------


def incoming(broker: Host, conn: Connection, frame: bytes) -> None:
    """A PUBLISH, PUBACK, PUBREC, PUBREL or PUBCOMP from the client of ``conn``."""
    decoder = conn.decoder
    session = conn.session
    assert decoder is not None and session is not None
    decoder.feed(frame)
    try:
        packet = decoder.next_packet()
    except ProtocolError as error:
        _wire_failure(broker, conn, frame, error)
        return
    assert isinstance(packet, Publish | PubAck | PubRec | PubRel | PubComp)
    fields: dict[str, Any] = to_p(packet)  # type: ignore[assignment]
    kind = packet.type_name
    offence = None
    if broker.settings.judges and not conn.case:
        found: list[Finding] = []
        judge = session.judge
        judge.judged_sent(kind, fields, found, at(broker.now))
        judge.deliveries.clear()  # the model peer's: not kept by a broker
        for finding in client_findings(found):
            broker.found(conn, finding)
        broker.feed_judge(conn, C2S, fields)
        offence = getattr(judge, "offence", None)
    if offence is not None:
        # 5.0: its receiver must close (Receive Maximum, Maximum QoS, Retain Available)
        broker.close_for(conn, offence.reason_code, f"{offence.rule}: {offence.message}", "flow")
        return
    broker.on_packet(conn, packet)
    if broker.tricks.hold(conn, packet):
        return
    answer(broker, conn, packet)


def answer(broker: Host, conn: Connection, packet: Packet) -> None:
    """The client's session answers a PUBLISH-family packet the judges passed."""
    session = conn.session
    assert session is not None
    if isinstance(packet, Publish):
        _publish_in(broker, conn, session, packet)
    elif isinstance(packet, PubRel):
        _answer(broker, conn, session, session.flows.receive(packet))
    else:
        assert isinstance(packet, PubAck | PubRec | PubComp)
        _ack_in(broker, conn, session, packet)
    broker.tricks.answered(conn, packet)


def _wire_failure(broker: Host, conn: Connection, frame: bytes, error: ProtocolError) -> None:
    """The codec rejects the packet: the wire judge's finding, then the close (or, with
    ``--lenient``, the reading under which the packet is one)."""
    where = f" (byte {error.offset})" if error.offset is not None else ""
    limits = broker.settings.limits() if conn.v50 else None
    edition = conn.edition
    assert edition is not None
    if broker.settings.lenient:
        exp = expectation(frame, edition, conn.readings, limits)
        keep = [(name, value) for name, value, close in exp.alternatives if not close]
        if keep:
            name, value = keep[0]
            message = f"{error.message}{where}: read on under the reading {name}={value} " \
                "(--lenient)"  # fmt: skip
            broker.found(conn, Finding(verdict=TOLERATED, rules=(error.rule,), message=message,
                                       source=Source.WIRE, role="client"))  # fmt: skip
            conn.readings = {**conn.readings, name: value}
            conn.decoder = Decoder(edition=edition, readings=conn.readings, limits=limits)
            incoming(broker, conn, frame)
            return
    broker.found(conn, Finding(verdict=VIOLATION, rules=(error.rule,),
                               message=f"{error.message}{where}", source=Source.WIRE,
                               role="client"))  # fmt: skip
    broker.close_for(conn, error.reason_code, f"{error.rule}: {error.message}", "wire")
    if conn.alive:  # a trick kept it open: a decoder that has failed stays failed
        conn.decoder = Decoder(edition=edition, readings=conn.readings or None, limits=limits)


def _publish_in(broker: Host, conn: Connection, session: ClientSession, packet: Publish) -> None:
    flows = session.flows
    if isinstance(flows, Session50):
        outputs: list[Any] = list(flows.receive(packet, refuse=broker.tricks.refuse(conn, packet)))
    else:
        outputs = list(flows.receive(packet))
    delivered: list[Publish] = [o.message for o in outputs if isinstance(o, Deliver)]
    for output in outputs:
        if isinstance(output, Send):
            send_packet(broker, conn, output.packet)
        elif isinstance(output, Disconnect):
            # the reference session closes where the link judge found no offence: say so
            message = f"the reference session closes for {output.rule} (0x{output.reason_code:02X})"
            broker.found(conn, Finding(verdict=VIOLATION, rules=(output.rule,), message=message,
                                       source=Source.LINK, role="client"))  # fmt: skip
            broker.close_for(conn, output.reason_code, message, "flow")
            return
    for publish in delivered:
        own(broker, session.client_id, publish)


def own(broker: Host, publisher: str, message: Publish) -> None:
    """The broker took ownership of ``message`` (from the client ``publisher``)."""
    try:
        outcome = broker.engine.publish(publication(publisher, message))
    except ValueError as error:  # a topic name the engine refuses after the codec took it
        broker.reporter.notice("engine-refused", f"{publisher}: {error}")
        return
    distribute(broker, outcome)


def distribute(broker: Host, outcome: PublishOutcome) -> None:
    """The copies a message made owed go out to the connected sessions."""
    broker.owned(outcome)
    engine = broker.engine
    if engine.dropped > engine.announced:
        # said once (a notice is printed at its first time), counted in the summary
        engine.announced = engine.dropped
        broker.reporter.notice("dropped", f"a session owed more than --max-queued "
                               f"({engine.max_queued}) copies: the oldest dropped")
    done: set[str] = set()
    for copy in (*outcome.copies, *outcome.optional):
        if copy.client_id in done:
            continue
        done.add(copy.client_id)
        target = broker.sessions.get(copy.client_id)
        if target is not None:
            drain(broker, target)


def _ack_in(
    broker: Host, conn: Connection, session: ClientSession, packet: PubAck | PubRec | PubComp
) -> None:
    """The client's answer to a copy: the flow goes on (PUBREL) or ends, and then the
    engine completes the copy and the next ones may go."""
    outputs: list[Any] = list(session.flows.receive(packet))
    stray = any(isinstance(o, Judgement) for o in outputs)
    # a PUBREC ends the flow only with a 5.0 error code (no PUBREL then)
    ended = not outputs if isinstance(packet, PubRec) else not stray
    _answer(broker, conn, session, outputs)
    if ended:
        copy = session.inflight.pop(packet.packet_id, None)
        if copy is not None:
            broker.engine.complete(session.client_id, copy.copy_id, packet.reason_code)
            broker.completed(session, packet.packet_id)
        drain(broker, session)


def _answer(broker: Host, conn: Connection, session: ClientSession, outputs: list[Any]) -> None:
    for output in outputs:
        if isinstance(output, Send):
            send_packet(broker, conn, output.packet)


# -- out --------------------------------------------------------------------------------------


def send_packet(broker: Host, conn: Connection, packet: Packet) -> bool:
    """Encode a PUBLISH-family packet for ``conn`` and write it; False when the codec
    refuses it for the client's edition (a topic a 3.1 client cannot take, say)."""
    if isinstance(packet, Publish):
        instead = broker.tricks.outgoing(conn, packet)
        if instead is not None:  # a trick sent what goes in its place
            if instead:
                broker.send_raw(conn, instead, kind="PUBLISH")
            return True
    try:
        # readings None when they are the defaults: the codec's configuration is then
        # looked up, not resolved again for every packet
        data = encode(packet, edition=conn.edition or V50, readings=conn.readings or None)
    except InvalidPacket as error:
        broker.reporter.notice("unsendable", f"{conn.name}: a {packet.type_name} the codec "
                               f"refuses for MQTT {conn.edition}: {error}")  # fmt: skip
        return False
    fields: dict[str, Any] = to_p(packet)  # type: ignore[assignment]
    broker.send_raw(conn, data, kind=packet.type_name, fields=fields)
    return True


def resume(broker: Host, session: ClientSession, *, resume: bool) -> None:
    """A connection of ``session``: the reference session re-sends what was under way
    (resumed) or starts empty [MQTT-4.4.0-1]."""
    conn = session.conn
    assert conn is not None
    if not resume:
        session.inflight.clear()
    for output in session.flows.reconnect(resume=resume):
        if isinstance(output, Send):
            send_packet(broker, conn, output.packet)


def _properties(copy: Copy, expiry: int | None) -> PublishProperties:
    props = message_properties(copy.message)
    return PublishProperties(
        payload_format_indicator=props.payload_format_indicator,
        message_expiry_interval=expiry,
        response_topic=props.response_topic,
        correlation_data=props.correlation_data,
        user_properties=props.user_properties,
        subscription_identifiers=copy.subscription_identifiers,
        content_type=props.content_type,
    )


def drain(broker: Host, session: ClientSession) -> None:
    """Send ``session`` the copies it is owed, in order, while its limits let them go."""
    conn = session.conn
    if conn is None or not conn.open or conn.paused:
        return
    engine, flows = broker.engine, session.flows
    client_id = session.client_id
    v50 = isinstance(flows, Session50)
    window = broker.settings.max_inflight
    limit = broker.settings.write_buffer_limit
    largest = conn.client_declared.maximum_packet_size if v50 else None
    backlog = conn.wire.backlog()  # once: what this drain adds is in outbox_bytes
    for owed in engine.owed(client_id):
        if backlog + conn.outbox_bytes > limit:
            conn.paused = True
            broker.reporter.notice(f"slow-{conn.name}", f"{conn.name} ({client_id}) reads "
                                   f"slowly: copies wait (at most {engine.max_queued} kept)")
            break
        if owed.qos and len(session.inflight) >= window:
            break
        if owed.qos and isinstance(flows, Session50) and flows.quota <= 0:
            break
        copy, expiry = engine.send(client_id, owed.copy_id)
        payload = copy.message.publication.payload
        properties = _properties(copy, expiry) if v50 else None
        if largest is not None and _too_large(conn, copy, properties, largest):
            # [MQTT-3.1.2-25] "Where a Packet is too large to send, the Server MUST discard
            # it without sending it and then behave as if it had completed sending that
            # Application Message"
            if copy.qos:
                engine.complete(client_id, copy.copy_id)
            broker.reporter.notice("too-large", f"{client_id}: a copy over its Maximum "
                                   f"Packet Size {largest} discarded")  # fmt: skip
            continue
        if v50:
            assert isinstance(flows, Session50)
            outputs: list[Any] = flows.publish(copy.topic, payload, copy.qos, copy.retain,
                                               properties)  # fmt: skip
        else:
            outputs = list(flows.publish(copy.topic, payload, copy.qos, copy.retain))
        if not outputs or isinstance(outputs[0], Wait):
            if copy.qos:  # every packet identifier in use: cannot happen within the window
                engine.complete(client_id, copy.copy_id)
            break
        packet = outputs[0].packet
        if packet.packet_id is not None:
            session.inflight[packet.packet_id] = copy
        send_packet(broker, conn, packet)
        broker.sent(session, packet, copy)


def blocked(broker: Host, session: ClientSession) -> bool:
    """Whether the client's own limits hold back what ``session`` is owed: a socket it has
    not read, the window of copies under way, its Receive Maximum (5.0)."""
    conn = session.conn
    if conn is None or conn.paused or not broker.engine.owed(session.client_id):
        return conn is not None and conn.paused
    flows = session.flows
    quota = isinstance(flows, Session50) and flows.quota <= 0
    return quota or len(session.inflight) >= broker.settings.max_inflight


def _too_large(conn: Connection, copy: Copy, props: PublishProperties | None, largest: int) -> bool:
    probe = Publish(topic=copy.topic, payload=copy.message.publication.payload, qos=copy.qos,
                    packet_id=1 if copy.qos else None, retain=copy.retain, properties=props)
    return len(encode(probe, edition=conn.edition or V50, readings=conn.readings or None)) > largest
