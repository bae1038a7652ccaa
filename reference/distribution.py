"""The distribution core: a server's sessions, subscriptions, retained store and
forwarding, sans-IO, for a broker to run.

Rules / theory of operation
---------------------------
A :class:`DistributionCore` holds every session (client identifier, connected or not, how
long it outlives its connection, its subscriptions and its copies), the Shared
Subscriptions (5.0), the retained store (:mod:`.retained_store`) and a clock of whole
milliseconds that moves only by :meth:`~DistributionCore.advance` (never the wall clock).
The broker calls one method per event and the outcome says what it must do now:

- ``connect`` / ``disconnect``: 3.x CleanSession 1 ties the session to its connection, 0
  keeps it (subscriptions and queued copies) with no limit [MQTT-3.1.2-4] [MQTT-3.1.2-5];
  5.0 Clean Start 1 discards it [MQTT-3.1.2-4], 0 resumes [MQTT-3.1.2-5] or creates
  [MQTT-3.1.2-6] it, and the Session Expiry Interval says how long it outlives the
  connection [MQTT-3.1.2-23] [MQTT-4.1.0-2]. A session taken over by a new connection is
  disconnected first [MQTT-3.1.4-2]. On reconnection the queued copies are owed and those
  under way are re-sent by the flows [MQTT-4.4.0-1]: ``ConnectOutcome.owed`` and ``resend``.
- ``subscribe`` / ``unsubscribe``: each topic filter in turn [MQTT-3.8.4-4], a SUBACK code
  per filter in order [MQTT-3.9.3-1]; the same filter again replaces the subscription
  [MQTT-3.8.4-3]; a new subscription is owed the retained messages it matches (5.0: by its
  Retain Handling; never a Shared Subscription), RETAIN 1, at the lower of their QoS and
  the QoS granted. UNSUBSCRIBE deletes the subscription whose filter is the same string
  [MQTT-3.10.4-1]; the copies it had queued stay owed ("MAY continue to deliver").
- ``publish``: a message the server took ownership of updates the retained store and goes
  to every session with a matching subscription [MQTT-4.5.0-1] at the lower of the
  published QoS and the QoS granted [MQTT-3.8.4-6], RETAIN 0 [MQTT-3.3.1-9] (5.0: as
  published under Retain As Published [MQTT-3.3.1-13]), not to the publisher under No
  Local [MQTT-3.8.3-3], with the subscription's identifier [MQTT-3.3.4-3]; several
  matching subscriptions of one session give one copy at the highest QoS with every
  identifier, or one copy each (reading ``overlapping-copies``) [MQTT-3.3.5-1]
  [MQTT-3.3.4-4] [MQTT-3.3.4-5]; a Shared Subscription gives the message to one member,
  the first connected one in joining order, else the first [MQTT-4.8.2-3]. A copy for a
  connected session is owed now; for an offline one it is queued (QoS 0: 3.1 never,
  3.1.1 and 5.0 by reading ``queue-qos0``, else kept as optional).
- ``send`` / ``complete``: the broker starts a copy (QoS 0: done; QoS 1 and 2: under way
  until its flow completes); it then carries the Message Expiry Interval left
  [MQTT-3.3.2-6] and no longer expires [MQTT-4.3.3-7].
- ``advance``: copies that expire before they start are deleted [MQTT-3.3.2-5], retained
  messages expire, sessions expire [MQTT-4.1.0-2] (5.0).

The copies of a session are kept in the order the server took ownership of their
messages, which keeps every Ordered Topic in order [MQTT-4.6.0-6]. Matching takes the
subscription index (:mod:`.distribution_subscriptions`), whose answer for a topic name is
cached until a subscription it depends on changes, so a message costs a dict look-up and
one copy per session it goes to. Every topic name and filter is judged first
(:mod:`.distribution_topics`): a topic filter that breaks a rule closes the connection
(``SubscribeOutcome.closed`` and ``error``, with the rule and the byte offset; reading
``invalid-filter=refuse``: a failure code), a topic name raises ``InvalidTopic``; an
event the core cannot take raises ``DistributionError``; nothing else is raised.

This is the reference implementation of :class:`pubproof.model.distribution.DistributionModel`:
the same methods, arguments and outcome fields, written independently (it reads the
model's tables of rules and readings, none of its logic), and tested equal to it step by
step (``tests/test_reference_distribution_stateful.py``).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from operator import attrgetter
from typing import Final

from pubproof.model.distribution_readings import (
    DISTRIBUTION_READINGS,
    resolve_distribution_readings,
)
from pubproof.model.editions import Edition, ReadingError, resolve_readings
from pubproof.reference.distribution_citations import Citations, RetainedCitations
from pubproof.reference.distribution_state import (
    NEVER,
    Cause,
    ClockOutcome,
    CompleteOutcome,
    ConnectOutcome,
    Copy,
    DisconnectOutcome,
    Grant,
    Message,
    Publication,
    Published,
    PublishOutcome,
    ServerConfig,
    SessionState,
    SessionStatus,
    usage_error,
)
from pubproof.reference.distribution_subscribe import Subscribing
from pubproof.reference.distribution_subscriptions import PerClient, Record, Subscriptions
from pubproof.reference.distribution_topics import SHARE_PREFIX, TopicRules
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.retained_store import RetainedStore

V31: Final = Edition.V31
V50: Final = Edition.V50
CONNECTED: Final = SessionStatus.CONNECTED
LIVE: Final = Cause.LIVE
_usage = usage_error


def _is_shared(copy: Copy) -> bool:
    return any(f.startswith(SHARE_PREFIX) for f in copy.topic_filters)


class DistributionCore(Subscribing):
    """One server's distribution in ``edition`` under ``readings`` (wire and distribution
    readings by name; the edition's defaults for the rest) with the limits of ``config``.
    """

    def __init__(
        self,
        edition: Edition,
        readings: Mapping[str, str] | None = None,
        config: ServerConfig | None = None,
    ) -> None:
        if not isinstance(edition, Edition):
            raise _usage(f"an edition is an Edition, not {edition!r}")
        try:
            chosen = dict(readings or {})
            dist = {k: v for k, v in chosen.items() if k in DISTRIBUTION_READINGS}
            wire = {k: v for k, v in chosen.items() if k not in DISTRIBUTION_READINGS}
            resolved = {
                **resolve_readings(edition, wire),
                **resolve_distribution_readings(edition, dist),
            }
        except (ReadingError, TypeError, ValueError) as exc:
            raise _usage(f"readings: {exc}") from None
        self.edition = edition
        self.readings: dict[str, str] = resolved
        self.config = config if config is not None else ServerConfig()
        if not all(
            isinstance(getattr(self.config, name, None), kind)
            for name, kind in (
                ("maximum_qos", int),
                ("wildcard_subscriptions", bool),
                ("shared_subscriptions", bool),
                ("subscription_identifiers", bool),
            )
        ):
            raise _usage(f"a server configuration is a ServerConfig, not {config!r}")
        if edition is V31 and not self.config.wildcard_subscriptions:
            # MQTT 3.1 has no failure return code: "It must therefore make a positive
            # acknowledgement with a SUBACK", so a 3.1 server has wildcards
            raise _usage("an MQTT 3.1 server supports wildcards (3.1 has no failure code)")
        self.now = 0
        self.sessions: dict[str, SessionState] = {}
        self._v50 = edition is V50
        self._topics = TopicRules.of(edition, resolved)
        self._cited = Citations.of(edition)
        self._subs = Subscriptions(self._topics)
        retained_cited = RetainedCitations.of(edition, resolved)
        self.retained = RetainedStore(self._topics, retained_cited)
        self._boundary = resolved.get("expiry-boundary", "at")
        self._rounding = resolved.get("expiry-rounding", "down")
        self._one_copy = resolved["overlapping-copies"] == "one-copy"
        #: QoS 0 for an offline session: queued like the rest, kept as optional, or (3.1:
        #: "QoS 0 messages are never stored") dropped
        self._queue_qos0 = resolved.get("queue-qos0") == "queue"
        self._qos0_optional = edition is not V31 and not self._queue_qos0
        self._refuse_invalid = edition is not V31 and resolved["invalid-filter"] == "refuse"
        self._retained_as_published = resolved.get("retained-qos-31") == "as-published"
        #: a RETAIN 0 message leaves the store untouched [MQTT-3.3.1-12]
        self._untouched_rules = (self._cited.forwarded, *retained_cited.untouched)
        self._seq = 0
        self._copy_id = 0
        self._epoch = 0
        #: expiry times of messages with copies waiting (5.0; stale entries are skipped)
        self._copy_deadlines: list[int] = []
        #: (when, epoch, client identifier) of the disconnected sessions that expire (5.0)
        self._session_deadlines: list[tuple[int, int, str]] = []

    # -- sessions --------------------------------------------------------------------------

    def connect(
        self, client_id: str, *, clean: bool, session_expiry_interval: int = 0
    ) -> ConnectOutcome:
        """A CONNECT accepted: ``clean`` is CleanSession (3.x) or Clean Start (5.0);
        ``session_expiry_interval`` is 5.0's (seconds, absent = 0)."""
        if type(client_id) is not str or type(clean) is not bool:
            raise _usage("a client identifier is a str and clean a bool")
        expiry = session_expiry_interval
        if type(expiry) is not int or not 0 <= expiry <= NEVER:
            raise _usage("the Session Expiry Interval is a Four Byte Integer")
        if not self._v50 and expiry:
            raise _usage(f"MQTT {self.edition.value} has no Session Expiry Interval")
        cited = self._cited
        dropped: tuple[Copy, ...] = ()
        existing = self.sessions.get(client_id)
        if existing is not None and existing.status is CONNECTED:
            # [MQTT-3.1.4-2] "If the ClientId represents a Client already connected to the
            # Server then the Server MUST disconnect the existing Client"
            dropped = self.disconnect(client_id).dropped
            existing = self.sessions.get(client_id)
        if self._v50:
            persistent = expiry > 0  # [MQTT-3.1.2-23]
            first = cited.clean if clean else cited.resume_or_create if existing else cited.create
        else:
            persistent, expiry = not clean, NEVER
            first = cited.clean if clean else cited.resume_or_create
        if existing is not None and clean:
            # [MQTT-3.1.2-4] (5.0) "the Client and Server MUST discard any existing Session"
            dropped = (*dropped, *self._end(existing))
            existing = None
        if existing is None:
            self.sessions[client_id] = SessionState(
                client_id=client_id, status=CONNECTED, persistent=persistent, expiry_interval=expiry
            )
            return ConnectOutcome(
                client_id=client_id,
                session_present=False,
                owed=(),
                optional=(),
                resend=(),
                dropped=dropped,
                rules=(first,),
            )
        existing.status, existing.disconnected_at = CONNECTED, None
        existing.persistent, existing.expiry_interval = persistent, expiry
        existing.epoch = 0  # no expiry scheduled while connected
        rules = (first, *cited.resumed)
        if self._v50 and any(c.qos == 2 and _is_shared(c) for c in existing.under_way.values()):
            # [MQTT-4.8.2-4] "the Server MUST complete the delivery of the message to that
            # Client when it reconnects"
            assert cited.shared_qos2_same_client is not None
            rules = (*rules, cited.shared_qos2_same_client)
        return ConnectOutcome(
            client_id=client_id,
            session_present=True,
            owed=tuple(existing.pending),
            optional=tuple(existing.optional),
            resend=tuple(existing.under_way.values()),
            dropped=dropped,
            rules=rules,
        )

    def disconnect(
        self, client_id: str, *, session_expiry_interval: int | None = None
    ) -> DisconnectOutcome:
        """The connection closes (DISCONNECT or lost). 5.0: ``session_expiry_interval`` is the
        DISCONNECT's, if it carried one (a non-zero one after a zero in CONNECT is a Protocol
        Error, and ignored here)."""
        session = self._session(client_id)
        given = session_expiry_interval
        if given is not None and (type(given) is not int or not 0 <= given <= NEVER):
            raise _usage("the Session Expiry Interval is a Four Byte Integer")
        if self._v50 and given is not None and (session.expiry_interval or not given):
            session.expiry_interval, session.persistent = given, given > 0
        if not session.persistent:
            # 3.x: "This Session lasts as long as the Network Connection" [MQTT-3.1.2-6];
            # 5.0: "If it is set to 0, or is absent, the Session ends when the Network
            # Connection is closed"
            return DisconnectOutcome(
                client_id=client_id,
                session_ended=True,
                dropped=self._end(session),
                rules=self._cited.session_ends,
            )
        session.status, session.disconnected_at = SessionStatus.DISCONNECTED, self.now
        if self._v50 and session.expiry_interval != NEVER:
            self._epoch += 1
            session.epoch = self._epoch
            deadline = self.now + session.expiry_interval * 1000
            heapq.heappush(self._session_deadlines, (deadline, self._epoch, client_id))
        return DisconnectOutcome(
            client_id=client_id, session_ended=False, dropped=(), rules=self._cited.session_kept
        )

    def _end(self, session: SessionState) -> tuple[Copy, ...]:
        """The session ends: it and everything it held go, its Shared Subscriptions lose
        it, the retained store keeps what it has [MQTT-3.1.2-7]. A QoS 2 copy of a Shared
        Subscription under way goes with it: "the Server MUST NOT send the Application
        Message to any other subscribed Client" [MQTT-4.8.2-5]."""
        dropped = (*session.pending, *session.optional, *session.under_way.values())
        del self.sessions[session.client_id]
        self._subs.remove_client(session.client_id)
        return dropped

    # -- messages --------------------------------------------------------------------------

    def _match(self, topic: str) -> tuple[PerClient, Mapping[tuple[str, str], tuple[Record, ...]]]:
        """The subscriptions matching ``topic``; raises ``InvalidTopic`` if the edition's
        rules refuse it. The index's answer is taken first: a name it holds (cached) is
        valid in every edition, but for 3.1's limit of 32,767 characters."""
        max_chars = self._topics.max_chars
        if type(topic) is not str or (max_chars is not None and len(topic) > max_chars):
            error = self._topics.name_error(topic)
            assert error is not None
            raise error
        try:
            return self._subs.match(topic)
        except InvalidTopic:
            error = self._topics.name_error(topic)
            if error is not None:
                raise error from None
            return self._subs.scan(topic), {}  # a 3.1 name only 3.1's readings allow

    def publish(self, publication: Published) -> PublishOutcome:
        """The server has taken ownership of ``publication`` (QoS 0 on receipt, QoS 1 when
        it sends the PUBACK, QoS 2 when it sends the PUBREC (Method B) or receives the
        PUBREL (Method A)): the copies every session is owed now or kept."""
        if type(publication) is not Publication:
            _check_publication(publication)  # another type of publication (the model's)
        per_client, shared = self._match(publication.topic)
        self._seq += 1
        now = self.now
        props = publication.properties
        expiry = props.message_expiry_interval if props is not None else None
        expires_at = None if expiry is None else now + expiry * 1000
        message = Message(self._seq, now, publication, expires_at)
        change = self.retained.apply(message) if publication.retain else None
        copies: list[Copy] = []
        optional: list[Copy] = []
        if per_client:
            self._forward(message, per_client, copies, optional)
        if shared:
            self._forward_shared(message, shared, copies, optional)
        if expires_at is not None and self._v50 and (copies or optional):
            heapq.heappush(self._copy_deadlines, expires_at)
        return PublishOutcome(
            message=message,
            retained=change,
            copies=tuple(copies),
            optional=tuple(optional),
            rules=self._untouched_rules
            if change is None
            else (self._cited.forwarded, *change.rule_ids),
        )

    def _forward(
        self, message: Message, per_client: PerClient, copies: list[Copy], optional: list[Copy]
    ) -> None:
        """The copies of the sessions with matching non-shared subscriptions. The path of
        every message: a session with one matching subscription (the common case) is
        served inline, the copy built with ``tuple.__new__`` (a named tuple's own
        constructor is a Python function, and costs twice as much)."""
        publication = message.publication
        pub_qos = publication.qos
        pub_retain = publication.retain
        publisher = publication.publisher
        sessions = self.sessions
        expiring = message.expires_at is not None
        make = tuple.__new__
        owed = copies.append
        copy_id = self._copy_id
        for client_id, records in per_client.items():
            session = sessions[client_id]
            if len(records) != 1:
                self._copy_id = copy_id
                for copy in self._overlapping(message, client_id, records):
                    self._dispatch(session, copy, copies, optional)
                copy_id = self._copy_id
                continue
            grant = records[0].options
            if grant.no_local and client_id == publisher:
                # [MQTT-3.8.3-3] "Application Messages MUST NOT be forwarded to a connection
                # with a ClientID equal to the ClientID of the publishing connection"
                continue
            granted = grant.granted_qos
            # [MQTT-3.8.4-6] "the minimum of the QoS of the originally published message
            # and the maximum QoS granted by the Server"
            qos = granted if granted < pub_qos else pub_qos
            copy_id += 1
            copy = make(
                Copy,
                (
                    copy_id,
                    client_id,
                    message,
                    qos,
                    # [MQTT-3.3.1-9] RETAIN 0 to an established subscription; 5.0
                    # [MQTT-3.3.1-13] as received under Retain As Published
                    pub_retain and grant.retain_as_published,
                    LIVE,
                    grant.topic_filters,
                    grant.subscription_identifiers,
                ),
            )
            if session.status is CONNECTED or qos or self._queue_qos0:
                session.pending.append(copy)
                owed(copy)
            elif self._qos0_optional:
                session.optional.append(copy)
                optional.append(copy)
            else:
                continue  # 3.1: "QoS 0 messages are never stored"
            if expiring:
                session.expiring += 1
        self._copy_id = copy_id

    def _overlapping(
        self, message: Message, client_id: str, records: tuple[Record, ...]
    ) -> list[Copy]:
        """The copies one session is owed for several matching subscriptions: one at the
        highest QoS with every identifier [MQTT-3.3.5-1] [MQTT-3.3.4-4], or one each with
        its own [MQTT-3.3.4-5] (reading ``overlapping-copies``), in the order the session
        first made them."""
        publication = message.publication
        pub_qos, pub_retain = publication.qos, publication.retain
        publisher = publication.publisher
        grants = sorted((r.options for r in records), key=_by_order)
        shapes = [
            (min(g.granted_qos, pub_qos), pub_retain and g.retain_as_published, g)
            for g in grants
            if not (g.no_local and client_id == publisher)
        ]
        if not shapes:
            return []
        if len(shapes) == 1 or not self._one_copy:
            made = [
                (qos, retain, g.topic_filters, g.subscription_identifiers)
                for qos, retain, g in shapes
            ]
        else:
            highest = max(qos for qos, _, _ in shapes)
            # the copy that stands for all: the RETAIN of the first at the highest QoS
            retain = next(r for qos, r, _ in shapes if qos == highest)
            ids = tuple(sorted(i for _, _, g in shapes for i in g.subscription_identifiers))
            filters = tuple(g.topic_filter for _, _, g in shapes)
            made = [(highest, retain, filters, ids)]
        out = []
        for qos, retain, filters, ids in made:
            self._copy_id += 1
            out.append(Copy(self._copy_id, client_id, message, qos, retain, LIVE, filters, ids))
        return out

    def _forward_shared(
        self,
        message: Message,
        shared: Mapping[tuple[str, str], tuple[Record, ...]],
        copies: list[Copy],
        optional: list[Copy],
    ) -> None:
        """5.0: each matching Shared Subscription's copy, to one member: "the Server
        implementation is free to choose" (4.8.2); here the first connected member in
        joining order, else the first, at that member's grant [MQTT-4.8.2-3]."""
        publication = message.publication
        groups = [self._subs.group(key) for key in shared]
        if len(groups) > 1:
            groups.sort(key=_by_order)
        sessions = self.sessions
        for group in groups:
            members = group.members
            chosen = next((c for c in members if sessions[c].status is CONNECTED), None)
            if chosen is None:
                chosen = next(iter(members))
            grant = members[chosen]
            self._copy_id += 1
            copy = Copy(
                self._copy_id,
                chosen,
                message,
                min(grant.granted_qos, publication.qos),
                publication.retain and grant.retain_as_published,
                LIVE,
                grant.topic_filters,
                grant.subscription_identifiers,
            )
            self._dispatch(sessions[chosen], copy, copies, optional)

    def _dispatch(
        self, session: SessionState, copy: Copy, copies: list[Copy], optional: list[Copy]
    ) -> None:
        """A copy is owed now to a connected session; an offline one keeps it, QoS 0 by
        reading ``queue-qos0`` (3.1.1 [MQTT-3.1.2-5] "It MAY also store QoS 0 messages";
        3.1: never)."""
        if session.status is CONNECTED or copy.qos or self._queue_qos0:
            session.pending.append(copy)
            copies.append(copy)
        elif self._qos0_optional:
            session.optional.append(copy)
            optional.append(copy)
        else:
            return
        if copy.message.expires_at is not None:
            session.expiring += 1

    # -- sending, and time -----------------------------------------------------------------

    def owed(self, client_id: str) -> tuple[Copy, ...]:
        """The copies the session is owed and the broker has not started, in order."""
        return tuple(self._session(client_id, connected=False).pending)

    def send(self, client_id: str, copy_id: int | None = None) -> tuple[Copy, int | None]:
        """The broker starts sending a copy (the first owed, or ``copy_id``): it no longer
        expires ([MQTT-3.3.2-5] "has not managed to start onward delivery"; QoS 2
        [MQTT-4.3.3-7]); QoS 1 and 2 stay under way until :meth:`complete`. Returns the copy
        and (5.0) the Message Expiry Interval it carries [MQTT-3.3.2-6]."""
        session = self.sessions.get(client_id) if type(client_id) is str else None
        if session is None or session.status is not CONNECTED:
            session = self._session(client_id)  # raises
        pool = session.pending
        if copy_id is None:
            if not pool:
                pool = session.optional
                if not pool:
                    raise _usage(f"no copy owed to {client_id!r}")
            copy = pool.pop(0)
        else:
            if type(copy_id) is not int:
                raise _usage(f"a copy is named by its copy_id (int), not {copy_id!r}")
            at = next((i for i, c in enumerate(pool) if c.copy_id == copy_id), None)
            if at is None:
                pool = session.optional
                at = next((i for i, c in enumerate(pool) if c.copy_id == copy_id), None)
            if at is None:
                raise _usage(f"no copy {copy_id!r} owed to {client_id!r}")
            copy = pool.pop(at)
        if copy.qos:
            session.under_way[copy.copy_id] = copy
        if copy.message.expires_at is None:
            return copy, None
        session.expiring -= 1
        return copy, copy.expiry_interval_at(self.now, self._rounding)

    def complete(self, client_id: str, copy_id: int, reason_code: int = 0) -> CompleteOutcome:
        """The flow of a QoS 1 or 2 copy completed (PUBACK or PUBCOMP), or ended with a
        PUBACK or PUBREC Reason Code of 0x80 or more (5.0): then it is acknowledged and
        never re-sent [MQTT-4.4.0-2], and a Shared Subscription's message is discarded,
        offered to no other member [MQTT-4.8.2-6]."""
        session = self.sessions.get(client_id) if type(client_id) is str else None
        if session is None:
            session = self._session(client_id)  # raises
        if type(reason_code) is not int or not 0 <= reason_code <= 0xFF:
            raise _usage(f"a Reason Code is a byte, not {reason_code!r}")
        copy = session.under_way.pop(copy_id, None) if type(copy_id) is int else None
        if copy is None:
            raise _usage(f"copy {copy_id!r} is not under way to {client_id!r}")
        rules: tuple[str, ...] = ()
        if self._v50 and reason_code >= 0x80:
            assert self._cited.no_resend_after_error is not None
            rules = (self._cited.no_resend_after_error,)
            if _is_shared(copy):
                assert self._cited.shared_error_ack is not None
                rules = (*rules, self._cited.shared_error_ack)
        return tuple.__new__(CompleteOutcome, (copy, rules))  # (see _forward)

    def advance(self, milliseconds: int) -> ClockOutcome:
        """The clock moves on: copies, retained messages and sessions expire (5.0)."""
        if type(milliseconds) is not int or milliseconds < 0:
            raise _usage("the clock moves forward by whole milliseconds")
        self.now = now = self.now + milliseconds
        at = self._boundary == "at"
        expired: list[Copy] = []
        deadlines = self._copy_deadlines
        if deadlines and (deadlines[0] <= now if at else deadlines[0] < now):
            while deadlines and (deadlines[0] <= now if at else deadlines[0] < now):
                heapq.heappop(deadlines)
            for session in self.sessions.values():
                if session.expiring:
                    expired += self._expire_copies(session, now, at)
        ended: list[str] = []
        dropped: list[Copy] = []
        waiting = self._session_deadlines
        while waiting and waiting[0][0] <= now:
            _, epoch, client_id = heapq.heappop(waiting)
            gone = self.sessions.get(client_id)
            if gone is None or gone.epoch != epoch or gone.status is CONNECTED:
                continue  # reconnected (or ended) since
            # [MQTT-4.1.0-2] "The Server MUST discard the Session State when the Network
            # Connection is closed and the Session Expiry Interval has passed"
            ended.append(client_id)
            dropped += self._end(gone)
        retained = self.retained.expire(now, self._boundary) if self._v50 else []
        cited = self._cited
        rules: list[str] = []
        if expired and cited.expired_not_sent is not None:
            rules.append(cited.expired_not_sent)
        if ended and cited.session_expired is not None:
            rules.append(cited.session_expired)
        if cited.shared_qos2_no_other is not None and any(
            c.qos == 2 and _is_shared(c) for c in dropped
        ):
            rules.append(cited.shared_qos2_no_other)
        rules += [i for change in retained for i in change.rule_ids if i not in rules]
        return ClockOutcome(
            now=now,
            expired=tuple(expired),
            ended=tuple(ended),
            dropped=tuple(dropped),
            retained=tuple(retained),
            rules=tuple(rules),
        )

    def _expire_copies(self, session: SessionState, now: int, at: bool) -> list[Copy]:
        """[MQTT-3.3.2-5] "If the Message Expiry Interval has passed and the Server has not
        managed to start onward delivery to a matching subscriber, then it MUST delete the
        copy of the message for that subscriber"."""
        gone: list[Copy] = []
        left = 0
        for pool in (session.pending, session.optional):
            kept = []
            for copy in pool:
                end = copy.message.expires_at
                if end is None:
                    kept.append(copy)
                elif end <= now if at else end < now:
                    gone.append(copy)
                else:
                    kept.append(copy)
                    left += 1
            pool[:] = kept
        session.expiring = left
        return gone

    # -- views -----------------------------------------------------------------------------

    def shared(self) -> dict[str, dict[str, Grant]]:
        """5.0 Shared Subscriptions: whole topic filter -> member client id -> its grant,
        in the order formed and joined."""
        return {g.topic_filter: dict(g.members) for g in self._subs.groups().values()}


_by_order = attrgetter("order")


def _check_publication(publication: object) -> None:
    """A publication of another type (the model's): what the core reads of it is checked,
    so that nothing foreign is raised later."""
    try:
        publisher = getattr(publication, "publisher")  # noqa: B009
        qos = getattr(publication, "qos")  # noqa: B009
        retain = getattr(publication, "retain")  # noqa: B009
        payload = getattr(publication, "payload")  # noqa: B009
        getattr(publication, "topic")  # noqa: B009
        props = getattr(publication, "properties")  # noqa: B009
        expiry = None if props is None else props.message_expiry_interval
    except AttributeError as exc:
        raise _usage(f"not a publication: {exc}") from None
    if type(publisher) is not str or type(qos) is not int or not 0 <= qos <= 2:
        raise _usage("a publication has a publisher (str) and a QoS of 0, 1 or 2")
    if type(retain) is not bool or not isinstance(payload, bytes):
        raise _usage("a publication's RETAIN is a bool and its payload bytes")
    if expiry is not None and (type(expiry) is not int or not 0 <= expiry <= NEVER):
        raise _usage("the Message Expiry Interval is a Four Byte Integer")
