"""The cross-connection stage's fast twin of the distribution judge: one topic of one
server judged at the speed of a capture, for the traffic where the readable judge finds
nothing; anything else is handed back to it.

Rules / theory of operation
---------------------------
The readable judge (:mod:`pubproof.judge.distribution`, ``capture`` mode) drives the
distribution model, which decides each message's copies by walking its decision graphs
for every session: tens of microseconds per session and copy. A capture's topic is most
often plain traffic the model accepts: clean sessions seen from their CONNECT, each
subscribing with the default options, each message forwarded once to each matching
session at the highest QoS its subscriptions grant, acknowledged, in order. For that
traffic :func:`judge` computes what the readable judge would write, its ledger (what
became of every PUBLISH in and out: :mod:`pubproof.judge.distribution_ledger`), with a
table look-up per event; and it finds nothing, since there is nothing to find. As the
readable judge, it takes a message at its acknowledgement, or at its first copy if the
server forwards it before (a server may), even after its publisher's link ended, and
matches a copy to the first owed alike (of several, the first whose QoS, RETAIN and
forwarded properties are the copy's). A copy of a message no PUBLISH showed, to a session
subscribed to the topic, is unknown (publication-unseen) here as there; so is a copy of a
message not owed the session that the server took while the session changed or before it
subscribed (subscription-changing).

It gives up (returns None, and the stage runs the readable judge on the topic from the
twin's last quiet point, :mod:`pubproof.pipeline.handback`, or from its first row) at the
first thing outside that traffic: a link whose CONNECT it did not see or whose session
was resumed or taken over, lost traffic, a PUBLISH of no topic (a Topic Alias no mapping
seen stands for), a CONNACK or an acknowledgement that refuses, UNSUBSCRIBE, a
subscription with options other than the defaults or a Shared Subscription, a filter
subscribed twice, a topic name or filter the model would refuse, two editions, a 5.0
Message Expiry Interval or Session Expiry Interval, a client back while a message of its
ended link is in flight, a copy owed and not sent to a session that changed (a CONNECT or
SUBSCRIBE unanswered) while its message was in flight (the readable judge leaves it
unknown), a publisher's re-send, a copy that is no copy owed (unowed, another copy of one
sent, a re-send), a copy alike several messages in flight or alike none of several copies
owed, a copy whose QoS, RETAIN, Subscription Identifiers or forwarded properties are not
the model's, DUP on a 5.0 first copy, an order the model does not allow, a 5.0 session
whose send quota (its Receive Maximum) is used up as the capture ends (the readable
judge's ``quota-full``), and a copy owed that a capture proves missing (by the order of
4.6 or past the patience). Each of those is what the readable judge finds, leaves open or
counts otherwise: only it says so.

``tests/test_pipeline_servers_fast.py`` holds the two equal: on every topic of synthetic
captures with and without the broker's faults, in both editions, the twin gives the
readable judge's rows wherever it does not give up.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pubproof.judge.distribution_capture import PATIENCE
from pubproof.model.editions import Edition
from pubproof.model.topic_filters import filter_problem, name_problem, subscription_matches
from pubproof.pipeline.fast.distribution_quiet import carried
from pubproof.pipeline.fast.distribution_state import Link as _Link
from pubproof.pipeline.fast.distribution_state import Message as _Message
from pubproof.pipeline.fast.distribution_state import Owed as _Owed
from pubproof.pipeline.fast.distribution_state import Session as _Session

# the columns of an ``events`` row (pubproof.pipeline.tables.EVENTS), by position
T: Final = 3
CONNECTION: Final = 5
DIRECTION: Final = 9
TYPE: Final = 10
QOS: Final = 11
DUP: Final = 12
RETAIN: Final = 13
PACKET_ID: Final = 14
CODE: Final = 15
DIGEST: Final = 16
DETAIL: Final = 18
TOPIC: Final = 2
#: the properties a 5.0 server forwards unchanged (the readable judge's FORWARDED)
FORWARDED: Final = (
    "payload_format_indicator", "response_topic", "correlation_data_hex", "user_properties",
    "content_type",
)  # fmt: skip
#: 5.0: the Receive Maximum of a CONNECT that gives none
RECEIVE_MAXIMUM: Final = 65_535
LEVELS: Final = {3: Edition.V31, 4: Edition.V311, 5: Edition.V50}
#: what a message's copies came to, by precedence (the ledger's PRECEDENCE, for the
#: outcomes this twin gives)
PRECEDENCE: Final = (
    "delivered", "unknown:not-released", "unknown:capture-ended", "session-ended",
)  # fmt: skip

#: a PUBLISH in: its row, what became of it, the copies of it seen (a message's)
In = tuple[int, str, int]
#: a PUBLISH out: its row, what it is, its message's row (or -1), properties changed
Out = tuple[int, str, int, bool | None]


class GiveUp(Exception):
    """Outside what the twin judges: the readable judge's turn."""


class Handback:
    """Where the twin gave up on a topic: its quiet points (the PUBLISH in rows before
    which its state can be carried over to a judge starting there, in order: see
    :mod:`pubproof.pipeline.handback`), the messages carried over at each, and its ledger
    of the rows before any one of them."""

    def __init__(self, twin: _Twin, why: str) -> None:
        self._twin = twin
        #: what the twin gave up at
        self.why = why
        #: the row it gave up at
        self.at = twin.index
        self.quiet: list[int] = twin.quiet
        #: the messages carried over at each quiet point (their PUBLISH in's rows)
        self.carried: list[list[int]] = twin.carried
        #: the twin's ledger of the copies read (which message each is a copy of)
        self.outs: list[Out] = twin.outs

    def before(self, quiet: int) -> tuple[list[In], list[Out]]:
        """The twin's ledger of the rows before the quiet point ``quiet``."""
        if quiet not in self.quiet:
            raise ValueError(f"row {quiet} is no quiet point of the topic")
        return self._twin.ledger(quiet)


class _Twin:
    """The judgement of one topic (see the module's docstring)."""

    def __init__(
        self, rows: list[tuple[Any, ...]], topic: str, patience: float, recording: bool = False
    ) -> None:
        self.rows = rows
        self.patience = patience
        self.topic = topic
        self.edition: Edition | None = None
        self.links: dict[str, _Link] = {}
        self.sessions: dict[str, _Session] = {}
        self.messages: list[_Message] = []
        self.by_row: dict[int, _Message] = {}
        #: the latest message taken with a payload digest (the readable judge's by_content)
        self.latest_alike: dict[str, _Message] = {}
        #: messages in flight as their publisher's link ended: (client, packet id) -> row
        self.orphans: dict[tuple[str, int], int] = {}
        #: the changes that may matter to a message in flight or to come: [client, its
        #: request's row, its answer's row or None]
        self.window: list[list[Any]] = []
        self.inflight: dict[int, None] = {}  # the rows of the PUBLISH in flight, in order
        self.index = 0  # the row being read
        self.retained: _Message | None = None
        self.latest: dict[tuple[str, str, int, int], int] = {}  # order: the latest seq sent
        self.ins: dict[int, str] = {}  # a PUBLISH in's row -> its outcome (until taken)
        self.outs: list[Out] = []
        self.now = 0.0
        self.matches: dict[str, bool] = {}
        #: the quiet points are recorded: only on a second reading of a topic the twin
        #: gave up on (each costs a walk over the sessions; a topic the twin follows to
        #: its end needs none, and a real capture's 120,000 messages made it twice dearer)
        self.recording = recording
        #: the quiet points: PUBLISH in rows before which all the topic's state can be
        #: carried over to a judge starting there (checked as each is read: see
        #: :meth:`_carried`)
        self.quiet: list[int] = []
        #: the messages carried over at each quiet point (their PUBLISH in's rows, in
        #: order): the retained message, and those with a copy owed or a flow open
        self.carried: list[list[int]] = []
        #: a packet identifier's flow kept open as it was used again, or a retained copy of
        #: a message no PUBLISH showed: no quiet point from then on
        self.tangled = False
        #: the retained messages (and deletions) the store may hold, as the readable judge
        #: keeps them (its ``retained_open``): (the PUBLISH in's row, the row it was taken
        #: at), the twin's own last. Each change keeps those taken after it was received
        #: (in flight together, the server may have stored either last): while two or
        #: more, no quiet point (the hand-back's rule 4); a change received after every
        #: one held was taken makes the store certain again
        #: (What the judge reads at a subscription made meanwhile, a copy of either as
        #: the retained copy owed, needs nothing more: a copy of one after the cut is of
        #: a payload seen after it, so rule 6 carries both over, whose rows make the
        #: judge's ``retained_open`` again.)
        self.stored: list[tuple[int, int]] = []
        #: the clients whose session ended with a flow open (a copy unacknowledged or a
        #: QoS 2 message not released): the readable judge keeps its flows until the
        #: client's next clean CONNACK
        self.lingering: set[str] = set()

    # -- the rows ---------------------------------------------------------------------------

    def run(self) -> tuple[list[In], list[Out]]:
        for index, row in enumerate(self.rows):
            self.index = index
            t: float = row[T]
            if t > self.now:
                self.now = t
            kind: str = row[TYPE]
            if kind == "PUBLISH" and row[TOPIC] is None:
                # a Topic Alias no mapping seen stands for: the readable judge's unknown
                raise GiveUp("a PUBLISH of no topic")
            link = self.links.get(row[CONNECTION])
            if link is None:
                link = self.links[row[CONNECTION]] = _Link()
            if row[DIRECTION] == "c2s":
                if kind == "PUBLISH":
                    carried = (
                        None if not self.recording or self.inflight or self.tangled
                        else self._carried()
                    )  # fmt: skip
                    if carried is not None:
                        self.quiet.append(index)
                        self.carried.append(carried)
                    self._publish_in(link, index, row)
                elif kind == "PUBACK" or kind == "PUBCOMP" or kind == "PUBREC":
                    self._ack_out(link, row)
                elif kind == "PUBREL":
                    self._pubrel(link, row)
                elif kind == "CONNECT":
                    self._connect(link, row)
                elif kind == "SUBSCRIBE":
                    self._subscribe(link, row)
                elif kind == "DISCONNECT" or kind == "closed":
                    self._ended(link, row, kind)
                else:  # UNSUBSCRIBE, lost
                    raise GiveUp(kind)
            elif kind == "PUBLISH":
                self._publish_out(link, index, row)
            elif kind == "PUBACK" or kind == "PUBREC":
                self._ack_in(link, index, row)
            elif kind == "CONNACK":
                self._connack(link, row)
            elif kind == "SUBACK":
                self._suback(link, index, row)
            else:  # UNSUBACK, lost
                raise GiveUp(kind)
        return self._finish()

    # -- sessions ---------------------------------------------------------------------------

    def _connect(self, link: _Link, row: tuple[Any, ...]) -> None:
        fields = json.loads(row[DETAIL])
        edition = LEVELS.get(int(fields.get("level") or 4))
        client = str(fields.get("client_id") or "")
        clean = fields.get("clean_start", fields.get("clean_session", True))
        properties = fields.get("properties") or {}
        if (
            edition is None or edition is Edition.V31 or not client or not clean
            or properties.get("session_expiry_interval")
        ):  # fmt: skip
            raise GiveUp("a session the twin does not keep")
        if self.edition is None:
            self.edition = edition
        elif edition is not self.edition:
            raise GiveUp("two editions")
        if link.connected or client in self.sessions:
            raise GiveUp("a link or session taken over")
        if any(c == client for c, _ in self.orphans):
            raise GiveUp("a client again, a message of its ended link in flight")
        link.client, link.edition = client, edition
        link.maximum = properties.get("maximum_packet_size") is not None
        receive = properties.get("receive_maximum")
        link.receive = (
            (RECEIVE_MAXIMUM if receive is None else int(receive))
            if edition is Edition.V50
            else None
        )  # fmt: skip
        self.window.append([client, self.index, None])

    def _connack(self, link: _Link, row: tuple[Any, ...]) -> None:
        fields = json.loads(row[DETAIL])
        if not link.client or link.connected or row[CODE] or fields.get("session_present"):
            raise GiveUp("a CONNACK the twin does not follow")
        self._settle(link.client)
        self.lingering.discard(link.client)  # a clean start: its old flows are gone
        link.connected = True
        session = _Session(link.client, row[CONNECTION], link.maximum, link.receive)
        link.session = self.sessions[link.client] = session

    def _ended(self, link: _Link, row: tuple[Any, ...], kind: str) -> None:
        if kind == "DISCONNECT":
            expiry = (json.loads(row[DETAIL]).get("properties") or {}).get(
                "session_expiry_interval"
            )
            if expiry:
                raise GiveUp("a DISCONNECT's Session Expiry Interval")
        if not link.connected:
            if link.client and not link.session:
                raise GiveUp("a link that ended before its CONNACK")
            return
        link.connected = False
        session = link.session
        assert session is not None
        del self.sessions[session.client]
        link.session = None
        link.client = ""  # ended: the link's closing row after its DISCONNECT is no news
        # a message in flight as its link ended stays unacknowledged (unknown), unless a
        # copy of it shows the server took it after all (as the readable judge keeps it)
        for packet_id, at in session.inbound.items():
            self.orphans[session.client, packet_id] = at
        if session.unacknowledged or session.outbound or session.unreleased or session.awaiting:
            self.lingering.add(session.client)
        session.inbound.clear()
        for owed in session.pending:
            self._owed(session, owed, row[T], closed=True)

    def _subscribe(self, link: _Link, row: tuple[Any, ...]) -> None:
        if not link.connected or row[PACKET_ID] in link.subscribing:
            raise GiveUp("a SUBSCRIBE the twin does not follow")
        link.subscribing[int(row[PACKET_ID])] = row[DETAIL]
        self.window.append([link.client, self.index, None])

    def _suback(self, link: _Link, index: int, row: tuple[Any, ...]) -> None:
        detail = link.subscribing.pop(int(row[PACKET_ID] or 0), None)
        session = link.session
        if detail is None or session is None:
            raise GiveUp("a SUBACK the twin does not follow")
        self._settle(link.client)
        asked = json.loads(detail)
        fields = json.loads(row[DETAIL])
        codes = fields.get("reason_codes", fields.get("granted", []))
        ident = int(asked.get("subscription_identifier") or 0)
        assert link.edition is not None
        for item, code in zip(asked.get("subscriptions", []), codes, strict=False):
            topic_filter = str(item.get("filter"))
            if not isinstance(code, int) or code > 2:
                continue  # refused: no subscription
            if (
                item.get("no_local") or item.get("retain_as_published")
                or item.get("retain_handling") or topic_filter.startswith("$share/")
                or filter_problem(topic_filter, link.edition) is not None
            ):  # fmt: skip
                raise GiveUp("a subscription the twin does not keep")
            if not self._match(topic_filter):
                continue
            if topic_filter in session.filters:
                raise GiveUp("a filter subscribed again")
            granted = min(code, int(item.get("qos", 0)))
            session.filters[topic_filter] = (granted, ident)
            session.owing = None  # (what a message is owed it, made again when next asked)
            kept = self.retained
            if kept is not None:
                # [MQTT-3.3.1-6] the retained message, for the new subscription
                owed = _Owed(
                    kept, min(kept.qos, granted), True, (ident,) if ident else (), False,
                    row[T], kept.qos == 0,
                )  # fmt: skip
                session.owe(owed)

    def _match(self, topic_filter: str) -> bool:
        found = self.matches.get(topic_filter)
        if found is None:
            assert self.edition is not None
            found = self.matches[topic_filter] = subscription_matches(
                topic_filter, self.topic, self.edition, None
            )
        return found

    def _settle(self, client: str) -> None:
        """The client's changes (CONNECT, SUBSCRIBE) answered now."""
        for change in self.window:
            if change[0] == client and change[2] is None:
                change[2] = self.index

    # -- messages in ------------------------------------------------------------------------

    def _publish_in(self, link: _Link, index: int, row: tuple[Any, ...]) -> None:
        session = link.session
        if session is None or not link.connected:
            raise GiveUp("a PUBLISH of a session the twin does not know")
        if not self.messages and not self.ins:
            assert link.edition is not None
            if name_problem(self.topic, link.edition) is not None:
                raise GiveUp("a topic name the model refuses")
        detail = row[DETAIL]
        if detail is not None and json.loads(detail).get("message_expiry_interval") is not None:
            raise GiveUp("a Message Expiry Interval")
        qos: int = row[QOS]
        self.ins[index] = "unknown:not-acknowledged"
        if qos == 0:
            self._take(session, index, row, index)
            return
        packet_id = int(row[PACKET_ID])
        if packet_id in session.inbound or packet_id in session.unreleased:
            raise GiveUp("a publisher's re-send, or a PUBLISH on an identifier before PUBREL")
        session.inbound[packet_id] = index
        self.inflight[index] = None

    def _ack_in(self, link: _Link, index: int, row: tuple[Any, ...]) -> None:
        session = link.session
        if session is None:
            return
        found = session.inbound.pop(int(row[PACKET_ID] or 0), None)
        if found is None:
            return
        qos = self.rows[found][QOS]
        if row[TYPE] != ("PUBACK" if qos == 1 else "PUBREC") or (row[CODE] or 0) >= 0x80:
            raise GiveUp("an acknowledgement the twin does not follow")
        message = self._take(session, found, self.rows[found], index)
        if qos == 2:
            message.released = False
            session.unreleased[int(row[PACKET_ID])] = message

    def _pubrel(self, link: _Link, row: tuple[Any, ...]) -> None:
        session = link.session
        if session is None:
            return
        message = session.unreleased.pop(int(row[PACKET_ID] or 0), None)
        if message is not None:
            message.released = True

    def _take(self, publisher: _Session, index: int, row: tuple[Any, ...], owned: int) -> _Message:
        """The server took the PUBLISH at ``index`` (at row ``owned``): each session with a
        matching subscription is owed one copy at the highest QoS granted."""
        message = _Message(index, len(self.messages) + 1, publisher.client, row[QOS], row[DIGEST])
        self.messages.append(message)
        # the sessions whose subscriptions or connection changed while it was in flight
        # (a change from its request to its answer, from the PUBLISH to its taking): a
        # copy owed them and not sent is unknown, as the readable judge leaves it. Changes
        # answered before the oldest message in flight matter to none to come
        floor = min(index, next(iter(self.inflight), index))
        self.inflight.pop(index, None)
        if self.window:
            self.window = [c for c in self.window if c[2] is None or c[2] >= floor]
        if self.window:
            message.uncertain = {
                c[0] for c in self.window if c[1] <= owned and (c[2] is None or c[2] >= index)
            }
        self.by_row[index] = message
        self.latest_alike[message.digest] = message
        self.ins[index] = "no-subscriber"
        since: float = self.rows[owned][T]
        for session in self.sessions.values():
            if not session.filters:
                continue
            owing = session.owing
            if owing is None:
                # the highest QoS granted and every Subscription Identifier, of its
                # subscriptions that match the topic
                held = session.filters.values()
                owing = (max(g for g, _ in held), tuple(sorted(i for _, i in held if i)))
                session.owing = owing
            granted, ids = owing
            session.owe(_Owed(message, min(message.qos, granted), False, ids, True, since, False))
            message.owed[session.client] = "session-ended"  # until decided
        if row[RETAIN]:
            if row[DIGEST] or self.retained is not None:  # the store changes
                self.stored = [taken for taken in self.stored if index < taken[1]]
                self.stored.append((index, owned))
            # [MQTT-3.3.1-5] kept as the retained message; a zero-byte one deletes it
            self.retained = message if row[DIGEST] else None
        return message

    # -- copies out -------------------------------------------------------------------------

    def _publish_out(self, link: _Link, index: int, row: tuple[Any, ...]) -> None:
        session = link.session
        if session is None or not link.connected:
            raise GiveUp("a copy to a session the twin does not know")
        packet_id = row[PACKET_ID]
        if packet_id is not None and row[QOS]:
            session.unacknowledged.add(int(packet_id))  # the send quota [MQTT-3.3.4-9]
            if int(packet_id) in session.awaiting:
                # a packet identifier whose flow the readable judge keeps open: no quiet
                # point from here (which flow it reads the answers as is its own)
                self.tangled = True
            session.awaiting[int(packet_id)] = "PUBACK" if row[QOS] == 1 else "PUBREC"
        if packet_id is not None and int(packet_id) in session.outbound:
            raise GiveUp("a re-send of a copy")
        digest: str = row[DIGEST]
        alike = session.alike.get(digest)
        if not alike and self._forwarded_early(digest, index):
            alike = session.alike.get(digest)
        if not alike:
            self._unowed(session, index, digest, bool(row[RETAIN]))
            return
        ids: tuple[int, ...] = ()
        properties: dict[str, Any] = {}
        if row[DETAIL] is not None:
            properties = json.loads(row[DETAIL])
            ids = tuple(sorted(properties.get("subscription_identifiers") or ()))
        owed = alike[0] if len(alike) == 1 else self._first_alike(alike, row, properties)
        message = owed.message
        if (row[QOS], bool(row[RETAIN]), ids) != (owed.qos, owed.retain, owed.ids):
            raise GiveUp("a copy the model does not allow")
        changed: bool | None = None
        if self.edition is Edition.V50:
            if row[DUP]:
                raise GiveUp("DUP on a 5.0 first copy")
            if self._changed(message, properties):
                raise GiveUp("a forwarded property changed")
            changed = False
        session.paid(owed)
        if owed.qos and packet_id is not None:
            session.outbound[int(packet_id)] = owed
        if owed.live:
            message.owed[session.client] = "delivered"
            # the order of 4.6 binds copies of one publisher's messages alike in the QoS
            # published and sent (both readings of ordering-qos; the judge's order_key)
            key = (session.client, message.publisher, message.qos, owed.qos)
            if self.latest.get(key, 0) > message.seq:
                raise GiveUp("an order the model does not allow")
            self.latest[key] = message.seq
        message.copies += 1
        self.outs.append((index, "copy", message.row, changed))

    def _first_alike(
        self, alike: list[_Owed], row: tuple[Any, ...], properties: dict[str, Any]
    ) -> _Owed:
        """Of several copies owed alike (an empty payload published twice, say), the one a
        copy is: as the readable judge takes it, the first (in the order they became
        owed: a retained message's for a new subscription among the live ones) whose QoS
        and RETAIN are the copy's and whose forwarded properties are its message's; where
        none is, the readable judge's to weigh."""
        retain = bool(row[RETAIN])
        for owed in alike:
            if (owed.qos, owed.retain) == (row[QOS], retain) and not self._changed(
                owed.message, properties
            ):
                return owed
        raise GiveUp("a copy alike none of several owed")

    def _unowed(self, session: _Session, index: int, digest: str, retain: bool) -> None:
        """A copy no copy owed matches, as the readable judge reads it (by the latest
        message alike): unknown where it is of a message no PUBLISH in showed, to a
        session subscribed to the topic (publication-unseen), or of a message not owed
        the session that the server took while the session's subscriptions or connection
        changed, or before it subscribed (subscription-changing); anything else (another
        copy, a retained copy not owed, a copy no subscription matches) is the readable
        judge's."""
        message = self.latest_alike.get(digest)
        if message is None:
            if not session.filters:
                raise GiveUp("a copy no subscription matches")
            # a copy of a message no PUBLISH in showed (its publisher's link not seen
            # whole, say), to a session that subscribed to the topic
            if retain:
                self.tangled = True  # (a retained message no quiet point can carry)
            self.outs.append((index, "unknown:publication-unseen", -1, None))
            return
        if session.client in message.owed:
            raise GiveUp("another copy of a message owed")
        if session.client not in message.uncertain and (retain or not session.filters):
            # a retained copy not owed, a copy no subscription matches: findings
            raise GiveUp("a copy owed to no one")
        # its subscriptions changed while the message was in flight, or it subscribed
        # only after the server took the message: a capture cannot tell which of the two
        # the server did first
        self.outs.append((index, "unknown:subscription-changing", message.row, None))

    def _changed(self, message: _Message, properties: dict[str, Any]) -> bool:
        """Whether a 5.0 copy's forwarded properties are not its message's."""
        if self.edition is not Edition.V50:
            return False
        sent = json.loads(self.rows[message.row][DETAIL] or "{}")
        return any(properties.get(k) != sent.get(k) for k in FORWARDED)

    def _forwarded_early(self, digest: str, index: int) -> bool:
        """A copy of a message not acknowledged yet: the server took it no later than now
        (it may forward before its PUBACK or PUBREC goes out), as the readable judge
        reads it; more than one such message alike is the readable judge's to weigh."""
        found = [
            (session, packet_id, at)
            for session in self.sessions.values()
            for packet_id, at in session.inbound.items()
            if self.rows[at][DIGEST] == digest
        ]
        ended = [(key, at) for key, at in self.orphans.items() if self.rows[at][DIGEST] == digest]
        if len(found) + len(ended) > 1:
            raise GiveUp("a copy alike several messages in flight")
        if ended:
            ((key, at),) = ended
            del self.orphans[key]
            publisher = _Session(key[0], self.rows[at][CONNECTION], False, None)
            message = self._take(publisher, at, self.rows[at], index)
            message.released = self.rows[at][QOS] < 2  # (its PUBREL is never seen)
            if not message.released:
                # its flow stays open in the readable judge (awaiting the PUBREL no link
                # can bring) until the client's next CONNACK: no quiet point until then
                self.lingering.add(key[0])
            return True
        if not found:
            return False
        session, packet_id, at = found[0]
        del session.inbound[packet_id]
        message = self._take(session, at, self.rows[at], index)
        if self.rows[at][QOS] == 2:
            message.released = False
            session.unreleased[packet_id] = message
        return True

    def _ack_out(self, link: _Link, row: tuple[Any, ...]) -> None:
        session = link.session
        if session is None:
            return
        packet_id = int(row[PACKET_ID] or 0)
        awaited = session.awaiting.get(packet_id)
        # a wrong answer (a PUBCOMP to a copy awaiting its PUBREC, say) ends no flow of
        # the server's in the readable judge: open still, for the quiet points
        if awaited == row[TYPE]:
            if awaited == "PUBREC" and (row[CODE] or 0) < 0x80:
                session.awaiting[packet_id] = "PUBCOMP"
            else:
                del session.awaiting[packet_id]
        if row[TYPE] != "PUBREC" or (row[CODE] or 0) >= 0x80:
            session.unacknowledged.discard(packet_id)  # the quota back [MQTT-3.3.4-9]
        if packet_id not in session.outbound:
            return
        if row[TYPE] == "PUBREC" and (row[CODE] or 0) < 0x80:
            return  # the flow goes on to PUBCOMP
        del session.outbound[packet_id]

    # -- what is still owed -----------------------------------------------------------------

    def _owed(self, session: _Session, owed: _Owed, at: float, *, closed: bool) -> None:
        """A copy still owed as the link closes (``closed``) or the capture ends: unknown
        or ended, unless a capture proves it missing (the readable judge's finding)."""
        message = owed.message
        if session.client in message.uncertain:
            raise GiveUp("a copy owed to a session that changed while its message flew")
        if not message.released:
            outcome = "unknown:not-released"
        else:
            if session.maximum:
                raise GiveUp("a Maximum Packet Size to weigh")
            key = (session.client, message.publisher, message.qos, owed.qos)
            later = owed.live and self.latest.get(key, 0) > message.seq
            if later or at - owed.since >= self.patience:
                raise GiveUp("a copy a capture proves missing")
            outcome = "session-ended" if closed or owed.may_miss else "unknown:capture-ended"
        if owed.live:
            message.owed[session.client] = outcome

    # -- quiet points ------------------------------------------------------------------------

    def _carried(self) -> list[int] | None:
        """Whether now is a quiet point, and what is carried over there
        (:func:`.distribution_quiet.carried`)."""
        if self.lingering or self.orphans or len(self.stored) > 1:
            return None
        return carried(self.sessions, self.retained, self.latest, self.messages)

    def ledger(self, before: int) -> tuple[list[In], list[Out]]:
        """The ledger of the rows before ``before`` (a quiet point: every message there
        was taken, and what became of each not carried over is final)."""
        ins: list[In] = []
        for index, outcome in sorted(self.ins.items()):
            if index >= before:
                break
            message = self.by_row.get(index)
            copies = 0
            if message is not None:
                copies = message.copies
                if message.owed:
                    outcome = min(message.owed.values(), key=PRECEDENCE.index)
            ins.append((index, outcome, copies))
        return ins, [out for out in self.outs if out[0] < before]

    def _finish(self) -> tuple[list[In], list[Out]]:
        if any(_quota_full(session) for session in self.sessions.values()):
            raise GiveUp("a send quota used up")
        for session in self.sessions.values():
            for owed in session.pending:
                self._owed(session, owed, self.now, closed=False)
        return self.ledger(len(self.rows))


def _quota_full(session: _Session) -> bool:
    """5.0: the server's send quota towards the session is used up (what is owed then
    waits: the readable judge's ``quota-full``)."""
    return session.receive is not None and len(session.unacknowledged) >= session.receive


def judge(
    rows: list[tuple[Any, ...]], topic: str, patience: float = PATIENCE
) -> tuple[list[In], list[Out]] | None:
    """The ledger of the rows of ``topic`` (its events, with its server's sessions', in
    the judge's order), as the readable judge would write it; None where the twin gives
    up."""
    found = attempt(rows, topic, patience)
    return None if isinstance(found, Handback) else found


def attempt(
    rows: list[tuple[Any, ...]], topic: str, patience: float = PATIENCE
) -> tuple[list[In], list[Out]] | Handback:
    """As :func:`judge`, but where the twin gives up: what it hands back (its quiet
    points, and its ledger before each)."""
    try:
        return _Twin(rows, topic, patience).run()
    except GiveUp:
        pass
    # read again, recording the quiet points (the twin gives up at the same row)
    twin = _Twin(rows, topic, patience, recording=True)
    try:
        return twin.run()  # (it does not: recording changes no judgement)
    except GiveUp as error:
        return Handback(twin, str(error))
