"""The distribution judge's records: the links it watches, what is under way on each
session, the messages it saw the server take, and the findings it writes.

Theory of operation
-------------------
:class:`Link` is one network connection as the events show it (whose client, which
edition, its clean flag and limits, its Topic Alias maps, its requests awaiting an
answer); :class:`Flows` what one session has under way across its links, so that a
re-sent PUBLISH on a resumed session is known for what it is; :class:`MessageRecord` one
message the server took ownership of, with what the model says each session is owed and
what each was seen to get; :class:`Change` a session's subscriptions or connection being
changed between a request and its answer, which leaves a message in flight meanwhile open.
:class:`Report` collects the findings, each with its evidence across the links.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pubproof.judge.distribution_events import C2S, S2C, Event
from pubproof.judge.distribution_ledger import Ledger
from pubproof.judge.findings import PASS, Finding, Source
from pubproof.model import distribution_rules50 as D50
from pubproof.model import flow_rules, flow_rules50
from pubproof.model.distribution import DistributionModel
from pubproof.model.distribution_rules import cite
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Delivery, Shape
from pubproof.model.messages import Copy, Message
from pubproof.model.subscriptions import ServerConfig

V50 = Edition.V50
#: a PUBLISH's properties a server forwards unchanged, with the rule that says so (5.0)
FORWARDED = (
    ("payload_format_indicator", D50.PAYLOAD_FORMAT),
    ("response_topic", D50.RESPONSE_TOPIC),
    ("correlation_data_hex", D50.CORRELATION_DATA),
    ("user_properties", D50.USER_PROPERTY_ORDER),
    ("content_type", D50.CONTENT_TYPE),
)
#: QoS 2, the receiver of a PUBLISH until its PUBREL: "It MUST NOT cause duplicate messages
#: to be delivered to any onward recipients" (3.1.1 [MQTT-4.3.3-2], 5.0 [MQTT-4.3.3-10])
QOS2_ONCE = {False: flow_rules.QOS2_RECEIVER.id_for(Edition.V311),
             True: flow_rules50.QOS2_UNTIL_PUBREL.id_for(Edition.V50)}  # fmt: skip
#: the Message Expiry Interval a copy carries may be off by this many seconds from the
#: model's, which counts the wait on the links' clock, not the server's
EXPIRY_SLACK = 1
#: a copy owed to one session: (edition, message seq, client identifier)
CopyKey = tuple[Edition, int, str]


@dataclass(slots=True)
class Link:
    """One link: whose it is, and what is under way on it."""

    conn: str
    client_id: str | None = None
    edition: Edition | None = None
    clean: bool = True
    session_expiry: int = 0
    #: 5.0: the client's Maximum Packet Size (CONNECT), None for no limit
    maximum_packet_size: int | None = None
    #: 5.0: the client's Receive Maximum (CONNECT, 65,535 when absent); None in 3.x, which
    #: has no flow control
    receive_maximum: int | None = None
    connected: bool = False
    #: a capture's: the link's CONNECT and accepting CONNACK were seen, for a new session
    #: (Session Present 0), and nothing of it was lost since: every subscription of its
    #: session is known
    whole: bool = False
    #: a capture's: the capture lost part of the link's traffic since its CONNECT
    lossy: bool = False
    aliases: dict[str, dict[int, str]] = field(default_factory=lambda: {C2S: {}, S2C: {}})
    subscribing: dict[int, Event] = field(default_factory=dict)  # packet id -> SUBSCRIBE
    unsubscribing: dict[int, Event] = field(default_factory=dict)

    @property
    def key(self) -> tuple[Edition, str] | None:
        """Its session's key, once its CONNECT is seen."""
        if self.edition is None or self.client_id is None:
            return None
        return self.edition, self.client_id


@dataclass(slots=True)
class Flows:
    """What is under way between one session and the server, across its links (a session
    that outlives a link resumes its flows on the next [MQTT-4.4.0-1])."""

    #: QoS 1 and 2 PUBLISH received and not yet owned: packet id -> (PUBLISH, re-sent)
    inbound: dict[int, tuple[Event, int]] = field(default_factory=dict)
    #: QoS 2 messages owned, their PUBREL not yet received: packet id -> message seq
    released: dict[int, int] = field(default_factory=dict)
    #: copies sent and not yet acknowledged: packet id -> copy id, and the client's answer
    #: its flow awaits (PUBACK; PUBREC, then PUBCOMP)
    outbound: dict[int, int] = field(default_factory=dict)
    awaiting: dict[int, str] = field(default_factory=dict)
    #: 5.0: the packet identifiers of every QoS 1 and 2 PUBLISH the server sent the client
    #: and has not had acknowledged (a copy the judge matched or not), and the Receive
    #: Maximum of the session's latest link (None: 3.x, no flow control). A flow the server
    #: must re-send on a resumed session keeps its slot: its re-send takes it again.
    unacknowledged: set[int] = field(default_factory=set)
    receive_maximum: int | None = None

    @property
    def quota_full(self) -> bool:
        """Whether the server's send quota towards the client is used up: [MQTT-3.3.4-9]
        "The Server MUST NOT send more than Receive Maximum QoS 1 and QoS 2 PUBLISH
        packets for which it has not received PUBACK, PUBCOMP, or PUBREC with a Reason
        Code of 128 or greater from the Client", so a QoS 1 or 2 copy owed then waits."""
        maximum = self.receive_maximum
        return maximum is not None and len(self.unacknowledged) >= maximum


@dataclass(slots=True)
class MessageRecord:
    """A message the server took ownership of, and what was seen of its copies."""

    message: Message
    edition: Edition
    received: Event  # the publisher's PUBLISH
    owned: Event  # the event at which the server took ownership
    deliveries: dict[str, Delivery]  # client identifier -> what its session is owed
    shared: tuple[Any, ...]
    #: QoS 1: how often the publisher sent it again before the PUBACK ("at least once": the
    #: server may take each as a new message, so as many more copies are allowed)
    resent: int = 0
    #: QoS 2: the publisher's PUBREL reached the server. Until then a server of Method A
    #: (store the message, deliver on PUBREL) has not taken it, so no copy is owed for
    #: certain; one of Method B (deliver on PUBLISH) may already have sent its copies
    released: bool = True
    uncertain: set[str] = field(default_factory=set)  # sessions that changed meanwhile
    #: a capture's: another PUBLISH the judge does not follow as this model's message has
    #: the same topic and payload, so its copies cannot be told apart: not judged
    ambiguous: bool = False
    #: sessions a matching subscription of which gave no copy (No Local): client -> (rule,
    #: why); a copy to one is a finding, none is a pass
    excluded: dict[str, tuple[str, str]] = field(default_factory=dict)
    expired: set[str] = field(default_factory=set)  # sessions whose copy expired unsent
    seen: dict[str, list[tuple[Shape, Event]]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """A change to a session's subscriptions or connection, from the event that asks for it
    to the event that answers it (:class:`Changes`)."""

    client_id: str
    since: int  # the order of the request's event


class Changes:
    """The sessions' changes (a CONNECT, a SUBSCRIBE, an UNSUBSCRIBE, to its answer), as
    the judge asks of them: which were under way while a message was in flight.

    Those not answered yet are kept by client, those answered in the order they were
    answered (the events' order), so that a message asks only of the
    changes answered since it was received, not of every change the judgement saw (each
    message walked them all: a fifth of the judge's time on 1,000,000 synthetic frames,
    where a topic's judgement sees about 2,000 changes)."""

    __slots__ = ("answered", "open", "untils")

    def __init__(self) -> None:
        self.open: dict[str, list[Change]] = {}  # by client, not answered yet
        self.answered: list[Change] = []  # in the order answered
        self.untils: list[int] = []  # the order of each one's answer (so increasing)

    def asked(self, client_id: str, since: int) -> None:
        """A client asked for a change at the event ``since``."""
        self.open.setdefault(client_id, []).append(Change(client_id=client_id, since=since))

    def answered_at(self, client_id: str | None, order: int) -> None:
        """The changes a client asked for are answered at the event ``order`` (later than
        every answer before it)."""
        for change in self.open.pop(client_id or "", ()):
            self.answered.append(change)
            self.untils.append(order)

    def during(self, received: int, owned: int) -> set[str]:
        """The clients with a change under way while a message was in flight (received at
        the event ``received``, owned at ``owned``): asked no later than it was owned,
        and not answered before it was received."""
        found = {c.client_id for changes in self.open.values() for c in changes if c.since <= owned}
        start = bisect.bisect_left(self.untils, received)
        found.update(c.client_id for c in self.answered[start:] if c.since <= owned)
        return found


class Report:
    """The findings of one judgement, each naming the rule, the role ``server``, the source
    ``distribution`` and its evidence (the events of the links involved); passes only where
    asked for."""

    def __init__(self, *, passes: bool = False) -> None:
        self.passes = passes
        self.findings: list[Finding] = []

    def found(
        self,
        verdict: str,
        rule: Any,
        edition: Edition,
        message: str,
        events: tuple[Event, ...],
        *,
        rule_id: str | None = None,
        rule_ids: tuple[str, ...] = (),
    ) -> None:
        """A finding of ``rule`` (a registered rule, cited in ``edition``), or of the ids
        given."""
        ids = rule_ids or ((rule_id,) if rule_id else (cite(rule, edition),))
        self.findings.append(
            Finding(
                verdict=verdict, rules=ids, message=message, source=Source.DISTRIBUTION,
                role="server", evidence=tuple(e.evidence() for e in events),
            )
        )  # fmt: skip

    def passed(
        self, edition: Edition, message: str, rule_ids: Iterable[str], events: tuple[Event, ...]
    ) -> None:
        """What the server did as the model says: a pass naming the rules that decided it
        (only when asked for)."""
        if self.passes:
            ids = tuple(dict.fromkeys(rule_ids))
            self.found(PASS, None, edition, message, events, rule_ids=ids or ("",))


def waiting_for_quota(
    flows: Mapping[tuple[Edition, str], Flows],
    models: Mapping[Edition, DistributionModel],
    messages: Mapping[tuple[Edition, int], MessageRecord],
    only: tuple[Edition, str] | None = None,
) -> set[CopyKey]:
    """5.0: the copies of each message to each session (``only``: to that one) whose send
    quota is used up (:attr:`Flows.quota_full`), connected or not, that may still be
    waiting for it, as [MQTT-3.3.4-9] says a QoS 1 or 2 PUBLISH must: a QoS 1 or 2 copy
    the model still owes (not missing), and a message the session got so far only at a QoS
    below the highest its subscriptions give (its copy at that QoS may be the one waiting:
    the copies seen are not all the session gets)."""
    waiting: set[CopyKey] = set()
    chosen = flows.items() if only is None else [(only, flows[only])] if only in flows else []
    for (edition, client_id), each in chosen:
        model = models.get(edition)
        session = None if model is None else model.sessions.get(client_id)
        if session is None or not each.quota_full:
            continue
        waiting.update(
            (edition, copy.message.seq, client_id) for copy in session.pending if copy.qos > 0
        )
        for (kind, seq), record in messages.items():
            delivery = record.deliveries.get(client_id)
            seen = record.seen.get(client_id)
            if kind is not edition or delivery is None or not seen:
                continue
            if max(shape.qos for shape, _ in seen) < delivery.highest_qos:
                waiting.add((edition, seq, client_id))
    return waiting


class JudgeState(Protocol):
    """What the judge's helper modules (:mod:`.distribution_capture`,
    :mod:`.distribution_copies`, :mod:`.distribution_inflight`) read and write of the judge
    (:class:`pubproof.judge.distribution.DistributionJudge`)."""

    readings: dict[str, str]
    config: ServerConfig
    report: Report
    ledger: Ledger
    #: a capture's: the topic name and payload of each PUBLISH a client sent that did not
    #: become a message the judge follows
    unfollowed: Counter[tuple[str, str]]
    retained_changes: dict[str, list[tuple[Edition, float]]]
    patience: float
    now: float
    models: dict[Edition, DistributionModel]
    links: dict[str, Link]
    messages: dict[tuple[Edition, int], MessageRecord]
    may_miss: set[tuple[Edition, int]]
    owed_at: dict[tuple[Edition, int], Event]
    latest: dict[tuple[Any, ...], tuple[int, Event]]
    messages_of: dict[int, int]
    sent_keys: set[CopyKey]
    copy_outcomes: dict[CopyKey, str]
    complete: bool
    capture: bool
    by_content: dict[tuple[Edition, str, str], list[MessageRecord]]
    withheld: dict[tuple[Edition, str, int], tuple[str, ...]]
    displaced: dict[tuple[Edition, int], tuple[str, ...]]
    gone: dict[tuple[Edition, str, int], tuple[str, ...]]
    retained_open: dict[tuple[Edition, str], list[MessageRecord]]
    retained_order: dict[tuple[Edition, str, int], Copy]
    unordered: set[tuple[Edition, int]]

    flows: dict[tuple[Edition, str], Flows]
    sent: dict[tuple[Edition, str], list[Copy]]
    copy_events: dict[tuple[Edition, str, int], Event]
    copy_messages: dict[tuple[Edition, int], int]

    #: the sessions' changes (a CONNECT, a SUBSCRIBE, to their answers)
    changes: Changes
    #: the 5.0 sessions whose Session Expiry Interval has passed by the events' clock
    lapsed: set[tuple[Edition, str]]
    #: the copies that may have waited for a send quota when their session ended
    quota_spared: set[CopyKey]
    #: each link's CONNECT
    connects: dict[str, Event]

    def _model(self, edition: Edition) -> DistributionModel: ...

    def _settle(self, client_id: str | None, order: int) -> None: ...

    def _topic(self, link: Link, direction: str, packet: Mapping[str, Any]) -> str | None: ...

    def _own(self, link: Link, received: Event, owned: Event, *, resent: int = 0) -> int | None: ...
