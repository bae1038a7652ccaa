"""The live world of one example against a client library: pubproof plays the server.

Rules / theory of operation
---------------------------
Exploring a client library, the moves are the *server's*: the client is a library made
to act by its driver (the driver protocol of :mod:`pubproof.probe.clients.driver`), which
takes a plan when it starts (a clean session or not, one subscription, the messages its
application publishes at once) and otherwise only reconnects when its connection is lost.
A :class:`ClientWorld` is one example: the server (:func:`server_for`, the one place this
module reaches the server pubproof plays), the driver started with the plan its first
move (CONNECT) gives, and then the server's moves on the client's current connection:

- PUBLISH: the server publishes to the client (through the server's reference session),
  on a topic name its subscription matches or not;
- RESEND: the server sends its first unacknowledged PUBLISH again with DUP 1;
- WITHHOLD and ACKNOWLEDGE: the server keeps the client's packets from its session (no
  PUBACK, PUBREC, PUBREL or PUBCOMP goes back), then hands them over;
- DROP: the server closes the connection; the client reconnects, and the server answers
  its CONNECT as the session says (resumed or not);
- STRAY: an acknowledgement for a packet identifier no flow uses (a PUBREL is owed a
  PUBCOMP [MQTT-4.3.3-2]);
- INVALID: a packet the model rejects; the client must close (MQTT 3.1.1; 5.0: SHOULD);
- WAIT: a moment passes.

The evidence is the client probe's (``to-client``/``from-client``, ``app`` events for
what the application was handed), judged by the client probe's judges
(:func:`pubproof.probe.clients.judge.client_findings`) and by :func:`delivery_findings`:
a QoS 2 message handed to the application more than once, a QoS 0 one more than once, a
QoS 1 or 2 message the client acknowledged but never handed over.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pubproof.judge.findings import MISSING, VIOLATION, Finding, Source
from pubproof.model.editions import Edition
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.judge import ClientView, client_findings
from pubproof.probe.clients.server import Conn, Stalled
from pubproof.probe.evidence import Entry
from pubproof.probe.findings import missing, violation
from pubproof.reference.packets import Packet, Publish
from pubproof.testing.moves import STRAY_PACKET_ID, Move, MoveKind
from pubproof.testing.verdicts import Failure, Verdict, key_of
from pubproof.testing.world import invalid_packet

#: seconds the client has to answer, to reconnect, to close after an invalid packet
ANSWER_SECONDS = 2.0
#: seconds the world listens after each move for what the client does
SETTLE_SECONDS = 0.05
#: an example's hard deadline, seconds
EXAMPLE_SECONDS = 60.0
#: the rule a QoS 2 message handed over twice breaks, by edition
ONCE = {Edition.V50: ("MQTT-4.3.3-10",)}
ONCE_3X = ("MQTT-4.3.3-1", "MQTT-4.3.3-2")


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientExample:
    """What one client example runs: the driver, the edition, its place in the run."""

    argv: tuple[str, ...]
    edition: Edition
    readings: Mapping[str, str]
    run_id: str
    number: int


def server_for(example: ClientExample) -> ClientContext:
    """The server pubproof plays for one example, with the driver's command line: the one
    place exploration reaches it (``pubproof serve`` will stand behind it)."""
    return ClientContext(
        argv=example.argv, edition=example.edition, readings=example.readings,
        seconds=EXAMPLE_SECONDS, answer=ANSWER_SECONDS, run_id=example.run_id,
        check_id=f"x{example.number}", check_no=example.number,
    )  # fmt: skip


def _hold_all(packet: Packet) -> bool:
    return True


class ClientWorld:
    """One example of a client exploration."""

    def __init__(self, example: ClientExample) -> None:
        self.example = example
        self.edition = example.edition
        self.ctx = server_for(example)
        self.steps: list[Move] = []
        self.stalled = False
        self.ended = False
        self.expiring = False
        self.conn: Conn | None = None
        self.connections = 0

    @property
    def entries(self) -> list[Entry]:
        return list(self.ctx.recorder.entries)

    @property
    def number(self) -> int:
        return self.example.number

    def make(self, move: Move) -> None:
        """Make the server's ``move`` (recorded as a ``step``; ``skipped`` when it cannot
        be made: the client went away)."""
        number = len(self.steps)
        self.steps.append(move)
        why = self._unable(move)
        if why:
            self.ctx.recorder.event("skipped", None, n=number, move=move.to_json(), why=why)
            return
        self.ctx.recorder.event("step", None, n=number, move=move.to_json())
        try:
            _ACTIONS[move.kind](self, move)
            self.ctx.quiet(SETTLE_SECONDS)
        except Stalled:
            self.stalled = True  # recorded as a timeout: the judges read it

    def _unable(self, move: Move) -> str:
        if self.stalled or self.ended:
            return "the example's moves have ended"
        if move.kind is MoveKind.CONNECT:
            return "" if self.conn is None else "the driver runs already"
        if self.conn is None or self.conn.closed:
            return "the client's connection is closed"
        if move.kind is MoveKind.RESEND and self._resendable() is None:
            return "no PUBLISH of the server's awaits an answer"
        return ""

    def _resendable(self) -> Publish | None:
        for awaiting, message in self.ctx.session.in_flight.values():
            if str(getattr(awaiting, "value", awaiting)) in ("PUBACK", "PUBREC"):
                assert isinstance(message, Publish)
                return message
        return None

    # -- the moves -----------------------------------------------------------------------

    def _start(self, move: Move) -> None:
        """The driver starts: one subscription (``move.topic`` as the filter, ``move.qos``),
        the messages of ``move.what`` (a QoS digit each) published at once."""
        ctx = self.ctx
        messages = [(ctx.topic("out"), int(q), f"c{n}".encode(), False)
                    for n, q in enumerate(move.what)]  # fmt: skip
        self.conn = ctx.start(subscribe=[(ctx.topic(move.topic), move.qos)], publish=messages,
                              clean=move.clean)  # fmt: skip
        self.connections = 1

    def _publish(self, move: Move) -> None:
        assert self.conn is not None
        payload = b"" if move.empty else f"s{len(self.steps) - 1}".encode()
        self.conn.publish(self.ctx.topic(move.topic), payload, move.qos, move.retain)

    def _resend(self, move: Move) -> None:
        assert self.conn is not None
        message = self._resendable()
        assert message is not None
        self.conn.send(replace(message, dup=True))

    def _withhold(self, move: Move) -> None:
        assert self.conn is not None
        self.conn.hold = _hold_all

    def _acknowledge(self, move: Move) -> None:
        assert self.conn is not None
        self.conn.release()

    def _drop(self, move: Move) -> None:
        assert self.conn is not None
        self.conn.drop("the server's move")
        self._reconnected()

    def _reconnected(self) -> None:
        """Wait for the client to come back (the driver reconnects)."""
        self.connections += 1
        self.conn = self.ctx.reconnected(self.connections)

    def _stray(self, move: Move) -> None:
        assert self.conn is not None
        first = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}[move.what]
        self.conn.send_raw(bytes((first, 2)) + STRAY_PACKET_ID.to_bytes(2, "big"))

    def _invalid(self, move: Move) -> None:
        assert self.conn is not None
        conn = self.conn
        conn.send_raw(invalid_packet(move.what, self.ctx.topic("a"), self.edition), case=True)
        with contextlib.suppress(Stalled):  # the close judge says whether it should close
            self.ctx.wait_for("the client to close", lambda: conn.closed, ANSWER_SECONDS)
        if conn.closed:
            self._reconnected()
        else:
            conn.drop("after the invalid packet")
            self._reconnected()

    def _wait(self, move: Move) -> None:
        self.ctx.quiet(move.seconds)

    def end(self) -> list[Entry]:
        """The example is over: a last quiet window, the driver stopped, every socket
        closed. The evidence."""
        if not self.ended:
            self.ended = True
            with contextlib.suppress(Stalled):
                if not self.stalled and self.conn is not None:
                    self.ctx.quiet(0.3)
            entries = self.entries
            self.ctx.stop()
            self._entries = entries
        return self._entries


_ACTIONS = {
    MoveKind.CONNECT: ClientWorld._start,
    MoveKind.PUBLISH: ClientWorld._publish,
    MoveKind.RESEND: ClientWorld._resend,
    MoveKind.WITHHOLD: ClientWorld._withhold,
    MoveKind.ACKNOWLEDGE: ClientWorld._acknowledge,
    MoveKind.DROP: ClientWorld._drop,
    MoveKind.STRAY: ClientWorld._stray,
    MoveKind.INVALID: ClientWorld._invalid,
    MoveKind.WAIT: ClientWorld._wait,
}


def delivery_findings(view: ClientView) -> list[Finding]:
    """What the application was handed of what the server published: a QoS 2 or QoS 0
    message more than once, a QoS 1 or 2 message the client acknowledged but never
    handed over (a PUBACK, or a PUBREC and later a PUBCOMP)."""
    findings: list[Finding] = []
    answered = {(e.get("type"), e.get("packet_id")) for e in view.entries
                if e.get("dir") == "from-client"}  # fmt: skip
    seen: set[str] = set()
    for entry in view.packets("PUBLISH", "to-client"):
        payload = entry.get("payload_hex")
        if "error" in entry or entry.get("case") or entry.get("dup") or payload in seen:
            continue
        seen.add(str(payload))
        got = [m for m in view.messages() if m.get("payload_hex") == payload]
        qos, packet_id = entry.get("qos"), entry.get("packet_id")
        label = f"the message {bytes.fromhex(str(payload))!r} (QoS {qos})"
        if len(got) > 1 and qos in (0, 2):
            rules = ("MQTT-4.3.1-1",) if qos == 0 else ONCE.get(view.edition, ONCE_3X)
            findings.append(violation(f"the application got {label} {len(got)} times", *rules,
                                      source=Source.CHECK))  # fmt: skip
        owned = ("PUBACK", packet_id) in answered if qos == 1 else (
            ("PUBCOMP", packet_id) in answered and ("PUBREC", packet_id) in answered
        )  # fmt: skip
        if not got and qos in (1, 2) and owned:
            rule = "MQTT-4.3.2-2" if qos == 1 else "MQTT-4.3.3-2"
            findings.append(missing(f"the application never got {label}, which the client "
                                    "acknowledged", rule, source=Source.CHECK))  # fmt: skip
    return findings


def judge_client_example(
    entries: Sequence[Entry], edition: Edition, readings: Mapping[str, str], *,
    final: bool = True,
) -> Verdict:  # fmt: skip
    """The client probe's judges and :func:`delivery_findings` on an example's evidence."""
    view = ClientView(entries, edition, readings)
    found = client_findings(view, delivery_findings)
    alive = view.client_alive
    failures = [
        Failure(key=key_of(f), rules=f.rules, verdict=f.verdict, source=f.source,
                message=f.message)
        for f in found
        if f.verdict == VIOLATION or (final and alive and f.verdict == MISSING)
    ]  # fmt: skip
    errors = tuple(f.message for f in found if f.verdict == "error")
    return Verdict(findings=tuple(found), failures=tuple(failures), errors=errors,
                   broker_alive=alive)  # fmt: skip
