"""The server pubproof plays for a client check: a listener on loopback, and each
connection the client opens, spoken through the reference :class:`Session`.

A :class:`Conn` answers CONNECT, SUBSCRIBE, UNSUBSCRIBE and PINGREQ as a server does, and
hands PUBLISH and its acknowledgements to the reference session, which answers as the
model says (MQTT 5.0: the reference :class:`Session50`, with the limits the client
declared in CONNECT and those pubproof's server declares in its CONNACK,
:attr:`ServerContext.declare`; every packet is described with the limits of its
receiver); a check makes it misbehave on purpose (``hold`` keeps packets from the
session, ``send_raw`` sends bytes as they are, ``drop`` loses the connection). Nothing
waits on its own: :class:`ServerContext` reads every connection (and the driver's lines
arrive on their own thread) until what a check waits for has happened, or its time ran
out. Every packet both ways, every close and every wait is evidence.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

from pubproof.judge import packets as control
from pubproof.judge.limits import Declared
from pubproof.judge.limits import declared as declared_by
from pubproof.judge.packets import FrameError
from pubproof.model.editions import Edition
from pubproof.probe.client import with_properties
from pubproof.probe.evidence import Entry, Recorder
from pubproof.probe.frames import FrameSplitter, describe_bytes
from pubproof.probe.timing import Deadline
from pubproof.reference.codec import encode
from pubproof.reference.packets import Packet, Publish
from pubproof.reference.properties import PublishProperties
from pubproof.reference.session import Deliver, Method, Send, Session
from pubproof.reference.session50 import Disconnect, Session50, Wait

TO_CLIENT = "to-client"
FROM_CLIENT = "from-client"
SEND_TIMEOUT = 1.0

Hold = Callable[[Packet], bool]


class Stalled(Exception):
    """A wait ran out (recorded as a ``timeout`` event)."""


class Conn:
    """One connection the client opened to pubproof's server."""

    def __init__(self, ctx: ServerContext, sock: socket.socket, name: str) -> None:
        self.ctx = ctx
        self.sock = sock
        self.name = name
        self.closed = False
        self.splitter = FrameSplitter()
        self.received: list[Entry] = []  # every packet from the client, in order
        self.connect: Entry | None = None
        self.hold: Hold | None = None
        self.held: list[Packet] = []
        self.answer_pings = True
        sock.settimeout(SEND_TIMEOUT)

    # -- sending -----------------------------------------------------------------------

    @property
    def client_declared(self) -> Declared:
        """MQTT 5.0: what the client declared in its CONNECT on this connection (its
        Receive Maximum, Topic Alias Maximum, Maximum Packet Size)."""
        return declared_by((self.connect or {}).get("properties") or {})

    def send_raw(self, data: bytes, *, case: bool = False) -> Entry:
        """Send bytes as they are (recorded first; ``case``: the packet the check is about).
        MQTT 5.0: described with the limits the client declared."""
        limits = self.client_declared.wire_limits()
        fields, _ = describe_bytes(data, self.ctx.edition, self.ctx.readings, limits)
        entry = self.ctx.recorder.packet(TO_CLIENT, self.name, fields, data, case=case)
        if not self.closed:
            try:
                self.sock.sendall(data)
            except OSError:
                self._lost("while sending")
        return entry

    def send(self, packet: Packet) -> None:
        """Encode ``packet`` with the reference codec and send it."""
        self.send_raw(encode(packet, edition=self.ctx.edition, readings=self.ctx.readings))

    def connack(self, *, session_present: bool = False, return_code: int = 0) -> None:
        """CONNACK (Session Present only in 3.1.1 and 5.0: 3.1 has no such flag; 5.0 with
        the properties the server declares, :attr:`ServerContext.declare`)."""
        if self.ctx.v50:
            self.send_raw(
                control.connack(
                    session_present=session_present, return_code=return_code,
                    edition=Edition.V50, properties=self.ctx.declare,
                )
            )  # fmt: skip
            return
        present = session_present and self.ctx.edition is Edition.V311
        self.send_raw(control.connack(session_present=present, return_code=return_code))

    def publish(
        self,
        topic: str,
        payload: bytes,
        qos: int = 0,
        retain: bool = False,
        properties: PublishProperties | None = None,
    ) -> Publish:
        """Publish to the client through the server's reference session (MQTT 5.0: with
        ``properties`` beside the Topic Alias the session chose; the send quota must allow
        it: a check that goes beyond the client's Receive Maximum sends raw bytes)."""
        outputs = self.ctx.session.publish(topic, payload, qos=qos, retain=retain)
        if not outputs or isinstance(outputs[0], Wait):
            raise Stalled("the server's send quota is 0 (the client's Receive Maximum)")
        sent = outputs[0]
        assert isinstance(sent, Send) and isinstance(sent.packet, Publish)
        packet = with_properties(sent.packet, properties)
        self.send(packet)
        return packet

    def drop(self, why: str = "") -> None:
        """Close the connection without a word (a lost connection, as the client sees it)."""
        if self.closed:
            return
        self.closed = True
        details: dict[str, Any] = {"why": why} if why else {}
        self.ctx.recorder.event("dropped", self.name, **details)
        with contextlib.suppress(OSError):
            self.sock.close()

    # -- receiving -----------------------------------------------------------------------

    def read(self) -> None:
        """Read what is there; record and answer each packet."""
        if self.closed:
            return
        try:
            data = self.sock.recv(65536)
        except (TimeoutError, BlockingIOError):
            return
        except OSError:
            self._lost("reset")
            return
        if not data:
            self._lost("end of stream")
            return
        self.splitter.feed(data)
        while not self.closed:
            try:
                frame = self.splitter.next_frame()
            except FrameError:
                rest = self.splitter.rest()
                fields, _ = describe_bytes(rest, self.ctx.edition, self.ctx.readings)
                self.ctx.recorder.packet(FROM_CLIENT, self.name, fields, rest, case=False)
                self.drop("the stream from the client cannot be cut into packets")
                return
            if frame is None:
                return
            limits = self.ctx.declared.wire_limits()  # the server's (5.0)
            fields, packet = describe_bytes(frame, self.ctx.edition, self.ctx.readings, limits)
            entry = self.ctx.recorder.packet(FROM_CLIENT, self.name, fields, frame, case=False)
            self.received.append(entry)
            self._answer(entry, packet)

    def _answer(self, entry: Entry, packet: Packet | None) -> None:
        kind = entry.get("type")
        if "error" in entry:
            return  # judged from the evidence; the check decides what to do
        if kind == "CONNECT":
            self.connect = entry
        elif kind == "SUBSCRIBE":
            granted = [min(s["qos"], 2) for s in entry.get("subscriptions", [])]
            if self.ctx.v50:
                self.send_raw(control.suback(entry["packet_id"], granted, edition=Edition.V50))
            else:
                self.send_raw(control.suback(entry["packet_id"], granted))
        elif kind == "UNSUBSCRIBE":
            if self.ctx.v50:
                codes = [0] * len(entry.get("filters", []))
                self.send_raw(control.unsuback(entry["packet_id"], codes))
            else:
                self.send_raw(bytes((0xB0, 2)) + entry["packet_id"].to_bytes(2, "big"))
        elif kind == "PINGREQ" and self.answer_pings:
            self.send_raw(control.PINGRESP)
        elif packet is not None:
            if self.hold is not None and self.hold(packet):
                self.held.append(packet)
            else:
                self.feed(packet)

    def feed(self, packet: Packet, *, refuse: int = 0) -> None:
        """Hand a packet to the server's session and send what it says (MQTT 5.0:
        ``refuse``, a Reason Code of 0x80 or more, refuses a new QoS 1 or 2 message with
        PUBACK or PUBREC of that code; a packet the session must close for is answered
        DISCONNECT with its Reason Code, and the connection closed)."""
        if self.ctx.v50:
            outputs: list[Any] = self.ctx.session.receive(packet, refuse=refuse)
        else:
            outputs = self.ctx.session.receive(packet)
        for output in outputs:
            if isinstance(output, Send):
                self.send(output.packet)
            elif isinstance(output, Deliver):
                self.ctx.delivered.append(output.message)
            elif isinstance(output, Disconnect):
                self.send_raw(control.disconnect(output.reason_code))
                self.drop(f"the server's session closes: {output.rule}")
                return

    def release(self) -> None:
        """Stop holding; hand the held packets to the session."""
        self.hold = None
        held, self.held = self.held, []
        for packet in held:
            self.feed(packet)

    def _lost(self, how: str) -> None:
        self.closed = True
        self.ctx.recorder.event("closed", self.name, how=how)
        with contextlib.suppress(OSError):
            self.sock.close()

    def count(self, kind: str, **fields: Any) -> int:
        """How many packets of a type (with these field values) came from the client."""
        return sum(
            1
            for e in self.received
            if e.get("type") == kind and all(e.get(k) == v for k, v in fields.items())
        )


class ServerContext:
    """The running state of one client check: the listener, the connections, the session
    (one, across the client's connections), the evidence and the deadline."""

    def __init__(
        self,
        *,
        edition: Edition,
        readings: Mapping[str, str],
        seconds: float,
        answer: float,
        recorder: Recorder | None = None,
    ) -> None:
        self.edition = edition
        self.readings = readings
        self.answer = answer
        self.deadline = Deadline(seconds)
        self.recorder = recorder or Recorder()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.port: int = self.listener.getsockname()[1]
        self.conns: list[Conn] = []
        self.v50 = edition is Edition.V50
        self.session: Any = Session50(method=Method.B) if self.v50 else Session(method=Method.B)
        self.delivered: list[Publish] = []
        self.persistent = False  # the last CONNECT asked to keep its session
        #: MQTT 5.0: the properties of the server's CONNACK (what it declares: Receive
        #: Maximum, Topic Alias Maximum, Maximum Packet Size, Maximum QoS, Retain Available)
        self.declare: dict[str, Any] = {}
        #: MQTT 5.0: whether the server gives topic names aliases (up to the client's
        #: Topic Alias Maximum); off unless a check is about them
        self.use_aliases = False
        #: MQTT 5.0: Session Present 0 on every CONNACK, whatever the client asked (the
        #: server lost the session)
        self.forget_sessions = False

    @property
    def declared(self) -> Declared:
        """MQTT 5.0: what the server declares in its CONNACK (binds what the client sends)."""
        return declared_by(self.declare)

    @property
    def url(self) -> str:
        """Where the client connects."""
        return f"mqtt://127.0.0.1:{self.port}"

    def pump(self, timeout: float) -> None:
        """Read every open connection (and the listener, taking new connections) for up to
        ``timeout`` seconds."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.listener, selectors.EVENT_READ, None)
            for conn in self.conns:
                if not conn.closed:
                    selector.register(conn.sock, selectors.EVENT_READ, conn)
            ready = selector.select(max(0.0, min(timeout, 0.05)))
        for key, _ in ready:
            if key.data is None:
                self._accept()
            else:
                key.data.read()

    def _accept(self) -> None:
        try:
            sock, _ = self.listener.accept()
        except (BlockingIOError, OSError):
            return
        sock.setblocking(True)
        conn = Conn(self, sock, f"conn{len(self.conns) + 1}")
        self.conns.append(conn)
        self.recorder.event("accepted", conn.name)

    def wait_for(self, what: str, done: Callable[[], bool], seconds: float | None = None) -> None:
        """Read until ``done()``; :class:`Stalled` (recorded as ``timeout``) if it does
        not come within ``seconds`` (the answer timeout) or the check's deadline."""
        window = self.deadline.cap(self.answer if seconds is None else seconds)
        end = time.monotonic() + window
        started = time.monotonic()
        while not done():
            left = end - time.monotonic()
            if left <= 0:
                waited = round(time.monotonic() - started, 3)
                self.recorder.event("timeout", None, waiting_for=what, seconds=waited)
                raise Stalled(f"no {what} within {waited} s")
            self.pump(left)

    def quiet(self, seconds: float) -> None:
        """Listen for a while for anything more (re-sends, duplicates, a close)."""
        window = self.deadline.cap(seconds)
        end = time.monotonic() + window
        while (left := end - time.monotonic()) > 0:
            self.pump(left)
        self.recorder.event("quiet", None, seconds=round(window, 3))

    def connection(self, number: int, seconds: float | None = None) -> Conn:
        """The client's ``number``-th connection (from 1), once its CONNECT is in: answered
        with CONNACK, Session Present when it resumes a session this check kept."""
        self.wait_for(
            f"connection {number} and its CONNECT",
            lambda: len(self.conns) >= number and self.conns[number - 1].connect is not None,
            seconds,
        )
        conn = self.conns[number - 1]
        assert conn.connect is not None
        if self.v50:
            return self._connection50(conn)
        clean = bool(conn.connect.get("clean_session"))
        resume = not clean and self.persistent
        self.persistent = not clean
        conn.connack(session_present=resume)
        for output in self.session.reconnect(resume=resume) if number > 1 else ():
            if isinstance(output, Send):
                conn.send(output.packet)
        return conn

    def _connection50(self, conn: Conn) -> Conn:
        """MQTT 5.0: the session is resumed on Clean Start 0 when the last connection's
        CONNECT kept it (a Session Expiry Interval above 0) and the server did not lose it;
        the session takes both ends' limits, then re-sends what it owes."""
        assert conn.connect is not None
        properties = conn.connect.get("properties") or {}
        # [MQTT-3.1.2-4] "If a CONNECT packet is received with Clean Start is set to 1, the
        # Client and Server MUST discard any existing Session and start a new Session."
        # 3.1.2.11.2: "If the Session Expiry Interval is absent the value 0 is used. If it
        # is set to 0, ... the Session ends when the Network Connection is closed."
        clean = bool(conn.connect.get("clean_start"))
        resume = not clean and self.persistent and not self.forget_sessions
        self.persistent = bool(properties.get("session_expiry_interval"))
        conn.connack(session_present=resume)
        client, server = conn.client_declared, self.declared
        session = self.session
        session.receive_maximum = server.receive_maximum
        session.topic_alias_maximum = server.topic_alias_maximum
        session.peer_receive_maximum = client.receive_maximum
        session.peer_topic_alias_maximum = client.topic_alias_maximum if self.use_aliases else 0
        for output in session.reconnect(resume=resume):
            if isinstance(output, Send):
                conn.send(output.packet)
        return conn

    def close(self) -> None:
        """Close the listener and every connection (not evidence)."""
        self.recorder.enabled = False
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.sock.close()
        with contextlib.suppress(OSError):
            self.listener.close()
