"""The broker's answers to the packets around PUBLISH: CONNECT, SUBSCRIBE, UNSUBSCRIBE,
PINGREQ, DISCONNECT, AUTH, and the server's own packets sent by a client.

Rules / theory of operation
---------------------------
CONNECT (:mod:`.connect` reads it): a refusal is answered as its rule says (a CONNACK
with the code in the format the client reads, or a close); an accepted one connects the
session in the distribution engine (Clean Start, Session Expiry Interval within the
broker's bounds, a session already connected taken over: [MQTT-3.1.4-2], 5.0 DISCONNECT
0x8E to the connection that had it), answers CONNACK (Session Present only in 3.1.1 and
5.0 [MQTT-3.2.2-2]; 5.0 with what the broker declares), then the reference session
re-sends what was under way [MQTT-4.4.0-1] and the queued copies go out.

SUBSCRIBE and UNSUBSCRIBE: the fixed-header flags 0010 ([MQTT-3.8.1-1], [MQTT-3.10.1-1]),
a non-zero packet identifier ([MQTT-2.3.1-1]), each topic filter's options
(:func:`pubproof.model.subscriptions.options_from_byte` in 3.x), then the engine: its
codes go into SUBACK / UNSUBACK, or the rule it closes for is reported and the connection
closed. The retained messages a new subscription is owed go out after the SUBACK.

DISCONNECT: 3.x discards the will [MQTT-3.14.4-3]; 5.0 keeps it for Reason Code 0x04
(Disconnect with Will Message), and takes a Session Expiry Interval unless the CONNECT's
was 0 (then a non-zero one is a Protocol Error).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pubproof.judge import packets as P
from pubproof.judge import packets50
from pubproof.judge.distribution_events import C2S
from pubproof.judge.findings import VIOLATION, Finding, Source
from pubproof.judge.limits import declared
from pubproof.model.editions import READINGS, Edition
from pubproof.model.rules import RULES
from pubproof.model.subscriptions import OptionsProblem, RetainHandling, SubscriptionOptions
from pubproof.model.subscriptions import options_from_byte as options_of
from pubproof.probe.serve import flows
from pubproof.probe.serve import rules as S
from pubproof.probe.serve.connect import ConnectRequest, Refusal, read_connect
from pubproof.probe.serve.connection import ClientSession, Connection, State
from pubproof.probe.serve.host import Host
from pubproof.probe.serve.judging import at, client_judge
from pubproof.reference.codec import Decoder
from pubproof.reference.session import Method, Session
from pubproof.reference.session50 import Session50

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
SESSION_TAKEN_OVER = 0x8E
#: 3.x CleanSession 0: a session kept with no expiry
NEVER = 0xFFFF_FFFF
FAILURE = 0x80


def _body(frame: bytes, header: int) -> bytes:
    return frame[header:]


def _malformed(broker: Host, conn: Connection, fields: dict[str, Any]) -> bool:
    """A control packet that cannot be read: reported and closed (True)."""
    error = fields.get("error")
    if error is None:
        return False
    rule_id = error.get("rule")
    message = f"a malformed {fields.get('type')}: {error.get('message')}"
    if rule_id:
        message += f" [{rule_id}]"
    broker.refuse(conn, S.CONTROL_MALFORMED, message, source=Source.CODEC)
    return True


def _described(broker: Host, conn: Connection, frame: bytes, header: int) -> dict[str, Any]:
    edition = conn.edition if conn.edition is V50 else None
    fields = P.describe(frame[0], _body(frame, header), edition)
    broker.feed_judge(conn, C2S, fields)
    return fields


# -- CONNECT ---------------------------------------------------------------------------------


def on_connect(broker: Host, conn: Connection, frame: bytes, header: int) -> None:
    """A CONNECT."""
    if conn.state is State.OPEN:
        # [MQTT-3.1.0-2] "The Server MUST process a second CONNECT Packet sent from a Client
        # as a protocol violation and disconnect the Client"
        broker.refuse(conn, S.SECOND_CONNECT, "a second CONNECT on the connection",
                      source=Source.LINK)  # fmt: skip
        return
    got = read_connect(frame[0], _body(frame, header), broker.settings.editions)
    if isinstance(got, Refusal):
        _refused(broker, conn, got)
        return
    problem = _will_problem(broker, got)
    if problem is not None:
        conn.edition = got.edition
        _refused(broker, conn, problem)
        return
    _accept(broker, conn, got)


def _will_problem(broker: Host, request: ConnectRequest) -> Refusal | None:
    will, settings = request.will, broker.settings
    if will is None or request.edition is not V50:
        return None
    if will.qos > settings.maximum_qos:
        # [MQTT-3.2.2-12] a Will QoS the server does not support: refused (0x9B)
        rule, message = S.WILL_QOS, f"Will QoS {will.qos}, Maximum QoS {settings.maximum_qos}"
    elif will.retain and not settings.retain_available:
        rule, message = S.WILL_RETAIN, "Will Retain 1 and the broker has no retained messages"
    else:
        return None
    return Refusal(rule=rule, message=message, edition=V50, code=rule.reason_code,
                   answer_edition=V50, described=request.described)  # fmt: skip


def _refused(broker: Host, conn: Connection, refusal: Refusal) -> None:
    conn.edition = refusal.edition
    rule_id = refusal.rule.id_for(refusal.edition)
    if refusal.rule is S.PROTOCOL_LEVEL:
        # not the client's fault: the broker does not serve the edition it speaks
        broker.reporter.notice(f"edition-{conn.name}", f"{conn.name}: {refusal.message}: "
                               f"CONNACK 0x{refusal.code or 0:02X}")  # fmt: skip
    else:
        broker.found(conn, Finding(verdict=VIOLATION, rules=(rule_id,), message=refusal.message,
                                   source=Source.CODEC, role="client"))  # fmt: skip
    if refusal.code is not None:
        answer = refusal.answer_edition
        data = P.connack(session_present=False, return_code=refusal.code, edition=answer)
        broker.send_raw(conn, data, kind="CONNACK")
    broker.close(conn, f"{rule_id}: {refusal.message}")


def _readings(broker: Host, edition: Edition) -> dict[str, str]:
    """The wire readings of ``edition`` the broker was given (the codec takes only those)."""
    return {k: v for k, v in broker.settings.readings_for(edition).items() if k in READINGS}


def _accept(broker: Host, conn: Connection, request: ConnectRequest) -> None:
    settings = broker.settings
    edition = request.edition
    v50 = edition is V50
    conn.edition = edition
    conn.readings = _readings(broker, edition)
    conn.decoder = Decoder(edition=edition, readings=conn.readings,
                           limits=settings.limits() if v50 else None)  # fmt: skip
    properties: dict[str, Any] = settings.connack_properties() if v50 else {}
    client_id = request.client_id
    if not client_id:
        # 3.1.1 [MQTT-3.1.3-6] "the Server MUST assign a unique ClientId to that Client";
        # 5.0 returns it in CONNACK (Assigned Client Identifier)
        client_id = broker.assign_client_id()
        if v50:
            properties["assigned_client_identifier"] = client_id
    # the judges see the identifier the broker uses (an assigned one in place of "")
    described = {**request.described, "client_id": client_id}
    request = conn.request = dataclasses.replace(
        request, client_id=client_id, described=described
    )
    asked = request.session_expiry_interval
    expiry = settings.session_expiry(asked) if v50 else 0
    if v50 and expiry != asked:
        properties["session_expiry_interval"] = expiry  # 3.2.2.3.2: the server's own value
    if v50:
        conn.client_declared = declared(request.properties)
    keep_alive = request.keep_alive
    if v50 and settings.server_keep_alive is not None:
        keep_alive = settings.server_keep_alive
    conn.keep_alive = keep_alive
    old = broker.sessions.get(client_id)
    if old is not None and old.conn is not None and old.conn is not conn:
        _take_over(broker, old, request)
    clean = request.clean or broker.tricks.forget(conn)
    outcome = broker.engine.connect(client_id, edition, clean=clean, expiry=expiry)
    present = outcome.session_present and old is not None
    if old is not None and not present:
        broker.session_ended(client_id)  # Clean Start 1 discarded it, or it had expired
    session = _session(broker, conn, client_id, edition, old if present else None)
    session.persistent = expiry > 0 if v50 else not request.clean
    session.expiry = expiry if v50 else (0 if request.clean else NEVER)
    if old is not None and old.will_due is not None:
        # 5.0 [MQTT-3.1.3-9]: a new connection before the Will Delay Interval passed: no
        # will, unless the old session ended (Clean Start 1), which sends it now
        _, will = old.will_due
        old.will_due = None
        if not present:
            broker.publish_will(client_id, old.edition, will)
    conn.session = session
    session.conn = conn
    conn.will = request.will
    conn.state = State.OPEN
    broker.reporter.tally(client_id).connections += 1
    if broker.settings.judges:
        session.judge.peer_sent("CONNECT", request.described, at(broker.now))
    broker.feed_judge(conn, C2S, request.described)
    shown = present and edition is not V31  # 3.1 has no Session Present flag
    data = P.connack(session_present=shown, return_code=0, edition=edition,
                     properties=properties or None if v50 else None)  # fmt: skip
    broker.send_raw(conn, data, kind="CONNACK")
    flows.resume(broker, session, resume=present)
    broker.connected(session)
    flows.drain(broker, session)
    broker.tricks.connected(conn)


def _take_over(broker: Host, old: ClientSession, request: ConnectRequest) -> None:
    """[MQTT-3.1.4-2] "If the ClientId represents a Client already connected to the Server
    then the Server MUST disconnect the existing Client" (5.0: DISCONNECT 0x8E)."""
    previous = old.conn
    assert previous is not None
    if previous.v50 and previous.open:
        broker.send_raw(previous, P.disconnect(SESSION_TAKEN_OVER), kind="DISCONNECT")
    will, previous.will = previous.will, None
    old.conn = None
    broker.close(previous, "its session was taken over")
    if will is not None:
        delayed = old.v50 and will.delay and not request.clean
        if not delayed:  # a delayed will of a session that goes on is never sent
            broker.publish_will(old.client_id, old.edition, will)


def _session(
    broker: Host, conn: Connection, client_id: str, edition: Edition, kept: ClientSession | None
) -> ClientSession:
    """The session record: the one kept (Session Present) or a new one."""
    settings = broker.settings
    if kept is not None and kept.edition is edition:
        session = kept
    else:
        if kept is not None:
            # the client came back in another edition: its flows cannot carry over
            for copy in kept.inflight.values():
                broker.engine.complete(client_id, copy.copy_id)
        flows_: Session | Session50 = Session50(method=Method.B) if edition is V50 \
            else Session(method=Method.B)  # fmt: skip
        judge = client_judge(client_id, edition)
        session = ClientSession(client_id=client_id, edition=edition, flows=flows_, judge=judge)
    broker.sessions[client_id] = session
    if isinstance(session.flows, Session50):
        client = conn.client_declared
        session.flows.receive_maximum = settings.receive_maximum or 65_535
        session.flows.topic_alias_maximum = settings.topic_alias_maximum
        session.flows.peer_receive_maximum = client.receive_maximum
        alias = client.topic_alias_maximum if settings.use_aliases else 0
        session.flows.peer_topic_alias_maximum = alias
    return session


# -- SUBSCRIBE and UNSUBSCRIBE ----------------------------------------------------------------


def _closed_by_engine(broker: Host, conn: Connection, rule_id: str, what: str) -> None:
    """The engine says the broker closes the connection for ``rule_id``."""
    try:
        code = RULES.by_id(rule_id, conn.edition).reason_code_in(V50)
    except KeyError:
        code = S.PROTOCOL_ERROR
    broker.found(conn, Finding(verdict=VIOLATION, rules=(rule_id,), message=what,
                               source=Source.LINK, role="client"))  # fmt: skip
    broker.close_for(conn, code, f"{rule_id}: {what}")


def on_subscribe(broker: Host, conn: Connection, frame: bytes, header: int) -> None:
    """A SUBSCRIBE."""
    if frame[0] & 0x0F != P.SUBSCRIBE_FLAGS:
        broker.refuse(conn, S.SUBSCRIBE_FLAGS, f"SUBSCRIBE flags {frame[0] & 0x0F:04b}",
                      source=Source.CODEC)  # fmt: skip
        return
    fields = _described(broker, conn, frame, header)
    if _malformed(broker, conn, fields):
        return
    session = conn.session
    assert session is not None
    packet_id = int(fields["packet_id"])
    if not packet_id:
        broker.refuse(conn, S.PACKET_ID, "SUBSCRIBE with packet identifier 0",
                      source=Source.CODEC)  # fmt: skip
        return
    requests: list[tuple[str, SubscriptionOptions]] = []
    for item in fields.get("subscriptions", []):
        options: SubscriptionOptions | OptionsProblem
        if conn.v50:
            options = SubscriptionOptions(
                qos=int(item["qos"]), no_local=bool(item["no_local"]),
                retain_as_published=bool(item["retain_as_published"]),
                retain_handling=RetainHandling(int(item["retain_handling"])),
            )  # fmt: skip
        else:
            options = options_of(int(item["qos"]), conn.edition or V311)
        if isinstance(options, OptionsProblem):
            _closed_by_engine(broker, conn, options.rule_id, options.message)
            return
        requests.append((str(item["filter"]), options))
    identifier = fields.get("subscription_identifier")
    outcome = broker.engine.subscribe(
        session.client_id, packet_id, requests, int(identifier) if identifier is not None else None
    )
    if outcome.closed is not None:
        _closed_by_engine(broker, conn, outcome.closed, "the SUBSCRIBE is refused")
        return
    ident = int(identifier) if identifier is not None else None
    for (topic_filter, options), each in zip(requests, outcome.filters, strict=True):
        if each.code <= 2:  # granted: the subscription the store keeps
            session.subscriptions[topic_filter] = (options, ident)
    codes = list(outcome.codes)
    if conn.v50:
        data = packets50.suback(packet_id, codes)
    else:
        # a 3.x client reads 0x80 as the one failure code (the 5.0 engine of --edition any
        # names the reason)
        data = P.suback(packet_id, [c if c <= 2 else FAILURE for c in codes])
    broker.send_raw(conn, data, kind="SUBACK")
    broker.subscribed(session)
    flows.drain(broker, session)
    broker.tricks.subscribed(conn)


def on_unsubscribe(broker: Host, conn: Connection, frame: bytes, header: int) -> None:
    """An UNSUBSCRIBE."""
    if frame[0] & 0x0F != P.FLAGS_0010:
        broker.refuse(conn, S.UNSUBSCRIBE_FLAGS, f"UNSUBSCRIBE flags {frame[0] & 0x0F:04b}",
                      source=Source.CODEC)  # fmt: skip
        return
    fields = _described(broker, conn, frame, header)
    if _malformed(broker, conn, fields):
        return
    session = conn.session
    assert session is not None
    packet_id = int(fields["packet_id"])
    if not packet_id:
        broker.refuse(conn, S.PACKET_ID, "UNSUBSCRIBE with packet identifier 0",
                      source=Source.CODEC)  # fmt: skip
        return
    filters = [str(f) for f in fields.get("filters", [])]
    outcome = broker.engine.unsubscribe(session.client_id, packet_id, filters)
    if outcome.closed is not None:
        _closed_by_engine(broker, conn, outcome.closed, "the UNSUBSCRIBE is refused")
        return
    for topic_filter in outcome.deleted:
        session.subscriptions.pop(topic_filter, None)
    if conn.v50:
        data = packets50.unsuback(packet_id, list(outcome.codes))
    else:
        data = bytes((P.T.UNSUBACK << 4, 2)) + packet_id.to_bytes(2, "big")
    broker.send_raw(conn, data, kind="UNSUBACK")
    broker.subscribed(session)


# -- PINGREQ, DISCONNECT, AUTH, and what only a server sends ------------------------------------


def _flags_zero(broker: Host, conn: Connection, frame: bytes) -> bool:
    if frame[0] & 0x0F:
        name = broker.type_name(frame)
        broker.refuse(conn, S.FLAGS, f"{name} flags {frame[0] & 0x0F:04b} (reserved: 0000)",
                      source=Source.CODEC)  # fmt: skip
        return False
    return True


def on_pingreq(broker: Host, conn: Connection, frame: bytes, header: int) -> None:
    """A PINGREQ: PINGRESP."""
    if not _flags_zero(broker, conn, frame):
        return
    fields = _described(broker, conn, frame, header)
    if _malformed(broker, conn, fields):
        return
    broker.send_raw(conn, P.PINGRESP, kind="PINGRESP")


def on_disconnect(broker: Host, conn: Connection, frame: bytes, header: int) -> None:
    """A DISCONNECT: the client closes the connection."""
    if not _flags_zero(broker, conn, frame):
        return
    fields = _described(broker, conn, frame, header)
    if _malformed(broker, conn, fields):
        return
    if conn.v50:
        code = int(fields.get("reason_code", 0))
        expiry = (fields.get("properties") or {}).get("session_expiry_interval")
        request = conn.request
        if expiry is not None and request is not None:
            if request.session_expiry_interval == 0 and expiry != 0:
                broker.refuse(conn, S.DISCONNECT_EXPIRY,
                              f"DISCONNECT with Session Expiry Interval {expiry}, CONNECT had 0",
                              source=Source.LINK)  # fmt: skip
                return
            conn.disconnect_expiry = broker.settings.session_expiry(int(expiry))
        if code != 0x04:  # 0x04: Disconnect with Will Message
            conn.will = None
    else:
        # [MQTT-3.14.4-3] "On receipt of DISCONNECT the Server MUST discard any Will Message
        # associated with the current connection without publishing it"
        conn.will = None
    broker.close(conn, "the client's DISCONNECT", by_client=True)


def on_auth(broker: Host, conn: Connection, frame: bytes, header: int) -> None:
    """Type 15: AUTH in 5.0 (serve has no enhanced authentication), reserved before."""
    if not conn.v50:
        broker.refuse(conn, S.RESERVED_TYPE, "packet type 15 is reserved before MQTT 5.0",
                      source=Source.CODEC)  # fmt: skip
        return
    _described(broker, conn, frame, header)
    broker.refuse(conn, S.AUTH_PACKET, "AUTH, and the CONNECT named no Authentication Method",
                  source=Source.LINK)  # fmt: skip


def on_server_packet(broker: Host, conn: Connection, frame: bytes, header: int) -> None:
    """CONNACK, SUBACK, UNSUBACK or PINGRESP from a client."""
    broker.refuse(conn, S.SERVER_PACKET, f"the client sent {broker.type_name(frame)}",
                  source=Source.LINK)  # fmt: skip
