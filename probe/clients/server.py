"""The server pubproof plays for a client check: ``pubproof serve``'s broker
(:class:`pubproof.probe.serve.broker.Broker`) on a loopback listener, the check steering
it through its tricks (:class:`pubproof.probe.serve.tricks.Tricks`).

The broker answers CONNECT, SUBSCRIBE, UNSUBSCRIBE and PINGREQ as a server does, runs
each client's session through the reference sessions (MQTT 5.0: with the limits the client
declared in CONNECT and those the check has the server declare in CONNACK,
:attr:`ServerContext.declare`) and delivers what the check publishes (:meth:`Conn.
publish`) to the client's matching subscription through its distribution. A check makes it
misbehave on purpose: ``hold`` keeps packets of the client from its session (``release``
hands them on, ``feed`` one with a refusal's Reason Code), ``send_raw`` sends bytes as they
are, ``drop`` loses the connection, ``forget_sessions`` answers Session Present 0. As the
server of a check, it closes a connection for what the flows say a receiver closes for
(Receive Maximum, a Topic Alias), never for a packet the codec rejects or a rule of the
control packets: those are evidence, and the check decides what happens next.

Nothing waits on its own: :class:`ServerContext` reads every connection (and the driver's
lines arrive on their own thread) until what a check waits for has happened, or its time ran
out. Every packet both ways, every close and every wait is evidence; the broker's own judges
are off (``probe-client`` judges the evidence afterwards).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

from pubproof.judge.limits import Declared
from pubproof.judge.limits import declared as declared_by
from pubproof.judge.packets import FrameError
from pubproof.model.editions import Edition
from pubproof.probe.evidence import Entry, Recorder
from pubproof.probe.frames import FrameSplitter, describe_bytes
from pubproof.probe.serve.broker import Broker
from pubproof.probe.serve.connection import Connection
from pubproof.probe.serve.live import FROM_CLIENT, TO_CLIENT
from pubproof.probe.serve.settings import ServeSettings
from pubproof.probe.serve.tricks import Tricks
from pubproof.probe.timing import Deadline
from pubproof.reference.codec import encode
from pubproof.reference.packets import Packet, Publish
from pubproof.reference.properties import PublishProperties
from pubproof.reference.session import Session

__all__ = ["FROM_CLIENT", "TO_CLIENT", "Conn", "ServerContext", "Stalled"]

SEND_TIMEOUT = 1.0

Hold = Callable[[Packet], bool]


class Stalled(Exception):
    """A wait ran out (recorded as a ``timeout`` event)."""


class Conn:
    """One connection the client opened to pubproof's server: the socket, and the
    broker's connection it is."""

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
        #: 5.0: the Reason Code with which the session refuses the next new message
        self.refusing = 0
        #: the last PUBLISH the broker wrote to the client (:meth:`publish` returns it)
        self.last_publish: Publish | None = None
        sock.settimeout(SEND_TIMEOUT)
        self.broker_conn: Connection = ctx.broker.open(_Wire(self), name, ctx.now())
        ctx.by_name[self.broker_conn.name] = self  # the tricks know it by the broker's name

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
        fields, packet = describe_bytes(data, self.ctx.edition, self.ctx.readings, limits)
        entry = self.ctx.recorder.packet(TO_CLIENT, self.name, fields, data, case=case)
        if isinstance(packet, Publish):
            self.last_publish = packet
        if not self.closed:
            try:
                self.sock.sendall(data)
            except OSError:
                self._lost("while sending")
        return entry

    def send(self, packet: Packet) -> None:
        """Encode ``packet`` with the reference codec and send it (past the session)."""
        self.send_raw(encode(packet, edition=self.ctx.edition, readings=self.ctx.readings))

    def publish(
        self,
        topic: str,
        payload: bytes,
        qos: int = 0,
        retain: bool = False,
        properties: PublishProperties | None = None,
    ) -> Publish:
        """Publish to the client through the server's distribution (MQTT 5.0: with
        ``properties``; the client's send quota must allow it: a check that goes beyond
        the client's Receive Maximum sends raw bytes); the PUBLISH sent."""
        if self.ctx.v50 and properties is None:
            properties = PublishProperties()
        self.last_publish = None
        message = Publish(topic=topic, payload=payload, qos=qos, packet_id=1 if qos else None,
                          retain=retain, properties=properties)  # fmt: skip
        self.ctx.broker.inject(message)
        sent = self._sent()
        if sent is None:
            raise Stalled("the server's send quota is 0 (the client's Receive Maximum)")
        return sent

    def _sent(self) -> Publish | None:
        return self.last_publish

    def drop(self, why: str = "") -> None:
        """Close the connection without a word (a lost connection, as the client sees it)."""
        if self.closed:
            return
        self.closed = True
        details: dict[str, Any] = {"why": why} if why else {}
        self.ctx.recorder.event("dropped", self.name, **details)
        with contextlib.suppress(OSError):
            self.sock.close()
        self.ctx.broker.lost(self.broker_conn, self.ctx.now())

    # -- receiving -----------------------------------------------------------------------

    def read(self) -> None:
        """Read what is there; record each packet and hand it to the broker."""
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
            fields, _ = describe_bytes(frame, self.ctx.edition, self.ctx.readings, limits)
            entry = self.ctx.recorder.packet(FROM_CLIENT, self.name, fields, frame, case=False)
            self.received.append(entry)
            if entry.get("type") == "CONNECT" and "error" not in entry:
                self.connect = entry
            self.ctx.broker.feed(self.broker_conn, frame, self.ctx.now())

    def feed(self, packet: Packet, *, refuse: int = 0) -> None:
        """Hand a packet to the client's session and send what it says (MQTT 5.0:
        ``refuse``, a Reason Code of 0x80 or more, refuses a new QoS 1 or 2 message with
        PUBACK or PUBREC of that code)."""
        self.refusing = refuse
        try:
            self.ctx.broker.answer(self.broker_conn, packet)
        finally:
            self.refusing = 0

    def release(self) -> None:
        """Stop holding; hand the held packets to the session."""
        self.hold = None
        held, self.held = self.held, []
        for packet in held:
            self.feed(packet)

    def _lost(self, how: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.ctx.recorder.event("closed", self.name, how=how)
        with contextlib.suppress(OSError):
            self.sock.close()
        self.ctx.broker.lost(self.broker_conn, self.ctx.now())

    def count(self, kind: str, **fields: Any) -> int:
        """How many packets of a type (with these field values) came from the client."""
        return sum(
            1
            for e in self.received
            if e.get("type") == kind and all(e.get(k) == v for k, v in fields.items())
        )


class _Wire:
    """The broker's wire of a :class:`Conn`: each packet it writes is recorded, then sent."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self.splitter = FrameSplitter()

    def write(self, data: bytes) -> None:
        self.splitter.feed(data)
        while (frame := self.splitter.next_frame()) is not None:
            self.conn.send_raw(frame)

    def close(self) -> None:
        if self.conn.broker_conn.closed_by_broker:
            self.conn.drop("the server closes the connection")
        # after the client's DISCONNECT the client closes: the end of stream is evidence

    def backlog(self) -> int:
        return 0


class _CheckTricks(Tricks):
    """What a check steers: holds, refusals, lost sessions; and no close for a fault of
    the codec or of a control packet (evidence the check reads on)."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx

    def _conn(self, conn: Connection) -> Conn | None:
        return self.ctx.by_name.get(conn.name)

    def hold(self, conn: Connection, packet: Packet) -> bool:
        mine = self._conn(conn)
        if mine is not None and mine.hold is not None and mine.hold(packet):
            mine.held.append(packet)
            return True
        return False

    def refuse(self, conn: Connection, packet: Publish) -> int:
        mine = self._conn(conn)
        return mine.refusing if mine is not None else 0

    def forget(self, conn: Connection) -> bool:
        return self.ctx.forget_sessions

    def closes(self, conn: Connection, fault: str) -> bool:
        return fault == "flow"


class ServerContext:
    """The running state of one client check: the listener, the connections, the broker
    (its sessions outlive the client's connections), the evidence and the deadline."""

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
        #: the connections by the broker's name for them
        self.by_name: dict[str, Conn] = {}
        self.v50 = edition is Edition.V50
        self.started = time.monotonic()
        #: MQTT 5.0: the properties of the server's CONNACK (what it declares: Receive
        #: Maximum, Topic Alias Maximum, Maximum Packet Size, Maximum QoS, Retain Available)
        self.declare: dict[str, Any] = {}
        #: MQTT 5.0: whether the server gives topic names aliases (up to the client's
        #: Topic Alias Maximum); off unless a check is about them
        self.use_aliases = False
        #: MQTT 5.0: Session Present 0 on every CONNACK, whatever the client asked (the
        #: server lost the session)
        self.forget_sessions = False
        self._broker: Broker | None = None

    def now(self) -> float:
        return time.monotonic() - self.started

    @property
    def broker(self) -> Broker:
        """The broker, made with what the check declared once the first client connects."""
        if self._broker is None:
            declare = self.declare
            settings = ServeSettings(
                edition=self.edition, readings=dict(self.readings), judges=False,
                receive_maximum=declare.get("receive_maximum"),
                topic_alias_maximum=declare.get("topic_alias_maximum", 0),
                maximum_packet_size=declare.get("maximum_packet_size"),
                maximum_qos=declare.get("maximum_qos", 2),
                retain_available=bool(declare.get("retain_available", 1)),
                use_aliases=self.use_aliases,
            )  # fmt: skip
            self._broker = Broker(settings, tricks=_CheckTricks(self))
        return self._broker

    @property
    def session(self) -> Any:
        """The reference session of the check's client (the latest to connect)."""
        conn = next((c for c in reversed(self.conns) if c.broker_conn.session), None)
        if conn is None or conn.broker_conn.session is None:
            return Session()
        return conn.broker_conn.session.flows

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
        """The client's ``number``-th connection (from 1), once its CONNECT is in (the
        broker has answered it: CONNACK, Session Present when it resumes a session the
        broker kept, then what the session re-sends)."""
        self.wait_for(
            f"connection {number} and its CONNECT",
            lambda: len(self.conns) >= number and self.conns[number - 1].connect is not None,
            seconds,
        )
        return self.conns[number - 1]

    def close(self) -> None:
        """Close the listener and every connection (not evidence)."""
        self.recorder.enabled = False
        for conn in self.conns:
            conn.closed = True
            with contextlib.suppress(OSError):
                conn.sock.close()
        with contextlib.suppress(OSError):
            self.listener.close()
