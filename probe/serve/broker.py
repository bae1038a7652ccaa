"""The broker, sans-IO: bytes in from each connection, bytes out to any, every packet
judged, and what the standard says a server does with it.

Rules / theory of operation
---------------------------
A transport (:mod:`pubproof.probe.serve.server`, or a test) tells the broker about its
connections: :meth:`Broker.open` when one is accepted, :meth:`Broker.feed` with the bytes
a read brought, :meth:`Broker.lost` when the connection ended, :meth:`Broker.writable`
when a client that read slowly has taken what was written, :meth:`Broker.tick` now and
then (keep alive, Will Delay, Message and Session Expiry), and :meth:`Broker.shutdown` at
the end. Time is the transport's: seconds since the broker started, passed in.

Each read is cut into packets by their fixed headers (3.1.1 section 2.2.3: at most four
bytes of Remaining Length, else the stream cannot be cut and the connection closes). Each
packet is recorded in its connection's trace and dispatched: the PUBLISH family to
:mod:`.flows` (the reference codec, the link judge, the reference session, the
distribution), the other packets to :mod:`.control`. What the broker sends goes to each
connection's outbox; after the whole read is taken in, the store commits and only then are
the outboxes written: no acknowledgement leaves before what it acknowledges is kept.

A violation is reported (:mod:`.live`) and the broker does what the standard says the
server does: it closes the connection ([MQTT-4.8.0-1]; 5.0 [MQTT-4.13.1-1], after
DISCONNECT with the Reason Code the rule names: ``reason_code_in``), and a will is
published when the connection ends without the DISCONNECT that discards it (3.1.1 section
3.1.2.5: "The Server closes the Network Connection because of a protocol error").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from pubproof.judge import packets as control_packets
from pubproof.judge.distribution_events import C2S, S2C
from pubproof.judge.findings import VIOLATION, Finding, Source
from pubproof.judge.packets import PacketType
from pubproof.model.editions import Edition
from pubproof.model.messages import Properties, Publication
from pubproof.probe.frames import describe_bytes
from pubproof.probe.serve import control, flows
from pubproof.probe.serve import rules as S
from pubproof.probe.serve.connect import Will
from pubproof.probe.serve.connection import ClientSession, Connection, State, Wire
from pubproof.probe.serve.engine import Copy, Engine, PublishOutcome
from pubproof.probe.serve.judging import SelfJudge, at, owed_at_close
from pubproof.probe.serve.live import FROM_CLIENT, KEPT_FINDINGS, TO_CLIENT, LiveFinding, Reporter
from pubproof.probe.serve.rules import ServeRule
from pubproof.probe.serve.settings import ServeSettings
from pubproof.probe.serve.tricks import Tricks
from pubproof.reference.packets import Packet, Publish

T = PacketType
V50 = Edition.V50
#: the Remaining Length takes at most four bytes (3.1.1 section 2.2.3)
RL_BYTES = 4
#: "SERVER" in findings about the broker itself
SERVER = "(server)"


class Broker:
    """One broker (see the module docstring)."""

    def __init__(
        self, settings: ServeSettings, reporter: Reporter | None = None,
        tricks: Tricks | None = None,
    ) -> None:  # fmt: skip
        self.settings = settings
        self.reporter = reporter or Reporter(quiet=True)
        self.engine = Engine(
            settings.edition, settings.readings_for(settings.edition or V50),
            settings.server_config(), max_queued=settings.max_queued,
        )  # fmt: skip
        self.sessions: dict[str, ClientSession] = {}
        self.connections: dict[str, Connection] = {}
        self.judge = SelfJudge(
            self.engine.edition, settings.readings_for(self.engine.edition),
            settings.server_config(), limit=settings.judge_messages if settings.judges else 0,
            mixed=settings.edition is None,
        )  # fmt: skip
        self.now = 0.0
        self._names = itertools.count(1)
        self._assigned = itertools.count(1)
        self._touched: dict[str, Connection] = {}
        #: called after every read is taken in, before the outboxes are written
        self.before_flush: Callable[[], None] | None = None
        #: where the broker misbehaves on purpose (:mod:`.tricks`; none by default)
        self.tricks = tricks or Tricks()
        self.tricks.bind(self)
        self.stopped = False

    # -- the transport's calls ---------------------------------------------------------------

    def open(self, wire: Wire, peer: str, now: float) -> Connection:
        """A connection was accepted."""
        self._clock(now)
        conn = Connection(name=f"c{next(self._names)}", wire=wire, peer=peer, opened=now,
                          last_in=now)  # fmt: skip
        self.connections[conn.name] = conn
        conn.trace.event(now, "accepted")
        return conn

    def feed(self, conn: Connection, data: bytes, now: float) -> None:
        """Bytes a read brought from ``conn``."""
        self._clock(now)
        if not conn.alive:
            return
        conn.last_in = now
        conn.buffer += data
        self._frames(conn)
        self._flush()

    def lost(self, conn: Connection, now: float, how: str = "closed") -> None:
        """The connection ended (the client closed it, or the network did, or the broker's
        own close completed)."""
        self._clock(now)
        if conn.state is State.CLOSED:
            return
        if not conn.closed_by_broker:  # the client (or the network) ended it
            conn.trace.event(now, how)
        self._end(conn)
        self._flush()

    def writable(self, conn: Connection, now: float) -> None:
        """A client that read slowly has taken what was written: send it what it is owed."""
        self._clock(now)
        if conn.paused and conn.session is not None:
            conn.paused = False
            flows.drain(self, conn.session)
            self._flush()

    def tick(self, now: float) -> None:
        """Time passed: keep alive, Will Delay, expiry."""
        self._clock(now)
        waited = self.settings.connect_timeout
        for conn in list(self.connections.values()):
            if conn.state is State.AWAITING_CONNECT and now - conn.opened > waited:
                self.reporter.notice(f"no-connect-{conn.name}",
                                     f"{conn.name}: no CONNECT within {waited} s: closed")
                self.close(conn, "no CONNECT")
                continue
            if conn.alive and conn.keep_alive and now - conn.last_in > 1.5 * conn.keep_alive:
                # [MQTT-3.1.2-24] "If the Keep Alive value is non-zero and the Server does
                # not receive a Control Packet from the Client within one and a half times
                # the Keep Alive time period, it MUST disconnect the Network Connection to
                # the Client as if the network had failed"
                message = f"nothing from the client for {now - conn.last_in:.1f} s (Keep " \
                    f"Alive {conn.keep_alive} s)"  # fmt: skip
                self.refuse(conn, S.KEEP_ALIVE, message, source=Source.LINK, verdict="pass",
                            disconnect=False)  # fmt: skip
        self.tricks.tick(now)
        for session in list(self.sessions.values()):
            if session.will_due is not None and session.will_due[0] <= now:
                _, will = session.will_due
                session.will_due = None
                self.publish_will(session.client_id, session.edition, will)
        self._flush()

    def shutdown(self, now: float) -> None:
        """The broker stops: every connection closes (no will is published: the broker,
        not the client, ends them), and the distribution judge gives what is left."""
        self._clock(now)
        self.stopped = True
        for conn in list(self.connections.values()):
            conn.will = None
            if conn.v50 and conn.open:
                # 5.0 DISCONNECT 0x8B "Server shutting down"
                self.send_raw(conn, control_packets.disconnect(0x8B), kind="DISCONNECT")
            self.close(conn, "the broker stops")
        # the judge's last word with the links still open: a copy the broker still owes a
        # client it never sent is missing, unless the client's own limits held it back
        # (its Receive Maximum, the window, a socket it did not read): that link closes first
        for conn in list(self.connections.values()):
            session = conn.session
            if session is not None and flows.blocked(self, session):
                self.feed_judge(conn, C2S, None)
        self.judge_server(self.judge.finish(now, close_links=False))
        self._flush()
        for conn in list(self.connections.values()):
            self._end(conn)

    # -- the clock ---------------------------------------------------------------------------

    def _clock(self, now: float) -> None:
        self.now = max(self.now, now)
        outcome = self.engine.advance_to(int(self.now * 1000))
        if outcome is not None and outcome.ended:
            for client_id in outcome.ended:
                # [MQTT-4.1.0-2] the session state goes once its expiry has passed
                gone = self.sessions.pop(client_id, None)
                if gone is not None and gone.will_due is not None:
                    _, will = gone.will_due
                    gone.will_due = None
                    self.publish_will(client_id, gone.edition, will)
                self.session_ended(client_id)

    # -- packets in ------------------------------------------------------------------------

    def _frames(self, conn: Connection) -> None:
        buf = conn.buffer
        pos = 0
        size = len(buf)
        while conn.alive and size - pos >= 1:
            kind = buf[pos] >> 4
            if kind == 0 or (kind == 15 and not conn.v50):
                # a reserved type is judged at its first byte: nothing after it is read
                conn.current = bytes(buf[pos : pos + 1])
                self.refuse(conn, S.RESERVED_TYPE, f"packet type {kind} is reserved",
                            source=Source.CODEC)  # fmt: skip
                break
            if size - pos < 2:
                break
            length = 0
            at = pos + 1
            for index in range(RL_BYTES + 1):
                if at >= size:
                    length = -1
                    break
                byte = buf[at]
                at += 1
                if index == RL_BYTES:
                    message = "the Remaining Length has more than four bytes"
                    conn.current = bytes(buf[pos:at])
                    self.refuse(conn, S.FRAMING, message, source=Source.FRAMING)
                    break
                length |= (byte & 0x7F) << (7 * index)
                if not byte & 0x80:
                    break
            if length < 0 or not conn.alive:
                break
            end = at + length
            limit = self.settings.maximum_packet_size
            if limit is not None and conn.v50 and end - pos > limit:
                # 5.0 [MQTT-3.2.2-15] judged from the fixed header: the packet is not
                # buffered (DISCONNECT 0x95 Packet too large)
                conn.current = bytes(buf[pos:at])
                message = f"a packet of {end - pos} bytes; the broker's Maximum Packet " \
                    f"Size is {limit}"  # fmt: skip
                self.refuse(conn, S.TOO_LARGE, message, source=Source.WIRE)
                break
            if end > size:
                break
            frame = bytes(buf[pos:end])
            header = at - pos
            pos = end
            self._packet(conn, frame, header)
        del buf[:pos]

    def _packet(self, conn: Connection, frame: bytes, header: int) -> None:
        conn.packets_in += 1
        conn.current = frame
        conn.trace.packet(self.now, FROM_CLIENT, frame)
        kind = frame[0] >> 4
        if conn.state is State.AWAITING_CONNECT and kind != T.CONNECT:
            self.refuse(conn, S.FIRST_PACKET, f"the first packet is {self.type_name(frame)}",
                        source=Source.LINK, disconnect=False)  # fmt: skip
            return
        handler = _HANDLERS.get(kind)
        if handler is None:
            self.refuse(conn, S.RESERVED_TYPE, f"packet type {kind} is reserved",
                        source=Source.CODEC)  # fmt: skip
            return
        handler(self, conn, frame, header)

    def assign_client_id(self) -> str:
        """A Client Identifier for a client that gave none ("pubproof-N")."""
        while True:
            client_id = f"pubproof-{next(self._assigned)}"
            if client_id not in self.sessions:
                return client_id

    def type_name(self, frame: bytes) -> str:
        return control_packets.type_name(frame[0], self.engine.edition)

    # -- packets out -----------------------------------------------------------------------

    def send_raw(
        self, conn: Connection, data: bytes, *, kind: str, fields: dict[str, Any] | None = None
    ) -> None:
        """Write ``data`` (a packet of type ``kind``) to ``conn`` after this read; the
        client's link judge and the distribution judge are told (``fields``: its ``P`` or
        description, when the caller has it)."""
        if not conn.alive and not (conn.state is State.CLOSING and kind == "DISCONNECT"):
            return
        conn.outbox.append(data)
        conn.outbox_bytes += len(data)
        conn.packets_out += 1
        conn.trace.packet(self.now, TO_CLIENT, data)
        self._touched[conn.name] = conn
        session = conn.session
        if not self.settings.judges:
            return
        if fields is None:
            fields = self.describe(data, TO_CLIENT, conn)
        if conn.case:
            return
        if session is not None and session.conn is conn:
            if kind == "CONNACK":
                session.judge.judged_sent(kind, fields, [], at(self.now))  # the broker's
            else:
                session.judge.peer_sent(kind, fields, at(self.now))
        self.feed_judge(conn, S2C, fields)

    def feed_judge(self, conn: Connection, direction: str, fields: dict[str, Any] | None) -> None:
        """The distribution judge's event for a packet (None: the link closed)."""
        if not self.judge.active:
            return
        self.judge_server(self.judge.feed(self.now, conn.name, direction, fields, conn.edition))
        if self.judge.full:
            self.reporter.notice(
                "distribution-judge-stopped",
                f"the distribution judge has judged {self.judge.messages} messages "
                "(--judge-messages): it stops here, its findings so far reported",
            )
            self.judge_server(self.judge.finish(self.now))

    def describe(
        self, data: bytes, direction: str, conn: Connection | None = None
    ) -> dict[str, Any]:
        """A packet's fields as the probe's evidence gives them (its ``P``, or a control
        packet's description), decoded with the limits of its receiver."""
        edition = (conn.edition if conn is not None else None) or self.engine.edition
        readings = conn.readings if conn is not None and conn.readings else {}
        limits = None
        if edition is V50 and conn is not None:
            limits = (self.settings.limits() if direction == FROM_CLIENT
                      else conn.client_declared.wire_limits())  # fmt: skip
        fields, _ = describe_bytes(data, edition, readings, limits)
        return fields

    def _flush(self) -> None:
        if not self._touched:
            return
        if self.before_flush is not None:
            self.before_flush()
        touched, self._touched = self._touched, {}
        for conn in touched.values():
            if conn.outbox:
                data = b"".join(conn.outbox) if len(conn.outbox) > 1 else conn.outbox[0]
                conn.outbox.clear()
                conn.outbox_bytes = 0
                try:
                    conn.wire.write(data)
                except OSError:
                    conn.close_reason = conn.close_reason or "write failed"
                    conn.state = State.CLOSING
            if conn.state is State.CLOSING:
                conn.wire.close()

    # -- findings and closing -------------------------------------------------------------

    def found(self, conn: Connection | None, finding: Finding, packet: bytes | None = None) -> None:
        """Report a finding (about the client of ``conn``, or with no connection, about the
        broker)."""
        trace: tuple[dict[str, Any], ...] = ()
        if conn is not None and len(self.reporter.kept) < KEPT_FINDINGS:
            trace = conn.trace.entries(lambda data, d: self.describe(data, d, conn))
        self.reporter.report(
            LiveFinding(
                t=self.now, client_id=conn.client_id if conn is not None else SERVER,
                conn=conn.name if conn is not None else "-",
                edition=conn.edition if conn is not None else self.engine.edition,
                finding=finding, packet=(conn.current if packet is None and conn else packet)
                or b"", trace=trace,
            )
        )  # fmt: skip

    def judge_server(self, found: list[Finding]) -> None:
        """The distribution judge's findings: about the broker."""
        for finding in found:
            self.found(None, finding, b"")

    def refuse(
        self,
        conn: Connection,
        rule: ServeRule,
        message: str,
        *,
        source: str,
        verdict: str = VIOLATION,
        disconnect: bool = True,
    ) -> None:
        """A packet breaks one of serve's rules of the control packets: reported, then the
        connection closed (5.0: after DISCONNECT with the rule's Reason Code, when the
        connection is past its CONNECT)."""
        rule_id = rule.id_for(conn.edition)
        self.found(conn, Finding(verdict=verdict, rules=(rule_id,), message=message,
                                 source=source, role="client"))  # fmt: skip
        self.close_for(conn, rule.reason_code if disconnect else None, f"{rule_id}: {message}")

    def close_for(
        self, conn: Connection, reason_code: int | None, why: str, fault: str = "control"
    ) -> None:
        """Close ``conn`` because of a fault (5.0: DISCONNECT ``reason_code`` first), of
        the ``fault`` kind: "wire" (a packet the codec rejects), "flow" (the flows say its
        receiver closes), "control" (a rule of the control packets)."""
        if not self.tricks.closes(conn, fault):
            return
        if conn.v50 and conn.open and reason_code is not None:
            self.send_raw(conn, control_packets.disconnect(reason_code), kind="DISCONNECT")
        self.close(conn, why)

    def close(self, conn: Connection, why: str, *, by_client: bool = False) -> None:
        """``conn`` closes once what the broker has to write is written: the broker's
        doing, or (``by_client``) the client's DISCONNECT's."""
        if conn.state in (State.CLOSING, State.CLOSED):
            return
        conn.state = State.CLOSING
        conn.close_reason = why
        conn.closed_by_broker = not by_client
        if not by_client:
            conn.trace.event(self.now, "dropped")
        self._touched[conn.name] = conn

    def _end(self, conn: Connection) -> None:
        """The connection is gone: its session is away (or ends), its will goes out."""
        conn.state = State.CLOSED
        self.connections.pop(conn.name, None)
        tally = self.reporter.tally(conn.client_id)  # counted per connection, added at its end
        tally.packets_in += conn.packets_in
        tally.packets_out += conn.packets_out
        self.feed_judge(conn, C2S, None)
        self.tricks.ended(conn)
        session = conn.session
        if session is None or session.conn is not conn:
            return  # never connected, or taken over
        session.conn = None
        if self.settings.judges and not conn.case and not conn.closed_by_broker:
            # what the client still owed when it (or the network) ended the connection
            for finding in owed_at_close(session.judge, self.now):
                self.found(conn, finding, b"")
        will, conn.will = conn.will, None
        outcome = self.engine.disconnect(session.client_id, conn.disconnect_expiry)
        if conn.disconnect_expiry is not None and not outcome.session_ended:
            session.expiry = conn.disconnect_expiry
        if will is not None and not self.stopped:
            if session.v50 and will.delay and not outcome.session_ended:
                # 5.0 3.1.3.2.2: the will waits out its Will Delay Interval (or the end of
                # the session, whichever comes first)
                session.will_due = (self.now + will.delay, will)
            else:
                self.publish_will(session.client_id, session.edition, will)
        if outcome.session_ended:
            self.sessions.pop(session.client_id, None)
            self.session_ended(session.client_id)
        else:
            self.session_away(session)

    def publish_will(self, client_id: str, edition: Edition, will: Will) -> None:
        """The will of ``client_id`` goes out as a message the broker took ownership of."""
        props = dict(will.properties)
        props.pop("will_delay_interval", None)
        try:
            publication = Publication(
                publisher=client_id, topic=will.topic, payload=will.payload, qos=will.qos,
                retain=will.retain and self.settings.retain_available,
                properties=Properties.from_p(props) if edition is V50 else Properties(),  # type: ignore[arg-type]
            )  # fmt: skip
            outcome = self.engine.publish(publication)
        except ValueError as error:  # a topic the engine refuses: a will no one can get
            self.reporter.notice("will-refused", f"{client_id}: will not published: {error}")
            return
        flows.distribute(self, outcome)

    # -- what tricks do --------------------------------------------------------------------

    def answer(self, conn: Connection, packet: Packet) -> None:
        """Hand a packet a trick held back to the client's session now."""
        if conn.open and conn.session is not None:
            flows.answer(self, conn, packet)
            self._flush()

    def inject(self, message: Publish, publisher: str = "$pubproof") -> None:
        """A message the broker publishes of its own (a trick's, a check's), owed to the
        sessions whose subscriptions match it as any other."""
        flows.own(self, publisher, message)
        self._flush()

    def send_case(self, conn: Connection, data: bytes) -> None:
        """Send bytes as they are, marked as the case (a packet the model may reject) whose
        answer the client's close judge awaits."""
        kind = control_packets.type_name(data[0], conn.edition) if data else "NOTHING"
        # from the case on, what the client does is the close judge's, not the link
        # judge's (as probe-client judges it)
        conn.case = True
        self.send_raw(conn, data, kind=kind)
        conn.trace.mark_case()

    def drop(self, conn: Connection, why: str) -> None:
        """Close ``conn`` without a word (a lost connection, as the client sees it)."""
        self.close(conn, why)
        self._flush()

    def flush(self) -> None:
        """Write what tricks queued (outside a read)."""
        self._flush()

    # -- hooks of the store -----------------------------------------------------------------

    def session_ended(self, client_id: str) -> None:
        """A session ended (the store forgets it)."""

    def session_away(self, session: ClientSession) -> None:
        """A session outlives its connection (the store keeps it)."""

    def connected(self, session: ClientSession) -> None:
        """A session has a connection again, or a new one (the store keeps it if it is
        persistent)."""

    def subscribed(self, session: ClientSession) -> None:
        """A session's subscriptions changed (the store keeps them)."""

    def owned(self, outcome: PublishOutcome) -> None:
        """The broker took ownership of a message (the store keeps what it must)."""

    def sent(self, session: ClientSession, packet: Publish, copy: Copy) -> None:
        """A copy went out under ``packet``'s identifier (the store keeps the flow)."""

    def completed(self, session: ClientSession, packet_id: int) -> None:
        """A copy's flow completed (the store forgets it)."""

    def on_packet(self, conn: Connection, packet: Packet) -> None:
        """A PUBLISH-family packet the judges passed, before the session answers it."""

    def touched(self, conn: Connection) -> None:
        """``conn`` has something to write after this read."""
        self._touched[conn.name] = conn


def _publish_family(broker: Broker, conn: Connection, frame: bytes, header: int) -> None:
    flows.incoming(broker, conn, frame)


_HANDLERS: dict[int, Callable[[Broker, Connection, bytes, int], None]] = {
    T.CONNECT: control.on_connect,
    T.PUBLISH: _publish_family,
    T.PUBACK: _publish_family,
    T.PUBREC: _publish_family,
    T.PUBREL: _publish_family,
    T.PUBCOMP: _publish_family,
    T.SUBSCRIBE: control.on_subscribe,
    T.UNSUBSCRIBE: control.on_unsubscribe,
    T.PINGREQ: control.on_pingreq,
    T.DISCONNECT: control.on_disconnect,
    T.CONNACK: control.on_server_packet,
    T.SUBACK: control.on_server_packet,
    T.UNSUBACK: control.on_server_packet,
    T.PINGRESP: control.on_server_packet,
    15: control.on_auth,
}
