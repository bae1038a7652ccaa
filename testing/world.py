"""The live world of one example: a few clients of the judged broker, making moves.

Rules / theory of operation
---------------------------
A :class:`World` is one example of an exploration: a fresh
:class:`~pubproof.probe.context.CheckContext` (its own client ids and topic prefix, its
own evidence in the probe's format, its deadline), and ``clients`` probe clients
(:class:`~pubproof.probe.client.Client`: the reference session, well-behaved unless a
move says otherwise). :meth:`World.make` makes a move the plan enabled, records it as a
``step`` event in the evidence (or ``skipped``, when the peer made it impossible: a
closed connection, a spent quota), and waits for what the move is owed (CONNACK,
SUBACK, the end of a flow the client does not hold up) and then for the broker to fall
quiet for a moment (:data:`SETTLE_GAP`), so that the copies it forwards land before the
next move (not after a client id's first CONNECT in the example: no session, so nothing
is owed beyond the CONNACK).

Nothing here judges: the evidence is the judges' (:mod:`.verdicts`). A wait that runs out
(:class:`~pubproof.probe.context.Stalled`, recorded with its liveness probe) ends the
example's moves (:attr:`World.stalled`); a connection the broker closes is recorded and
the client may connect again. :meth:`World.end` listens one last quiet window (so that an
answer still owed is *missing*), cleans up outside the evidence (retained messages
deleted, kept sessions discarded) and closes every socket. Given a test of the evidence
(``settled``: the exploration's judges find no failure in it, missing answers counted),
the window ends early once the broker has been silent for :data:`QUIET_SHARE` of it and
the test passes on the evidence so far; when it does not, the window is listened out in
full before the judges rule, so a late answer is never taken for a missing one.
"""

from __future__ import annotations

import contextlib
import functools
import selectors
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pubproof.judge import packets as control
from pubproof.judge.limits import declared as declared_by
from pubproof.model.editions import Edition
from pubproof.probe.checks50_wire import alias as alias_property
from pubproof.probe.checks50_wire import publish50_bytes
from pubproof.probe.checks_wire import publish_bytes
from pubproof.probe.client import Client, Subscription
from pubproof.probe.context import BrokerClosed, CheckContext, Stalled
from pubproof.probe.evidence import Entry
from pubproof.probe.link import Link, ProbeError
from pubproof.probe.steps import observe
from pubproof.probe.target import Target
from pubproof.probe.timing import Timing
from pubproof.reference.codec import encode
from pubproof.reference.packets import Packet, Publish, PubRel
from pubproof.reference.properties import PublishProperties
from pubproof.testing.answers import COPIES, misanswers, wrong_at
from pubproof.testing.moves import STRAY_PACKET_ID, Move, MoveKind

#: seconds of silence from the broker that end a move (it has sent what the move caused)
SETTLE_GAP = 0.0015
#: the longest a move listens for the broker to fall silent
SETTLE_MOST = 0.05
#: the share of the last quiet window the broker must be silent for before
#: :meth:`World.end` may end it early (the judges find nothing owed missing): 5 ms of 30
QUIET_SHARE = 1 / 6
#: the Topic Alias Maximum a client declares when it uses aliases (5.0)
CLIENT_ALIASES = 3
#: an invalid move over the server's Receive Maximum sends at most this many first
MOST_IN_FLIGHT = 64
#: the properties a PUBLISH with ``properties`` carries (5.0): each one a server forwards
#: unchanged ([MQTT-3.3.2-4], [MQTT-3.3.2-15], [MQTT-3.3.2-16], [MQTT-3.3.2-17],
#: [MQTT-3.3.2-18], [MQTT-3.3.2-20])
CARRIED = PublishProperties(
    payload_format_indicator=1, content_type="text/plain", response_topic="reply/to",
    correlation_data=b"\x01\x02", user_properties=(("k", "v"),),
)  # fmt: skip


#: an example's waits: its deadline, an answer, the last quiet window, a sign of life
TIMING = Timing(check=60.0, answer=1.0, quiet=0.03, liveness=0.5)


@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    """What one example runs against, and its place in the run."""

    target: Target
    edition: Edition
    readings: Mapping[str, str]
    run_id: str
    number: int  # the example's number in the run: its client ids and topics say it
    clients: int = 4
    timing: Timing = TIMING

    def __post_init__(self) -> None:
        if not 1 <= self.clients <= 9 or self.number < 0:
            raise ValueError(f"1 to 9 clients and an example number, not {self!r}")


def _hold_all(packet: Packet) -> bool:
    """A client's hold that keeps every packet from its session."""
    return True


def _settled(client: Client) -> bool:
    return client.settled


def _more(client: Client, kind: str, before: int) -> bool:
    """Whether the broker has sent the client more than ``before`` packets of ``kind``."""
    return client.count(kind) > before


def _closed(link: Link) -> bool:
    """Whether the link is closed (read anew: reading the broker may close it)."""
    return link.closed


def _awaits(flow: Any) -> str:
    """What an outgoing flow of a 3.x or 5.0 reference session awaits, as a type name."""
    return str(getattr(flow, "value", flow))


class World:
    """One example's clients and their evidence."""

    def __init__(self, example: Example) -> None:
        self.example = example
        self.edition = example.edition
        self.v50 = example.edition is Edition.V50
        self.ctx = CheckContext(
            target=example.target, edition=example.edition, readings=example.readings,
            timing=example.timing, run_id=example.run_id, check_id=f"e{example.number}",
            check_no=example.number,
        )  # fmt: skip
        self.clients: list[Client] = [self.ctx.client(f"c{i}") for i in range(example.clients)]
        self.steps: list[Move] = []
        self.stalled = False  # a wait ran out: no more moves
        self.retained: set[str] = set()  # topic names published with RETAIN
        self.kept: set[int] = set()  # clients whose last CONNECT kept the session
        self.known: set[int] = set()  # clients whose client id has connected (or tried to)
        self.expiring = False  # a message with a Message Expiry Interval was published
        self.ended = False

    @property
    def number(self) -> int:
        """The example's number in its run."""
        return self.example.number

    # -- names ---------------------------------------------------------------------------

    def topic(self, leaf: str) -> str:
        """The example's topic name or filter for ``leaf``."""
        return self.ctx.topic(leaf)

    @property
    def entries(self) -> list[Entry]:
        """The evidence so far."""
        return list(self.ctx.recorder.entries)

    # -- what can be done ----------------------------------------------------------------

    def unable(self, move: Move) -> str:
        """Why the live world cannot make ``move`` now ("" when it can): the plan
        (:class:`~pubproof.testing.moves.Plan`) enabled it from the moves alone, and the
        peer may have closed the connection since, or kept the quota."""
        if self.stalled or self.ended:
            return "the example's moves have ended"
        if move.kind is MoveKind.WAIT:
            return ""
        client = self.clients[move.client]
        if move.kind is MoveKind.CONNECT:
            return "already connected" if client.connected else ""
        if not client.connected:
            return "the connection is closed"
        if move.kind is MoveKind.PUBLISH and move.qos and self.v50 and client.session.quota <= 0:
            return "the send quota is 0"
        if move.kind is MoveKind.RESEND and self._resendable(client) is None:
            return "no flow awaits PUBACK or PUBREC"
        if move.kind is MoveKind.MISANSWER and self._copy(client, move) is None:
            return f"no copy held back that {move.what} is a wrong answer for"
        return ""

    def server_receive_maximum(self, number: int) -> int:
        """MQTT 5.0: the Receive Maximum the broker declared to client ``number``."""
        connack = self.clients[number].connack
        return declared_by((connack or {}).get("properties") or {}).receive_maximum

    def _resendable(self, client: Client) -> Publish | None:
        """The first PUBLISH of the client whose flow awaits PUBACK or PUBREC."""
        for awaiting, message in client.session.in_flight.values():
            if _awaits(awaiting) in ("PUBACK", "PUBREC"):
                assert isinstance(message, Publish)
                return message
        return None

    def _copy(self, client: Client, move: Move) -> tuple[int, str] | None:
        """MISANSWER: the packet identifier of the first copy the client holds back that
        the move's answer is wrong for, and the state it leaves the server's flow in
        (:data:`~.answers.COPIES`)."""
        wrong = [COPIES[state] for state in wrong_at(self.edition, move.what)]
        for packet in client.held:
            if isinstance(packet, Publish) and ("PUBLISH", packet.qos) in wrong:
                return int(packet.packet_id or 0), _AWAITING["PUBLISH", packet.qos]
            if isinstance(packet, PubRel) and ("PUBREL", 0) in wrong:
                return packet.packet_id, _AWAITING["PUBREL", 0]
        return None

    # -- making a move -------------------------------------------------------------------

    def make(self, move: Move) -> None:
        """Make ``move`` (recorded as a ``step`` event, or as ``skipped`` with why, when
        the live world cannot make it), wait for what it is owed, and let the broker fall
        quiet. A wait that runs out ends the example's moves."""
        why = self.unable(move)
        number = len(self.steps)
        self.steps.append(move)
        if why:
            self.ctx.recorder.event("skipped", None, n=number, move=move.to_json(), why=why)
            return
        self.ctx.recorder.event("step", None, n=number, move=move.to_json())
        try:
            first = move.kind is MoveKind.CONNECT and move.client not in self.known
            self.known.add(move.client)
            _ACTIONS[move.kind](self, move)
            # a client id's first CONNECT in the example finds no session: the broker owes
            # it nothing but the CONNACK (waited for), nor anyone else anything
            if move.kind in FORWARDING and not first:
                self.settle()
        except BrokerClosed:
            pass  # recorded as ``closed``: the judges say whether the model allows it
        except (Stalled, ProbeError):
            self.stalled = True  # recorded: a timeout (and liveness), or an error

    def settle(self) -> None:
        """Read until the broker has been silent for :data:`SETTLE_GAP` (at most
        :data:`SETTLE_MOST`)."""
        end = time.monotonic() + SETTLE_MOST
        while self.ctx.pump(SETTLE_GAP) and time.monotonic() < end:
            pass

    def _flow_done(self, client: Client, packet_id: int | None) -> None:
        """Wait for the end of the client's flow on ``packet_id`` (not when the client
        holds the broker's answers back)."""
        if packet_id is None or client.hold is not None:
            return
        self.ctx.wait_for(
            client, f"the end of flow {packet_id}",
            lambda: packet_id not in client.session.in_flight, closed_ok=True,
        )  # fmt: skip

    def _connect(self, move: Move) -> None:
        client = self.clients[move.client]
        client.hold, client.held = None, []  # what the last connection kept is gone
        if self.v50:
            properties: dict[str, Any] = {}
            if move.session_expiry:
                properties["session_expiry_interval"] = move.session_expiry
            if move.aliases:
                properties["topic_alias_maximum"] = CLIENT_ALIASES
            if move.receive_maximum:
                properties["receive_maximum"] = move.receive_maximum
            client.properties = properties
            client.use_aliases = move.aliases
        keeps = not move.clean and (not self.v50 or move.session_expiry > 0)
        if keeps:
            self.kept.add(move.client)
        if client.link is None:
            client.connect(clean=move.clean)
        else:
            client.reconnect(clean=move.clean)
        if client.link is not None:  # copies are not held back ~40 ms by the broker's Nagle
            client.link.quick_ack = True
        for packet_id in list(client.session.in_flight):
            self._flow_done(client, packet_id)

    def _publish(self, move: Move) -> None:
        client = self.clients[move.client]
        payload = b"" if move.empty else f"s{len(self.steps) - 1}".encode()
        properties = None
        if self.v50 and (move.expiry or move.properties):
            base = CARRIED if move.properties else PublishProperties()
            properties = replace(base, message_expiry_interval=move.expiry or None)
            self.expiring = self.expiring or bool(move.expiry)
        if move.retain:
            self.retained.add(self.topic(move.topic))
        sent = client.publish(self.topic(move.topic), payload, move.qos, move.retain, properties)
        for _ in range(move.duplicates):  # at once: before the broker has answered
            client.send(replace(sent, dup=True))
        self._flow_done(client, sent.packet_id)

    def _resend(self, move: Move) -> None:
        client = self.clients[move.client]
        message = self._resendable(client)
        assert message is not None
        client.send(replace(message, dup=True))
        self._flow_done(client, message.packet_id)

    def _subscribe(self, move: Move) -> None:
        client = self.clients[move.client]
        wanted = Subscription(
            filter=self.topic(move.topic), qos=move.qos, no_local=move.no_local,
            retain_as_published=move.retain_as_published, retain_handling=move.retain_handling,
        )  # fmt: skip
        if self.v50:
            client.subscribe(wanted, identifier=move.identifier or None)
        else:
            client.subscribe((wanted.filter, wanted.qos))

    def _unsubscribe(self, move: Move) -> None:
        client = self.clients[move.client]
        packet_id = 1000 + len(self.steps)  # SUBSCRIBE numbers from 1: never the same
        data = control.unsubscribe(packet_id, [self.topic(move.topic)], edition=self.edition)
        client.send_raw(data)
        self.ctx.wait_for(
            client, "UNSUBACK", lambda: client.count("UNSUBACK", packet_id=packet_id) > 0
        )

    def _withhold(self, move: Move) -> None:
        self.clients[move.client].hold = _hold_all

    def _acknowledge(self, move: Move) -> None:
        client = self.clients[move.client]
        if move.keep:  # the session answers what was kept; what comes next is kept
            kept, client.held = client.held, []
            for packet in kept:
                client.feed(packet)
            return
        client.release(len(client.held))
        for packet_id in list(client.session.in_flight):
            self._flow_done(client, packet_id)

    def _disconnect(self, move: Move) -> None:
        self.close(self.clients[move.client], disconnect=True)

    def _drop(self, move: Move) -> None:
        self.close(self.clients[move.client], disconnect=False)

    def close(self, client: Client, *, disconnect: bool) -> None:
        """End the client's connection (after DISCONNECT, or lost) without losing what
        the broker sent before it saw the end: half-close, read to the end of the stream,
        and record the end as the client's (``dropped``). A PUBLISH in flight when the
        socket closed would otherwise be missing from the evidence, and its re-send on the
        next connection (DUP 1) would look like a first transmission."""
        link = client.link
        if link is None or link.closed:
            return
        if disconnect:
            link.send(control.disconnect() if self.v50 else control.DISCONNECT)
        client.hold = _hold_all  # nothing is answered on a closing connection
        with contextlib.suppress(OSError):
            link.sock.shutdown(socket.SHUT_WR)
        end = time.monotonic() + self.ctx.cap(self.example.timing.answer)
        while not _closed(link) and (left := end - time.monotonic()) > 0:
            self.ctx.pump(left)
        entries = self.ctx.recorder.entries
        last = entries[-1] if entries else {}
        if _closed(link) and last.get("event") == "closed" and last.get("client") == client.name:
            last.update(event="dropped", why="the client closed it; the broker's end followed")
        else:
            link.drop()
        client.hold, client.held = None, []

    def _wait(self, move: Move) -> None:
        self.rest()
        self.ctx.quiet(move.seconds)

    def rest(self) -> None:
        """Let every flow that can end, end: each connected client that does not hold
        back its answers waits until its session has no flow in progress (the broker owes
        it a PUBREL, a PUBCOMP, an acknowledgement)."""
        for client in self.clients:
            if client.connected and client.hold is None:
                done = functools.partial(_settled, client)
                self.ctx.wait_for(client, "the end of its flows", done, closed_ok=True)

    def _stray(self, move: Move) -> None:
        client = self.clients[move.client]
        first = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}[move.what]
        held = [p for p in client.held if getattr(p, "packet_id", None)]
        packet_id = int(getattr(held[0], "packet_id", 0)) if move.held and held else STRAY_PACKET_ID
        answer = "PUBCOMP" if move.what == "PUBREL" else "PUBREL"
        before = client.count(answer, packet_id=packet_id)
        breaks = self._stray_breaks(held[0], move.what) if move.held and held else ()
        client.send_raw(bytes((first, 2)) + packet_id.to_bytes(2, "big"), breaks=breaks)
        # answered: a PUBREL with PUBCOMP [MQTT-4.3.3-2]; 5.0: a PUBREC with PUBREL 0x92
        if move.what == "PUBREL" or (move.what == "PUBREC" and self.v50 and not move.held):
            self.ctx.wait_for(
                client, f"{answer} {packet_id}",
                lambda: client.count(answer, packet_id=packet_id) > before, closed_ok=True,
            )  # fmt: skip

    def _stray_breaks(self, copy: Packet, what: str) -> tuple[str, ...]:
        """The client's own rules a STRAY acknowledgement for the copy it holds back breaks:
        those of the wrong answer it is to that copy (:func:`~.answers.misanswers`), where
        the table leaves the entry undefined; none for the right answer or a PUBREL."""
        if isinstance(copy, Publish) and copy.qos:
            awaiting = _AWAITING["PUBLISH", copy.qos]
        elif isinstance(copy, PubRel):
            awaiting = _AWAITING["PUBREL", 0]
        else:
            return ()
        wrong = misanswers(self.edition).get(f"{awaiting} {what}{'_OK' if self.v50 else ''}")
        return wrong.breaks if wrong is not None else ()

    def _misanswer(self, move: Move) -> None:
        """A wrong answer to the first copy held back it is wrong for; the copy stays
        held (the session answers it when the client acknowledges). An answer the table
        leaves undefined carries the client's rules it breaks: the broker may close."""
        client = self.clients[move.client]
        found = self._copy(client, move)
        assert found is not None
        packet_id, awaiting = found
        answer = misanswers(self.edition)[f"{awaiting} {move.what}"]
        client.send_raw(answer.packet(packet_id), breaks=answer.breaks)

    def _invalid(self, move: Move) -> None:
        client = self.clients[move.client]
        if move.what == "over-receive-maximum":
            self._fill_receive_maximum(move)
        client.send_raw(self.invalid_bytes(move), case=True)
        observe(self.ctx, client)
        self.close(client, disconnect=False)  # the connection is the case's: a new one next

    def _fill_receive_maximum(self, move: Move) -> None:
        """MQTT 5.0: hold PUBREC back and publish QoS 2 until the send quota is 0."""
        client = self.clients[move.client]
        client.hold = _hold_all
        while client.session.quota > 0 and len(client.session.in_flight) < MOST_IN_FLIGHT:
            client.publish(self.topic("a"), b"fill", qos=2)
        want = len(client.session.in_flight)
        self.ctx.wait_for(client, f"{want} PUBREC", lambda: len(client.held) >= want)

    def invalid_bytes(self, move: Move) -> bytes:
        """The bytes of an invalid move (the packet the model rejects)."""
        connack = self.clients[move.client].connack or {}
        maximum = declared_by(connack.get("properties") or {}).topic_alias_maximum
        return invalid_packet(move.what, self.topic("a"), self.edition, maximum)

    # -- the end -------------------------------------------------------------------------

    def end(self, settled: Callable[[list[Entry]], bool] | None = None) -> list[Entry]:
        """The example is over: PINGREQ on every open connection, one quiet window (an
        answer still owed is then missing), the clean-up outside the evidence, every
        socket closed. The evidence. ``settled``: the window may end early
        (:meth:`last_quiet`)."""
        if self.ended:
            return self.entries
        self.ended = True
        with contextlib.suppress(Stalled, BrokerClosed, ProbeError, OSError):
            if not self.stalled:
                self.rest()
                self._ping_all()
                self.last_quiet(settled)
        entries = self.entries
        if self.retained or self.kept:
            self.ctx.at_end(self._clean_up)
        with contextlib.suppress(Exception):
            self.ctx.finish()
        self.ctx.abort()  # whatever finish left open
        return entries

    def last_quiet(self, settled: Callable[[list[Entry]], bool] | None) -> None:
        """The last quiet window (recorded as ``quiet``). With ``settled``, it ends as soon
        as the broker has been silent for :data:`QUIET_SHARE` of it and ``settled`` passes
        the evidence with that quiet recorded (every answer owed before it counts as
        missing); else the rest of the window is listened out (a second ``quiet``: the
        judges read what was owed before it, as they would the whole window's)."""
        window = self.ctx.cap(self.example.timing.quiet)
        if settled is None:
            self.ctx.quiet(window)
            return
        started = time.monotonic()
        end = started + window
        gap = window * QUIET_SHARE
        while self.ctx.pump(gap) and time.monotonic() < end:
            pass
        listened = time.monotonic() - started
        self.ctx.recorder.event("quiet", None, seconds=round(listened, 3))
        if listened < window and not settled(self.entries):
            self.ctx.quiet(max(0.0, end - time.monotonic()))

    def _ping_all(self) -> None:
        """PINGREQ on every open connection at once, then each PINGRESP: the broker has
        read everything sent before it."""
        waiting = [(c, c.count("PINGRESP")) for c in self.clients if c.connected]
        for client, _ in waiting:
            client.send_raw(control.PINGREQ)
        for client, before in waiting:
            answered = functools.partial(_more, client, "PINGRESP", before)
            self.ctx.wait_for(client, "PINGRESP", answered, closed_ok=True)

    def _clean_up(self) -> None:
        """Delete the retained messages the example published and discard the sessions it
        kept, all at once and outside the evidence: a connection per kept session (its
        client id, a clean session: 5.0, Clean Start and no Session Expiry Interval) and
        one that publishes an empty retained message (QoS 0) on each topic name, each
        CONNECT then DISCONNECT sent at once; then each connection is read to its end (the
        broker closes after DISCONNECT, having read what came before it)."""
        target, edition = self.example.target, self.edition
        sends: list[bytes] = []
        for number in sorted(self.kept):
            client = self.clients[number]
            client.drop()  # its connection's end; the session is the new one's to discard
            sends.append(control.connect(client.client_id, clean=True, edition=edition))
        if self.retained:
            cleaner = control.connect(f"{self.clients[0].client_id}x", clean=True,
                                      edition=edition)  # fmt: skip
            for topic in sorted(self.retained):
                empty = Publish(topic=topic, payload=b"", qos=0, retain=True,
                                properties=PublishProperties() if self.v50 else None)  # fmt: skip
                cleaner += encode(empty, edition=edition)
            sends.append(cleaner)
        bye = control.disconnect() if self.v50 else control.DISCONNECT
        socks: list[socket.socket] = []
        try:
            for data in sends:
                socks.append(target.connect(self.example.timing.answer))
                socks[-1].sendall(data + bye)
                socks[-1].shutdown(socket.SHUT_WR)
        finally:
            _read_to_end(socks, self.ctx.cap(self.example.timing.answer))


def _read_to_end(socks: list[socket.socket], seconds: float) -> None:
    """Read every socket until the peer closes it (at most ``seconds`` in all); close them."""
    end = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, sock)
        while selector.get_map() and (left := end - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                sock = key.data
                try:
                    data = sock.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    selector.unregister(sock)
    for sock in socks:
        sock.close()


#: the state a held copy leaves the server's flow in, by the copy's type and QoS
_AWAITING = {copy: state for state, copy in COPIES.items()}

#: the moves after which the broker may send other clients something (a copy, a
#: retained message, a re-send): the world listens until it falls quiet
FORWARDING = frozenset({
    MoveKind.PUBLISH, MoveKind.RESEND, MoveKind.ACKNOWLEDGE, MoveKind.CONNECT,
    MoveKind.SUBSCRIBE, MoveKind.INVALID, MoveKind.MISANSWER,
})  # fmt: skip


def invalid_packet(what: str, topic: str, edition: Edition, alias_maximum: int = 0) -> bytes:
    """The packet of the invalid move ``what`` on ``topic`` (5.0: ``alias_maximum`` is
    the server's Topic Alias Maximum, which ``alias-above-maximum`` exceeds)."""
    unused = STRAY_PACKET_ID.to_bytes(2, "big")
    if what == "puback-flags":
        return b"\x42\x02" + unused
    if what == "pubrel-flags":
        return b"\x60\x02" + unused
    if what == "puback-length":  # 3.x: a PUBACK is its packet identifier, nothing more
        return b"\x40\x03" + unused + b"\x00"
    if what == "over-receive-maximum":
        extra = Publish(topic=topic, payload=b"one too many", qos=2, packet_id=STRAY_PACKET_ID,
                        properties=PublishProperties())  # fmt: skip
        return encode(extra, edition=edition)
    first, packet_id, leaf = {
        "publish-qos3": (0x36, 1, b""), "packet-id-zero": (0x32, 0, b""),
        "topic-wildcard": (0x30, None, b"/+"), "dup-qos0": (0x38, None, b""),
        "alias-above-maximum": (0x30, None, b""), "topic-nul": (0x30, None, b"/\x00"),
        "topic-ill-formed": (0x30, None, b"/\xff"),
    }[what]  # fmt: skip
    name = topic.encode() + leaf
    if edition is not Edition.V50:
        return publish_bytes(first, name, packet_id)
    properties = alias_property(alias_maximum + 1) if what == "alias-above-maximum" else b""
    return publish50_bytes(first, name, packet_id, properties)


_ACTIONS = {
    MoveKind.CONNECT: World._connect,
    MoveKind.PUBLISH: World._publish,
    MoveKind.RESEND: World._resend,
    MoveKind.SUBSCRIBE: World._subscribe,
    MoveKind.UNSUBSCRIBE: World._unsubscribe,
    MoveKind.WITHHOLD: World._withhold,
    MoveKind.ACKNOWLEDGE: World._acknowledge,
    MoveKind.DISCONNECT: World._disconnect,
    MoveKind.DROP: World._drop,
    MoveKind.WAIT: World._wait,
    MoveKind.STRAY: World._stray,
    MoveKind.MISANSWER: World._misanswer,
    MoveKind.INVALID: World._invalid,
}
