"""The moves of an exploration: what one client may do next, as data.

Rules / theory of operation
---------------------------
An exploration is a sequence of *moves*, each made by one of a few clients of the judged
server (or, exploring a client library, by pubproof's server): connect (a clean session
or not), publish (each QoS, RETAIN, a topic that some subscription matches or none, 5.0
properties and Topic Aliases), re-send a PUBLISH with DUP before its flow ends,
subscribe and unsubscribe (wildcards, 5.0 Subscription Options and Identifiers), withhold
the acknowledgements the client owes and send them later, disconnect or lose the
connection, wait (the clock Message Expiry reads), a packet identifier nobody uses
(a PUBREL, PUBACK, PUBREC or PUBCOMP for a flow that does not exist: the model says what
the receiver answers), a wrong answer to a copy the client holds back (MISANSWER: the
wrong kind of acknowledgement, or in 5.0 an error Reason Code, :mod:`.answers`; made,
like the invalid move, only by an example the run's chance lets make one), and one
*invalid* move: a packet the model rejects, which the receiver must close the connection
for (:data:`INVALID`).

A move is a frozen value with a JSON form (:meth:`Move.to_json`): the reproducer stores
the steps as they were made, and ``pubproof replay`` makes them again. Whether a move is
*enabled* is the :class:`Plan`'s to say, from the moves made so far and nothing else
(which client is connected, which withholds its acknowledgements, how many of its
messages then await one): the state machine's preconditions (:mod:`.machine`) must not
depend on what the live peer does, or Hypothesis could not replay an example to shrink
it. A move the live world cannot make after all (the peer closed the connection, its
quota is spent) is skipped there, and recorded as skipped (:mod:`.world`).

Topic names and filters are leaves under the example's own prefix
(``pubproof/RUN/eN/``), chosen from small sets so that filters and names meet: every
filter of :data:`FILTERS` matches some name of :data:`TOPICS` and misses others.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from pubproof.model.editions import Edition
from pubproof.model.topic_filters import matches
from pubproof.testing.answers import ANSWERS


class MoveKind(enum.Enum):
    """What a move does."""

    CONNECT = "connect"
    PUBLISH = "publish"
    RESEND = "resend"  # the same PUBLISH again, DUP 1, before its flow ended
    SUBSCRIBE = "subscribe"
    UNSUBSCRIBE = "unsubscribe"
    WITHHOLD = "withhold"  # keep every packet from the server from the client's session
    ACKNOWLEDGE = "acknowledge"  # hand the kept packets to the session: it answers them
    #: answer the first copy held back that ``what`` is a wrong answer for (an
    #: acknowledgement its session would not send there, :mod:`.answers`)
    MISANSWER = "misanswer"
    DISCONNECT = "disconnect"  # DISCONNECT, then close
    DROP = "drop"  # close without DISCONNECT: the connection is lost
    WAIT = "wait"  # listen for ``seconds``: the clock Message Expiry reads
    STRAY = "stray"  # an acknowledgement for a packet identifier no flow uses
    INVALID = "invalid"  # a packet the model rejects (one per example at most)


#: the topic names a PUBLISH may have (leaves under the example's prefix)
TOPICS = ("a", "b", "a/b", "a/c", "b/a")
#: the topic filters a SUBSCRIBE may hold: exact, single-level, multi-level
FILTERS = ("a", "b", "a/b", "+", "a/+", "+/b", "#", "a/#")
#: the acknowledgements a STRAY move sends for an unused packet identifier
STRAY_KINDS = ("PUBREL", "PUBACK", "PUBREC", "PUBCOMP")
#: the packet identifier of a STRAY move (no flow of the explorer's uses it: the clients'
#: sessions number their flows from 1, and a run holds far fewer)
STRAY_PACKET_ID = 4242
#: a PUBLISH's duplicates sent at once, at most (the matrix's
#: ``qos2.duplicates-before-pubrel`` sends three)
MOST_DUPLICATES = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Invalid:
    """A packet the model rejects, and the rule it breaks (the receiver must close)."""

    name: str
    title: str
    editions: tuple[Edition, ...]


_ALL = (Edition.V31, Edition.V311, Edition.V50)
_3X = (Edition.V31, Edition.V311)
#: the invalid moves, by name (how each is laid out: :func:`pubproof.testing.world.invalid_bytes`)
INVALID: Mapping[str, Invalid] = {
    i.name: i
    for i in (
        Invalid(name="publish-qos3", title="a PUBLISH with both QoS bits set", editions=_ALL),
        Invalid(name="packet-id-zero", title="a QoS 1 PUBLISH with packet identifier 0",
                editions=_ALL),
        Invalid(name="topic-wildcard", title="a PUBLISH whose topic name holds '+'",
                editions=_ALL),
        Invalid(name="puback-flags", title="a PUBACK with the reserved flags 0010",
                editions=_ALL),
        Invalid(name="pubrel-flags", title="a PUBREL with flags 0000 (reserved: 0010)",
                editions=_ALL),
        Invalid(name="dup-qos0", title="a QoS 0 PUBLISH with DUP set",
                editions=(Edition.V311, Edition.V50)),
        # 3.1 leaves a topic name's characters to a reading (topic-rules)
        Invalid(name="topic-nul", title="a PUBLISH whose topic name holds U+0000",
                editions=(Edition.V311, Edition.V50)),
        Invalid(name="topic-ill-formed", title="a PUBLISH whose topic name is not "
                "well-formed UTF-8 (the byte 0xFF)", editions=(Edition.V311, Edition.V50)),
        Invalid(name="puback-length", title="a PUBACK with Remaining Length 3", editions=_3X),
        Invalid(name="alias-above-maximum",
                title="a PUBLISH whose Topic Alias is above the server's Topic Alias Maximum",
                editions=(Edition.V50,)),
        Invalid(name="over-receive-maximum",
                title="one QoS 2 PUBLISH more than the server's Receive Maximum in flight",
                editions=(Edition.V50,)),
    )
}  # fmt: skip


def invalid_moves(edition: Edition) -> tuple[str, ...]:
    """The invalid moves of ``edition``, by name."""
    return tuple(name for name, i in INVALID.items() if edition in i.editions)


@dataclass(frozen=True, slots=True, kw_only=True)
class Move:
    """One step of an exploration: a client (by its number) and what it does.

    Only the fields of the move's kind mean anything; the others keep their defaults
    (and the JSON form leaves them out)."""

    kind: MoveKind
    client: int = 0
    #: PUBLISH: the topic name's leaf (:data:`TOPICS`); SUBSCRIBE, UNSUBSCRIBE: the
    #: filter's (:data:`FILTERS`)
    topic: str = ""
    qos: int = 0
    retain: bool = False
    #: CONNECT: a clean session (3.x Clean Session, 5.0 Clean Start)
    clean: bool = True
    #: WAIT: seconds
    seconds: float = 0.0
    #: STRAY: the acknowledgement's type; INVALID: the invalid move's name; MISANSWER: the
    #: sender table's input it sends (``PUBREC``, ``PUBACK_ERROR``: :mod:`.answers`)
    what: str = ""
    #: STRAY: the packet identifier of the first packet the client holds back (a flow in
    #: progress: the wrong acknowledgement for it), not one no flow uses
    held: bool = False
    #: PUBLISH at QoS 1 or 2 by a client that holds back its answers (3.x): copies of it
    #: with DUP 1 sent at once after it, before any answer, as a publisher that re-sends
    #: in haste does (a broker that takes each for a new message delivers it again)
    duplicates: int = 0
    #: ACKNOWLEDGE: the session answers what was kept, and the client keeps holding back
    #: what comes next (the PUBREL after its PUBREC: the server's flow awaits PUBCOMP)
    keep: bool = False
    #: PUBLISH with RETAIN: a zero-byte payload, which deletes the topic's retained message
    #: and is not kept itself [MQTT-3.3.1-10] [MQTT-3.3.1-11] (once per topic in an
    #: example: copies are told apart by their topic name and payload)
    empty: bool = False
    # -- MQTT 5.0 -------------------------------------------------------------------------
    #: CONNECT: the Session Expiry Interval (seconds; 0: the session ends with the
    #: connection)
    session_expiry: int = 0
    #: CONNECT: the client gives topic names Topic Aliases (up to the server's maximum),
    #: and declares a Topic Alias Maximum of its own
    aliases: bool = False
    #: CONNECT: the client declares a small Receive Maximum (0: none declared)
    receive_maximum: int = 0
    #: PUBLISH: the Message Expiry Interval (seconds; 0: none)
    expiry: int = 0
    #: PUBLISH: the other properties a server forwards unchanged (Payload Format
    #: Indicator, Content Type, Response Topic, Correlation Data, a User Property)
    properties: bool = False
    #: SUBSCRIBE: the Subscription Options and a Subscription Identifier (0: none)
    no_local: bool = False
    retain_as_published: bool = False
    retain_handling: int = 0
    identifier: int = 0

    def __post_init__(self) -> None:
        if self.client < 0 or self.qos not in (0, 1, 2) or self.seconds < 0:
            raise ValueError(f"a move's client, QoS and seconds: {self!r}")
        if self.kind is MoveKind.PUBLISH and self.topic not in TOPICS:
            raise ValueError(f"a PUBLISH's topic is one of {TOPICS}, not {self.topic!r}")
        if self.kind in (MoveKind.SUBSCRIBE, MoveKind.UNSUBSCRIBE) and self.topic not in FILTERS:
            raise ValueError(f"a topic filter is one of {FILTERS}, not {self.topic!r}")
        if self.kind is MoveKind.INVALID and self.what not in INVALID:
            raise ValueError(f"an invalid move is one of {tuple(INVALID)}, not {self.what!r}")
        if self.kind is MoveKind.MISANSWER and self.what not in ANSWERS:
            raise ValueError(f"a wrong answer is one of {sorted(ANSWERS)}: {self.what!r}")
        if self.keep and self.kind is not MoveKind.ACKNOWLEDGE:
            raise ValueError(f"only an acknowledgement keeps holding back: {self!r}")
        if self.kind is MoveKind.STRAY and self.what not in STRAY_KINDS:
            raise ValueError(f"a stray acknowledgement is one of {STRAY_KINDS}: {self.what!r}")
        if self.duplicates and (
            self.kind is not MoveKind.PUBLISH
            or not self.qos
            or not 0 < self.duplicates <= MOST_DUPLICATES
        ):
            raise ValueError(
                f"duplicates are of a PUBLISH at QoS 1 or 2, at most {MOST_DUPLICATES}: {self!r}"
            )
        if self.empty and not (self.kind is MoveKind.PUBLISH and self.retain):
            raise ValueError(f"an empty payload is a retained PUBLISH's: {self!r}")
        if self.retain_handling not in (0, 1, 2):
            raise ValueError(f"Retain Handling is 0, 1 or 2, not {self.retain_handling}")

    def to_json(self) -> dict[str, Any]:
        """The move as JSON: its kind, client and the fields that differ from the defaults."""
        out: dict[str, Any] = {"kind": self.kind.value, "client": self.client}
        for name, value in asdict(self).items():
            if name not in ("kind", "client") and value != _DEFAULTS[name]:
                out[name] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Move:
        """The move a JSON form gives (``ValueError`` for anything else)."""
        unknown = set(data) - set(_DEFAULTS) - {"kind"}
        if unknown:
            raise ValueError(f"a move has no field {sorted(unknown)}")
        try:
            kind = MoveKind(data["kind"])
        except (KeyError, ValueError):
            raise ValueError(f"a move's kind is one of {[k.value for k in MoveKind]}") from None
        return cls(kind=kind, **{k: v for k, v in data.items() if k != "kind"})

    def describe(self) -> str:
        """The move in a few words (``c1 publish a/b QoS 1 retain``)."""
        who = f"c{self.client}"
        k = self.kind
        if k is MoveKind.CONNECT:
            extra = f" session-expiry {self.session_expiry}" if self.session_expiry else ""
            extra += " aliases" if self.aliases else ""
            extra += f" receive-maximum {self.receive_maximum}" if self.receive_maximum else ""
            return f"{who} connect {'clean' if self.clean else 'keep session'}{extra}"
        if k is MoveKind.PUBLISH:
            extra = " retain" if self.retain else ""
            extra += " empty payload" if self.empty else ""
            extra += f" expiry {self.expiry}" if self.expiry else ""
            extra += " properties" if self.properties else ""
            extra += f" and {self.duplicates} duplicates at once" if self.duplicates else ""
            return f"{who} publish {self.topic} QoS {self.qos}{extra}"
        if k is MoveKind.SUBSCRIBE:
            extra = " no-local" if self.no_local else ""
            extra += " retain-as-published" if self.retain_as_published else ""
            extra += f" retain-handling {self.retain_handling}" if self.retain_handling else ""
            extra += f" identifier {self.identifier}" if self.identifier else ""
            return f"{who} subscribe {self.topic} QoS {self.qos}{extra}"
        if k is MoveKind.UNSUBSCRIBE:
            return f"{who} unsubscribe {self.topic}"
        if k is MoveKind.WAIT:
            return f"wait {self.seconds} s"
        if k is MoveKind.STRAY and self.held:
            return f"{who} {self.what} for the first packet it holds back"
        if k is MoveKind.STRAY:
            return f"{who} {self.what} {STRAY_PACKET_ID} (no flow uses it)"
        if k is MoveKind.INVALID:
            return f"{who} invalid: {INVALID[self.what].title}"
        if k is MoveKind.MISANSWER:
            return f"{who} {self.what} for the first copy it holds back that it is wrong for"
        if k is MoveKind.ACKNOWLEDGE and self.keep:
            return f"{who} acknowledge, and keep holding back"
        return f"{who} {k.value}"


_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in fields(Move) if f.name != "kind"
}  # every field but the kind has a default


@dataclass(slots=True)
class ClientPlan:
    """What the moves so far say of one client."""

    connected: bool = False
    withholding: bool = False
    #: QoS 1 and 2 messages published while withholding (their acknowledgements kept)
    unacknowledged: int = 0
    #: its subscriptions (filter leaf: QoS), kept across connections until a clean one
    filters: dict[str, int] = field(default_factory=dict)
    #: its session outlives the connection (its last CONNECT: 3.x Clean Session 0, 5.0 a
    #: Session Expiry Interval)
    lasting: bool = False
    #: QoS 1 and 2 messages published on a topic its subscriptions match at QoS 1 or 2
    #: while it withholds: copies it holds back, most likely (the broker decides)
    copies: int = 0
    #: of those, QoS 2 messages a subscription matches at QoS 2: copies whose flow at the
    #: server awaits PUBREC, most likely; after an acknowledgement that keeps holding back
    #: (the PUBREL that follows the PUBREC is kept), ``releases``: flows awaiting PUBCOMP
    copies2: int = 0
    releases: int = 0
    #: QoS 2 messages it published while withholding: the server's receiver holds their
    #: packet identifiers until the PUBREL the client keeps back (``ID_HELD``)
    published2: int = 0

    def wants(self, topic: str, qos: int = 1) -> bool:
        """Whether one of its subscriptions matches ``topic`` at ``qos`` or more."""
        return any(q >= qos and matches(f, topic) for f, q in self.filters.items())

    def awaiting(self) -> set[str]:
        """The states what it holds back most likely leaves the server's flows in: its
        copies, the sender table's ``AWAIT_PUBREC`` and ``AWAIT_PUBCOMP``; its own QoS 2
        messages, the receiver table's ``ID_HELD``."""
        held = (("AWAIT_PUBREC", self.copies2), ("AWAIT_PUBCOMP", self.releases),
                ("ID_HELD", self.published2))  # fmt: skip
        return {state for state, copies in held if copies}


@dataclass(slots=True)
class Plan:
    """The clients' state as the moves made so far leave it: which moves are enabled."""

    edition: Edition
    clients: int
    #: MQTT 5.0: the server's Receive Maximum (what a client may have unacknowledged)
    receive_maximum: int = 65535
    invalid_made: bool = False
    states: list[ClientPlan] = field(default_factory=list)
    #: the topics (leaves) an empty retained PUBLISH has been sent to
    emptied: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not 1 <= self.clients <= 9:
            raise ValueError(f"1 to 9 clients, not {self.clients}")
        self.states = [ClientPlan() for _ in range(self.clients)]

    def enabled(self, kind: MoveKind, client: int) -> bool:
        """Whether ``client`` can make a move of ``kind`` now."""
        state = self.states[client]
        if kind is MoveKind.WAIT:
            return True
        if kind is MoveKind.CONNECT:
            return not state.connected
        if not state.connected:
            return False
        if kind is MoveKind.PUBLISH:
            return state.unacknowledged < self.receive_maximum
        if kind is MoveKind.RESEND:
            return state.withholding and state.unacknowledged > 0
        if kind is MoveKind.WITHHOLD:
            return not state.withholding
        if kind is MoveKind.ACKNOWLEDGE:
            return state.withholding
        if kind is MoveKind.MISANSWER:  # a copy to answer, most likely
            return state.withholding and state.copies > 0
        if kind is MoveKind.INVALID:
            return not self.invalid_made
        return True

    def can_empty(self, topic: str) -> bool:
        """Whether a retained PUBLISH to ``topic`` may have an empty payload now: once per
        topic, so that each message keeps a topic name and payload of its own."""
        return topic not in self.emptied

    def holds(self, move: Move) -> bool:
        """Whether the server may hold the message of the PUBLISH ``move`` (just made) for
        a while instead of sending every copy at once, so that its Message Expiry can
        delete it [MQTT-3.3.2-5] or shorten the interval a late copy carries
        [MQTT-3.3.2-6]: as its topic's retained message (a zero-byte one is not kept
        [MQTT-3.3.1-11]); QoS 2 from a publisher that holds back the PUBREC, until its
        PUBREL (a server that owns the message then, Method A); or queued for a
        subscription of a session whose client is away (the session outlives the
        connection) or holds back its answers (past the Receive Maximum, the copies
        wait). On the safe side: a session the server ended may still count, any QoS."""
        if move.retain and not move.empty:
            return True
        if move.qos == 2 and self.states[move.client].withholding:
            return True
        return any(
            (s.withholding if s.connected else s.lasting)
            and any(matches(f, move.topic) for f in s.filters)
            for s in self.states
        )

    def able(self, kind: MoveKind) -> list[int]:
        """The clients that can make a move of ``kind`` now."""
        return [n for n in range(self.clients) if self.enabled(kind, n)]

    def apply(self, move: Move) -> None:
        """The state after ``move`` (``ValueError`` if it is not enabled)."""
        if not self.enabled(move.kind, move.client):
            raise ValueError(f"not enabled now: {move.describe()}")
        state = self.states[move.client]
        if move.duplicates and not state.withholding:
            raise ValueError(f"duplicates by a client that answers at once: {move.describe()}")
        if move.empty:
            if not self.can_empty(move.topic):
                raise ValueError(f"a second empty payload on one topic: {move.describe()}")
            self.emptied.add(move.topic)
        kind = move.kind
        kept = {} if move.kind is MoveKind.CONNECT and move.clean else state.filters
        if kind is MoveKind.CONNECT:
            lasting = move.session_expiry > 0 if self.edition is Edition.V50 else not move.clean
            self.states[move.client] = ClientPlan(connected=True, filters=kept, lasting=lasting)
        elif kind in (MoveKind.DISCONNECT, MoveKind.DROP, MoveKind.INVALID):
            self.states[move.client] = ClientPlan(filters=kept, lasting=state.lasting)
            self.invalid_made = self.invalid_made or kind is MoveKind.INVALID
        elif kind is MoveKind.SUBSCRIBE:
            state.filters[move.topic] = move.qos
        elif kind is MoveKind.UNSUBSCRIBE:
            state.filters.pop(move.topic, None)
        elif kind is MoveKind.WITHHOLD:
            state.withholding = True
        elif kind is MoveKind.MISANSWER:
            # the wrong answer may end the server's flow (an error Reason Code) or the
            # connection (the client's protocol violation): the plan no longer knows what
            # awaits what, and leads no move there (a resumed session after it would meet
            # a flow the client's own answer ended)
            state.copies2 = state.releases = state.published2 = 0
        elif kind is MoveKind.ACKNOWLEDGE and not move.keep:
            state.withholding, state.unacknowledged, state.copies = False, 0, 0
            state.copies2 = state.releases = state.published2 = 0
        elif kind is MoveKind.ACKNOWLEDGE:  # PUBREC for each QoS 2 copy; its PUBREL kept
            state.releases, state.copies2 = state.releases + state.copies2, 0
            state.published2 = 0  # PUBREL for each PUBREC: the server's identifiers freed
        # ACKNOWLEDGE with keep: the PUBACKs handed over free quota, the PUBRECs do not
        # (PUBCOMP is held back): counted as none freed, a bound on the safe side
        if kind is MoveKind.PUBLISH and move.qos:
            state.unacknowledged += state.withholding
            state.published2 += state.withholding and move.qos == 2
            for other in self.states:
                holds = other.connected and other.withholding
                other.copies += holds and other.wants(move.topic)
                other.copies2 += holds and move.qos == 2 and other.wants(move.topic, 2)
